// Package postgres is the PostgreSQL implementation of store.Coordination
// (docs/fleet.md): the claims, leases and coordination events of plans shared
// by agents on several machines, each in its own clone. Plan content keeps
// travelling through git.
//
// A claim locks its task's row (SELECT … FOR UPDATE, or FOR UPDATE SKIP
// LOCKED to claim the next ready task), decides with package parallel's
// policy on the database's clock, and writes the claim, its event and a
// NOTIFY in the same transaction: a transaction cut off half-way leaves
// nothing behind. The schema comes from versioned migrations embedded in
// the binary (Migrate).
package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/taskie-dev/taskie/internal/store"
)

// ConnectTimeout bounds a connection attempt, whatever the URL's
// connect_timeout says: the hook must never wait longer (docs/fleet.md#when-something-fails).
const ConnectTimeout = 3 * time.Second

// OpTimeout bounds one operation whose context has no deadline, so that a
// server gone silent (a network cut without a reset) is an error, never a
// hang.
var OpTimeout = 30 * time.Second

// Channel is the NOTIFY channel of every change; the payload is
// "<project>/<plan>".
const Channel = "taskie"

func init() {
	open := func(ctx context.Context, url string) (store.Coordination, error) { return Open(ctx, url) }
	store.RegisterCoordination("postgres", open)
	store.RegisterCoordination("postgresql", open)
}

// Store is a connection to a taskie database. It is safe for concurrent
// use; its operations take turns on the one connection (a command makes a
// few). Open one Store per agent process.
type Store struct {
	mu   sync.Mutex
	conn *pgx.Conn
	cfg  *pgx.ConnConfig
	url  string // redacted, for messages

	// skew moves the database clock, in nanoseconds: tests expire leases
	// with it instead of sleeping.
	skew atomic.Int64
	// beforeCommit, when set, runs inside every claim transaction just
	// before COMMIT (tests cut connections there).
	beforeCommit func(ctx context.Context, conn *pgx.Conn) error
}

var _ store.Coordination = (*Store)(nil)

// Open connects to the database at url. It sends no statement: a claim
// is one round trip after the connection (docs/fleet.md), so the schema is
// checked by the statements themselves — a database without taskie's
// tables is ErrNoSchema, one older than this taskie ErrSchemaOlder, each
// saying to run `taskie store migrate`.
func Open(ctx context.Context, url string) (*Store, error) {
	return Connect(ctx, url)
}

// ErrNoSchema is the error of a database taskie's schema is not in yet.
var ErrNoSchema = errors.New("no taskie schema in this database; run `taskie store migrate` once")

// ErrSchemaOlder is the error of a statement that needs a newer schema
// than the database's: a column or function it names is not there yet.
var ErrSchemaOlder = errors.New("the database's schema is older than this taskie; run `taskie store migrate` (every taskie of the fleet keeps working on the newer schema)")

// Connect connects to the database at url without looking at its schema
// (for migrations and status). It gives up after ConnectTimeout.
func Connect(ctx context.Context, url string) (*Store, error) {
	red := store.RedactURL(url)
	cfg, err := parseConfig(url, red)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectErr(red, err)
	}
	return &Store{conn: conn, cfg: cfg, url: red}, nil
}

// parseConfig reads url as pgx does, with the connect timeout capped and
// taskie named as the application.
func parseConfig(url, red string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message quotes the URL; its cause does not.
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			err = pe.Unwrap()
		} else if errors.As(err, &pe) {
			err = errors.New("malformed")
		}
		return nil, fmt.Errorf("%s: not a usable PostgreSQL URL: %v", red, err)
	}
	if cfg.ConnectTimeout <= 0 || cfg.ConnectTimeout > ConnectTimeout {
		cfg.ConnectTimeout = ConnectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "taskie"
	}
	preferTLS(cfg)
	if !strings.Contains(url, "default_query_exec_mode") {
		// A command runs each statement once: one round trip each, no
		// statement prepared for a connection about to close. (This also
		// suits poolers in transaction mode.)
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	return cfg, nil
}

// preferTLS makes sslmode=prefer (libpq's default, when the URL gives no
// sslmode) cost one connection, as libpq's does: TLS is asked for on the
// connection itself, which goes on in plain text when the server says no.
// pgx instead connects once with TLS and, refused, connects again without
// it: a second TCP handshake, server process and round trips on every
// command of a server without TLS (most on a private network). A TLS
// connection that then fails is still retried in plain text, as prefer
// says. Left to pgx: several hosts, sockets, client certificates
// required, direct TLS negotiation, and every other sslmode.
func preferTLS(cfg *pgx.ConnConfig) {
	t := cfg.TLSConfig
	if t == nil || len(cfg.Fallbacks) != 1 || cfg.AfterNetConnect != nil || cfg.SSLNegotiation == "direct" ||
		(cfg.SSLCertMode != "" && cfg.SSLCertMode != "allow") {
		return
	}
	fb := cfg.Fallbacks[0]
	if fb.TLSConfig != nil || fb.Host != cfg.Host || fb.Port != cfg.Port || strings.HasPrefix(cfg.Host, "/") {
		return
	}
	asked := false // only the first connection asks; the fallback is plain
	cfg.TLSConfig = nil
	cfg.AfterNetConnect = func(ctx context.Context, _ *pgconn.Config, conn net.Conn) (net.Conn, error) {
		if asked {
			return conn, nil
		}
		asked = true
		return startTLS(ctx, conn, t)
	}
}

