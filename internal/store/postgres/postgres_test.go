package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
	"github.com/taskie-dev/taskie/internal/store/storetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(claimerEnv) == "1" {
		os.Exit(claimer())
	}
	os.Exit(pgtest.Main(m))
}

var (
	ctx     = context.Background()
	project = "example.com/org/repo"
	key     = store.PlanKey{Project: project, Plan: "p"}
)

// migrated returns the URL of a new database with taskie's schema.
func migrated(t *testing.T) string {
	t.Helper()
	url := pgtest.DB(t)
	s, err := Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return url
}

// open opens a Store on url, closed at the end of the test.
func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the coordination stores' suite against PostgreSQL:
// one database per case; the clock moves by a skew every handle of the
// case adds to the database's clock.
func TestConformance(t *testing.T) {
	pgtest.Need(t) // one skip for the whole suite where no server can start
	type fixture struct {
		url     string
		skew    time.Duration
		handles []*Store
	}
	var mu sync.Mutex
	fixtures := map[*testing.T]*fixture{}
	get := func(t *testing.T) *fixture {
		mu.Lock()
		f := fixtures[t]
		mu.Unlock()
		if f == nil {
			f = &fixture{url: migrated(t)}
			mu.Lock()
			fixtures[t] = f
			mu.Unlock()
		}
		return f
	}
	storetest.Run(t, storetest.Harness{
		Project: project,
		Open: func(t *testing.T) store.Coordination {
			f := get(t)
			s, err := Open(ctx, f.url)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			s.skew.Store(int64(f.skew))
			f.handles = append(f.handles, s)
			return s
		},
		Advance: func(t *testing.T, d time.Duration) {
			f := get(t)
			mu.Lock()
			defer mu.Unlock()
			f.skew += d
			for _, s := range f.handles {
				s.skew.Store(int64(f.skew))
			}
		},
	})
}

func TestMigrateTwiceAndAtOnce(t *testing.T) {
	url := pgtest.DB(t)
	const machines = 4
	type result struct{ from, to int }
	results := make([]result, machines)
	var wg sync.WaitGroup
	for i := range machines {
		s, err := Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		wg.Go(func() {
			from, to, err := s.Migrate(ctx)
			if err != nil {
				t.Error(err)
			}
			results[i] = result{from, to}
		})
	}
	wg.Wait()
	applied := 0
	for _, r := range results {
		switch r {
		case result{0, Latest()}:
			applied++
		case result{Latest(), Latest()}:
		default:
			t.Errorf("migration from %d to %d", r.from, r.to)
		}
	}
	if applied != 1 {
		t.Errorf("%d machines applied the migrations, want 1: %v", applied, results)
	}
	s := open(t, url)
	if from, to, err := s.Migrate(ctx); err != nil || from != Latest() || to != Latest() {
		t.Errorf("migrating again: %d → %d, %v", from, to, err)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != Latest() {
		t.Errorf("schema version %d, %v; want %d", v, err, Latest())
	}
}

// Open sends nothing (a claim is one round trip after the connection):
// the first statement on a database without the schema says what to do.
func TestOpenWithoutSchema(t *testing.T) {
	url := pgtest.DB(t)
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, _, err = s.ClaimNextLife(ctx, store.PlanKey{Project: "p", Plan: "x"}, []domain.TaskID{1}, nil, "a", time.Minute, domain.Fence{}, store.LifeMoves{})
	if !errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), "taskie store migrate") {
		t.Errorf("a claim on an empty database: %v", err)
	}
}

