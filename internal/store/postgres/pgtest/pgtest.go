// Package pgtest starts a throwaway PostgreSQL server for tests and
// benchmarks: Debian's postgresql package (or TASKIE_PG_BIN), a cluster in
// a temporary directory, a free port on 127.0.0.1 only, no fsync. A test
// binary starts one server, the first time a test asks for a database, and
// stops it when its tests end (Main). Where no server can be started the
// tests that need one skip, saying why; with TASKIE_PG_REQUIRED=1 (CI)
// they fail instead.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables.
const (
	// BinEnv names the directory of initdb and postgres, when they are
	// neither in /usr/lib/postgresql/<version>/bin nor on PATH.
	BinEnv = "TASKIE_PG_BIN"
	// RequiredEnv=1 makes a server that cannot be started a failure
	// instead of a skip.
	RequiredEnv = "TASKIE_PG_REQUIRED"
)

// StartTimeout bounds the wait for a new server to accept connections.
const StartTimeout = 20 * time.Second

// Server is a running throwaway PostgreSQL server.
type Server struct {
	dir  string // cluster, socket and log, removed by Stop
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the server process has exited
	dbs  atomic.Int64
	bin  string   // directory of initdb and postgres
	cred *owner   // the user the server runs as (nil: this one)
	args []string // the server's command line, kept for Restart

	mu    sync.Mutex
	admin *pgx.Conn // to the postgres database, for CREATE DATABASE
}

// Options change the throwaway server.
type Options struct {
	// Durable keeps fsync and synchronous commits on, as a production
	// server has them (benchmarks); tests run without.
	Durable bool
	// CrashSafe keeps synchronous commits on (fsync stays off): a commit
	// answered is in the log the server recovers from after Restart, which
	// stops it as a crash would. Without it a commit of the last few
	// hundred milliseconds is lost in a restart, as asynchronous commits
	// are (tests that restart the server and count what was answered need it).
	CrashSafe bool
}