// startTLS asks the server for TLS on conn (an SSLRequest): answered S,
// the TLS handshake follows; N, conn goes on as it is.
func startTLS(ctx context.Context, conn net.Conn, t *tls.Config) (net.Conn, error) {
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
		defer conn.SetDeadline(time.Time{})
	}
	if _, err := conn.Write([]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}); err != nil { // length 8, code 80877103
		return nil, err
	}
	var answer [1]byte
	if _, err := io.ReadFull(conn, answer[:]); err != nil {
		return nil, err
	}
	switch answer[0] {
	case 'N':
		return conn, nil
	case 'S':
	default:
		return nil, fmt.Errorf("the server answered %q to the TLS request", answer[0])
	}
	tc := tls.Client(conn, t)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return tc, nil
}

// connectErr words a failed connection: the URL without its password, and
// pgx's reason without its own prefix.
func connectErr(red string, err error) error {
	var ce *pgconn.ConnectError
	reason := err.Error()
	if errors.As(err, &ce) && ce.Unwrap() != nil {
		reason = ce.Unwrap().Error()
	}
	if errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		reason = fmt.Sprintf("no answer within %s (%s)", ConnectTimeout, reason)
	}
	return fmt.Errorf("%s: cannot connect to the coordination database: %s", red, oneLine(reason))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// URL returns the database URL without its password.
func (s *Store) URL() string { return s.url }

// Close closes the connection.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.conn.Close(ctx)
}

// do runs fn on the connection, alone, bounded by OpTimeout when ctx has
// no deadline; an error names the URL and what was being done.
func (s *Store) do(ctx context.Context, what string, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, OpTimeout)
		defer cancel()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := fn(ctx, s.conn); err != nil {
		return s.wrap(what, err)
	}
	return nil
}

// tx runs fn in a transaction: committed when fn returns nil, else rolled
// back. Nothing fn wrote survives an error, a cut connection included.
// When fn reports a change, the plan's watchers are notified after the
// commit (notify).
func (s *Store) tx(ctx context.Context, what string, p store.PlanKey, fn func(ctx context.Context, tx pgx.Tx) (changed bool, err error)) error {
	return s.do(ctx, what, func(ctx context.Context, conn *pgx.Conn) error {
		changed := false
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			var err error
			if changed, err = fn(ctx, tx); err != nil {
				return err
			}
			if s.beforeCommit != nil {
				return s.beforeCommit(ctx, conn)
			}
			return nil
		})
		if err == nil && changed {
			notify(ctx, conn, p)
		}
		return err
	})
}

// notifySQL wakes the watchers of a plan. It runs after the change's own
// commit, alone and without waiting for the disk: NOTIFY serialises the
// commits of every transaction that sends one, and inside the change's
// transaction it would make concurrent claims wait for each other's flush.
// A notification lost in a crash costs a watcher one poll.
const notifySQL = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`

// notify sends the plan's notification; its failure changes nothing
// already committed, so it is not reported.
func notify(ctx context.Context, conn *pgx.Conn, p store.PlanKey) {
	conn.Exec(ctx, notifySQL, Channel, payload(p))
}

// ErrConnLost is the error of a connection to the database that was lost
// during an operation: the server rolled back the transaction in flight.
var ErrConnLost = errors.New("the connection to the coordination database was lost")

// serverError is an error the server answered; its text is the server's
// without its "ERROR: " prefix.
type serverError struct {
	msg string
	pe  *pgconn.PgError
}

func (e *serverError) Error() string { return e.msg }
func (e *serverError) Unwrap() error { return e.pe }

// IsFailure reports whether err is the database's failure — a lost
// connection, an error the server answered, a newer schema — rather than
// bad input to taskie.
func IsFailure(err error) bool {
	var pe *pgconn.PgError
	return errors.Is(err, ErrConnLost) || errors.Is(err, ErrSchemaNewer) || errors.Is(err, ErrNoSchema) || errors.Is(err, ErrSchemaOlder) || errors.As(err, &pe)
}

// wrap names the database (without password) and the operation in err;
// a lost connection says so in words.
func (s *Store) wrap(what string, err error) error {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "42P01":
		return fmt.Errorf("%s: %s: %w", s.url, what, ErrNoSchema)
	case errors.As(err, &pe) && pe.Code == "42703":
		return fmt.Errorf("%s: %s: %w (%s)", s.url, what, ErrSchemaOlder, pe.Message)
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %s: %w", s.url, what, &serverError{msg: strings.Replace(err.Error(), "ERROR: ", "", 1), pe: pe})
	case s.conn.IsClosed() || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%s: %s: %w: %v", s.url, what, ErrConnLost, err)
	}
	return fmt.Errorf("%s: %s: %w", s.url, what, err)
}

// skewMicros is the test clock offset in microseconds, for SQL.
func (s *Store) skewMicros() int64 { return s.skew.Load() / int64(time.Microsecond) }

// nowSQL is the coordination clock in SQL: the database's, moved by the
// test skew ($n, microseconds).
func nowSQL(n int) string {
	// strconv, not fmt: the statements built from it are package variables,
	// built when any taskie process starts.
	return "(clock_timestamp() + $" + strconv.Itoa(n) + "::bigint * interval '1 microsecond')"
}

// Now is the database's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	err := s.do(ctx, "reading the clock", func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, "SELECT "+nowSQL(1), s.skewMicros()).Scan(&now)
	})
	return now.UTC(), err
}