// A failed migration leaves the schema as it was: every step is in one
// transaction.
func TestMigrationFailureLeavesNothing(t *testing.T) {
	url := pgtest.DB(t)
	s, err := Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A table in the way of migration 1 makes it fail half-way.
	if err := s.do(ctx, "setup", func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "CREATE TABLE taskie_events (x int)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "0001_init.sql") {
		t.Fatalf("migration over a conflicting table: %v", err)
	}
	var tables []string
	s.do(ctx, "check", func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'taskie%' ORDER BY 1")
		if err != nil {
			return err
		}
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if strings.Join(tables, ",") != "taskie_events" {
		t.Errorf("tables after a failed migration: %v", tables)
	}
}

// Leases expire by the database's clock, not by a skew: a real 1 s lease.
func TestLeaseExpiresByDatabaseClock(t *testing.T) {
	url := migrated(t)
	a, b := open(t, url), open(t, url)
	d, err := a.Claim(ctx, key, 1, "a", time.Second)
	if err != nil || d.Outcome != parallel.Granted {
		t.Fatalf("claim: %v %v", d.Outcome, err)
	}
	var dbNow time.Time
	a.do(ctx, "now", func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, "SELECT now()").Scan(&dbNow)
	})
	if diff := dbNow.Sub(d.Claim.Acquired); diff < -time.Second || diff > time.Second {
		t.Errorf("acquired %v, database clock %v", d.Claim.Acquired, dbNow)
	}
	if d, _ := b.Claim(ctx, key, 1, "b", time.Minute); d.Outcome != parallel.Refused {
		t.Fatalf("claim of a live lease: %v", d.Outcome)
	}
	time.Sleep(time.Until(d.Claim.Expires.Add(50 * time.Millisecond)))
	d, err = b.Claim(ctx, key, 1, "b", time.Minute)
	if err != nil || d.Outcome != parallel.Takeover || d.Previous.Agent != "a" {
		t.Fatalf("claim of an expired lease: %+v %v", d, err)
	}
	var kinds []string
	b.ScanEvents(ctx, key, func(e events.Event) { kinds = append(kinds, e.Event) })
	if strings.Join(kinds, ",") != "CLAIM,CLAIM_TAKEOVER" {
		t.Errorf("events %v", kinds)
	}
}

// Two clones' plans share claims only within one project.
func TestProjectsIsolated(t *testing.T) {
	s := open(t, migrated(t))
	for _, proj := range []string{"example.com/a", "example.com/b"} {
		d, err := s.Claim(ctx, store.PlanKey{Project: proj, Plan: "p"}, 1, "agent-"+proj, time.Minute)
		if err != nil || d.Outcome != parallel.Granted {
			t.Errorf("claim in %s: %v %v", proj, d.Outcome, err)
		}
	}
	if _, err := s.Claim(ctx, store.PlanKey{Plan: "p"}, 1, "a", time.Minute); err == nil {
		t.Error("a key without a project was accepted")
	}
}