// Start makes a cluster in a new temporary directory and starts a server
// on it, on a free port of 127.0.0.1 (and a socket in the directory), as
// the postgres user when run as root. It gives up after StartTimeout.
func Start(opts Options) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "taskie-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, done: make(chan struct{}), bin: bin, cred: cred}
	if err := s.start(opts); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(opts Options) error {
	if s.cred != nil {
		if err := os.Chown(s.dir, s.cred.uid, s.cred.gid); err != nil {
			return err
		}
	}
	data := filepath.Join(s.dir, "data")
	initdb := exec.Command(filepath.Join(s.bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = procAttr(s.cred)
	initdb.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := runBounded(initdb, time.Minute); err != nil {
		return fmt.Errorf("initdb: %v: %s", err, lastLines(out, 5))
	}
	var err error
	if s.port, err = freePort(); err != nil {
		return err
	}
	s.args = []string{"-D", data, "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"}
	switch {
	case opts.Durable:
	case opts.CrashSafe:
		s.args = append(s.args, "-c", "fsync=off", "-c", "full_page_writes=off")
	default:
		s.args = append(s.args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	return s.launch()
}

// launch starts the server process on the cluster and waits until it
// accepts connections.
func (s *Server) launch() error {
	log, err := os.OpenFile(filepath.Join(s.dir, "log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), s.args...)
	s.cmd.SysProcAttr = procAttr(s.cred)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.Env = append(os.Environ(), "LC_ALL=C")
	started := make(chan error)
	cmd, done := s.cmd, s.done
	go func() {
		// The kernel kills the server when the thread that started it
		// ends (Pdeathsig), and Go ends threads: this one lives until the
		// server has exited.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		close(done)
		return fmt.Errorf("starting postgres: %w", err)
	}
	return s.waitReady()
}

// waitReady connects until the server answers, the server exits, or
// StartTimeout passes.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(StartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			s.admin = conn
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited at start: %s", s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within %s: %v; %s", StartTimeout, err, s.logTail())
		}
	}
}

func (s *Server) logTail() string {
	data, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	return lastLines(data, 5)
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// PID is the server's process id (its postmaster): benchmarks read the
// CPU time of the server processes it reaped from it.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// URL is the URL of database db on the server, as the postgres superuser.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDB creates an empty database and returns its URL.
func (s *Server) NewDB(ctx context.Context) (string, error) {
	name := fmt.Sprintf("taskie_%d", s.dbs.Add(1))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admin == nil {
		return "", errors.New("the server is stopped")
	}
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// Exec runs sql as the superuser on the postgres database (tests use it
// to end other connections).
func (s *Server) Exec(ctx context.Context, sql string, args ...any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admin == nil {
		return errors.New("the server is stopped")
	}
	_, err := s.admin.Exec(ctx, sql, args...)
	return err
}

// Restart stops the server as a crash would (SIGQUIT: pg_ctl stop -m
// immediate, every connection cut, no checkpoint) and starts it again on
// the same cluster and port; the new server recovers from its WAL. It
// returns once the server accepts connections again, or StartTimeout has
// passed.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admin != nil {
		closeQuietly(s.admin)
		s.admin = nil
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("the server is not running")
	}
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	killGroup(s.cmd.Process.Pid)
	s.done = make(chan struct{})
	return s.launch()
}

// Stop shuts the server down at once (SIGQUIT: pg_ctl stop -m immediate),
// killing it after 5 s, and removes its directory.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.admin != nil {
		closeQuietly(s.admin)
		s.admin = nil
	}
	s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
		killGroup(s.cmd.Process.Pid) // any child the server left behind
	}
	// A child still exiting may write a last file: try again a few times.
	for range 20 {
		if os.RemoveAll(s.dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func closeQuietly(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.Close(ctx)
}

// findBin finds the directory of initdb and postgres: TASKIE_PG_BIN, the
// newest /usr/lib/postgresql/<version>/bin, or PATH.
func findBin() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("%s=%s has no initdb", BinEnv, d)
		}
		return d, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	if len(found) > 0 {
		return filepath.Dir(found[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, postgres) in /usr/lib/postgresql/*/bin or on PATH; install Debian's postgresql package or set " + BinEnv)
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// runBounded runs cmd and returns its output, killing it after d. It runs
// on a thread of its own, which lives as long as cmd (see start).
func runBounded(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			done <- err
			return
		}
		timer := time.AfterFunc(d, func() { cmd.Process.Kill() })
		defer timer.Stop()
		done <- cmd.Wait()
	}()
	err := <-done
	return out.Bytes(), err
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// The server of the test binary, started on first use.
var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns the test binary's server, starting it the first time.
func Shared() (*Server, error) {
	sharedOnce.Do(func() { shared, sharedErr = Start(Options{}) })
	return shared, sharedErr
}

// Main runs the tests of m and then stops the shared server, if one was
// started: a package's TestMain is os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	return code
}

// Need returns the test binary's server, or ends the test: a skip naming
// why no server could be started, or with TASKIE_PG_REQUIRED=1 a failure.
func Need(t testing.TB) *Server {
	t.Helper()
	s, err := Shared()
	if err != nil {
		unavailable(t, err)
	}
	return s
}

// StartFor starts a server for test t alone, stopped when t ends; where
// none can be started it ends t as Need does.
func StartFor(t testing.TB) *Server {
	t.Helper()
	return StartForWith(t, Options{})
}

// StartForWith is StartFor with options.
func StartForWith(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.Stop)
	return s
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequiredEnv) == "1" {
		t.Fatalf("PostgreSQL is required (%s=1) but could not be started: %v", RequiredEnv, err)
	}
	t.Skipf("no PostgreSQL server for this test: %v", err)
}

// DB returns the URL of a new empty database on the test binary's server
// (see Need).
func DB(t testing.TB) string {
	t.Helper()
	s := Need(t)
	url, err := s.NewDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}