// A connection killed in the middle of a transaction (after its writes,
// before COMMIT) leaves the plan as it was: no claim, no renewal, no
// release, no event; the error names the database without its password.
func TestKilledMidTransaction(t *testing.T) {
	srv := pgtest.Need(t)
	url := strings.Replace(migrated(t), "postgres@", "postgres:s3cret@", 1)
	held := func(s *Store, k store.PlanKey) {
		if _, err := s.Claim(ctx, k, 1, "a", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	ops := []struct {
		name  string
		setup func(s *Store, k store.PlanKey)
		run   func(s *Store, k store.PlanKey) error
	}{
		{"claim", nil, func(s *Store, k store.PlanKey) error { _, err := s.Claim(ctx, k, 1, "a", time.Minute); return err }},
		{"claim next", nil, func(s *Store, k store.PlanKey) error {
			_, _, err := s.ClaimNext(ctx, k, []domain.TaskID{1, 2}, "a", time.Minute)
			return err
		}},
		{"append", nil, func(s *Store, k store.PlanKey) error {
			return s.AppendEvents(ctx, k, events.Event{Event: store.EventTaskResult, Task: "1"})
		}},
		{"heartbeat", held, func(s *Store, k store.PlanKey) error {
			_, err := s.Heartbeat(ctx, k, 1, "a", time.Hour)
			return err
		}},
		{"release", held, func(s *Store, k store.PlanKey) error { _, err := s.Release(ctx, k, 1, "a"); return err }},
	}
	for i, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			k := store.PlanKey{Project: project, Plan: fmt.Sprintf("killed-%d", i)}
			s := open(t, url)
			if op.setup != nil {
				op.setup(s, k)
			}
			check := open(t, url)
			before, err := readPlanData(check, k)
			if err != nil {
				t.Fatal(err)
			}
			s.beforeCommit = func(ctx context.Context, conn *pgx.Conn) error {
				return srv.Exec(ctx, "SELECT pg_terminate_backend($1)", conn.PgConn().PID())
			}
			err = op.run(s, k)
			if err == nil {
				t.Fatal("the operation succeeded on a killed connection")
			}
			msg := err.Error()
			if strings.Contains(msg, "s3cret") || !strings.Contains(msg, "postgres:xxxxx@127.0.0.1") {
				t.Errorf("error %q: want the URL without its password", msg)
			}
			// The next operation on the dead connection is a clear error too.
			if _, err := s.Claims(ctx, k); err == nil || !strings.Contains(err.Error(), "connection") {
				t.Errorf("after the kill: %v", err)
			}
			after, err := readPlanData(check, k)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(before, after) {
				t.Errorf("the plan changed:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// readPlanData reads a plan's claims and coordination events.
func readPlanData(s *Store, k store.PlanKey) (store.PlanData, error) {
	return store.ReadPlan(ctx, s, k)
}

// A connection dropped between two commands: the next one is an error
// naming the database, never a hang.
func TestDroppedBetweenCommands(t *testing.T) {
	srv := pgtest.Need(t)
	s := open(t, migrated(t))
	var pid uint32
	s.do(ctx, "pid", func(ctx context.Context, conn *pgx.Conn) error { pid = conn.PgConn().PID(); return nil })
	if err := srv.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := s.Claim(ctx, key, 1, "a", time.Minute)
	if err == nil || !strings.Contains(err.Error(), s.URL()) || !strings.Contains(err.Error(), "claiming task 1 of plan p") {
		t.Errorf("claim on a dropped connection: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the failure took %s", time.Since(start))
	}
}

// A database that cannot be reached is an error naming it without its
// password, within the connect timeout: refused at once, or silent.
func TestUnreachable(t *testing.T) {
	refused := freePort(t)
	silent, stop := silentListener(t)
	defer stop()
	for _, c := range []struct {
		name, url, want string
	}{
		{"refused", fmt.Sprintf("postgres://u:s3cret@127.0.0.1:%d/db?sslmode=disable", refused), "connection refused"},
		{"silent", fmt.Sprintf("postgres://u:s3cret@%s/db?sslmode=disable&connect_timeout=60", silent), "no answer within 3s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := Open(ctx, c.url)
			took := time.Since(start)
			if err == nil {
				t.Fatal("connected")
			}
			msg := err.Error()
			if strings.Contains(msg, "s3cret") || !strings.Contains(msg, "postgres://u:xxxxx@127.0.0.1") || !strings.Contains(msg, c.want) {
				t.Errorf("error %q", msg)
			}
			if took > ConnectTimeout+time.Second {
				t.Errorf("gave up after %s, want ≤ %s", took, ConnectTimeout)
			}
		})
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// silentListener accepts connections on 127.0.0.1 and never answers.
func silentListener(t *testing.T) (addr string, stop func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return l.Addr().String(), func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
}

// Watch wakes a watcher for every change of its plan made on another
// connection, and not for another plan's.
func TestWatch(t *testing.T) {
	url := migrated(t)
	a, b := open(t, url), open(t, url)
	wctx, cancel := context.WithCancel(ctx)
	ch, err := a.Watch(wctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(ctx, store.PlanKey{Project: project, Plan: "other"}, 1, "b", time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Error("woken by another plan's claim")
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := b.Claim(ctx, key, 1, "b", time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up within 5 s of a claim")
	}
	cancel()
	select {
	case _, open := <-ch:
		if open {
			<-ch
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel stayed open after the context ended")
	}
}

// Import and export move a plan's coordination data between the file
// store and PostgreSQL without loss: files → database → other files are
// byte for byte the files it started from.
func TestFileRoundTrip(t *testing.T) {
	pg := open(t, migrated(t))
	src, dst := fileStore(t), fileStore(t)
	fk := store.PlanKey{Plan: "p"}
	for i, agent := range []string{"a", "b", "c"} {
		if _, err := src.Claim(ctx, fk, domain.TaskID(i+1), agent, time.Duration(i+1)*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	src.Release(ctx, fk, 2, "b")
	src.AppendEvents(ctx, fk, events.Event{Event: store.EventTaskResult, Task: "1", Actor: "a",
		Meta: map[string]any{"status": "complete", "commit": "abc", "attempt": 1}})
	if _, err := store.CopyPlan(ctx, src, fk, pg, key, false); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CopyPlan(ctx, src, fk, pg, key, false); !errors.Is(err, store.ErrNotEmpty) {
		t.Errorf("a second import over the data: %v", err)
	}
	moved, err := store.CopyPlan(ctx, pg, key, dst, fk, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved.Claims) != 2 || len(moved.Events) != 5 {
		t.Errorf("exported %d claims and %d events, want 2 and 5", len(moved.Claims), len(moved.Events))
	}
	for _, name := range []string{store.ClaimsName, store.CoordLogName} {
		want, _ := os.ReadFile(src.Dir(fk) + "/" + name)
		got, err := os.ReadFile(dst.Dir(fk) + "/" + name)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s after the round trip (%v):\n%s\nwant:\n%s", name, err, got, want)
		}
	}
}

func fileStore(t *testing.T) *store.FileCoord {
	c, err := store.OpenFileCoord(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c.Durable = false
	t.Cleanup(func() { c.Close() })
	return c
}
