package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// installHint is how to get the real client the tests need.
const installHint = "install it with `bash e2e/install-claude.sh`"

// skipped lists the real-client tests that skipped, and why, so that
// TestMain can say so even without -v: a suite that silently skips every
// real-client test looks green and proves nothing.
var skipped struct {
	sync.Mutex
	tests []skip
}

type skip struct{ test, reason string }

// skipTest skips t and records it for TestMain's report.
func skipTest(t *testing.T, reason string) {
	t.Helper()
	skipped.Lock()
	skipped.tests = append(skipped.tests, skip{t.Name(), reason})
	skipped.Unlock()
	t.Skip(reason)
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The tests run in parallel, their clients in at most -parallel lanes
	// (default GOMAXPROCS), the longest-running test first (queue): the
	// testing package itself may run them all at once, or it would pick
	// the order.
	p := flag.Lookup("test.parallel")
	lanes.free, _ = strconv.Atoi(p.Value.String())
	lanes.free = max(lanes.free, 1)
	if err := p.Value.Set("1000"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(2)
	}
	code := m.Run()
	cleanupShared()
	reportSkips()
	os.Exit(code)
}

// reportSkips prints one line per distinct reason on stderr (shown by
// `go test` with or without -v), and appends one line per skipped test to
// the file named by TASKIE_SKIPLOG, if set (the Makefile collects it).
func reportSkips() {
	skipped.Lock()
	defer skipped.Unlock()
	if len(skipped.tests) == 0 {
		return
	}
	var reasons []string
	byReason := map[string][]string{}
	for _, s := range skipped.tests {
		if byReason[s.reason] == nil {
			reasons = append(reasons, s.reason)
		}
		byReason[s.reason] = append(byReason[s.reason], s.test)
	}
	for _, r := range reasons {
		fmt.Fprintf(os.Stderr, "e2e: SKIPPED %d real-client test(s) (%s): %s\n", len(byReason[r]), strings.Join(byReason[r], ", "), r)
	}
	path := os.Getenv("TASKIE_SKIPLOG")
	if path == "" {
		return
	}
	var b strings.Builder
	for _, s := range skipped.tests {
		fmt.Fprintf(&b, "e2e %s: %s\n", s.test, s.reason)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.WriteString(b.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: writing TASKIE_SKIPLOG %s: %v\n", path, err)
	}
}

// build is the taskie binary the tests share, built once per test binary.
var build struct {
	once sync.Once
	dir  string
	err  error
}

// buildTaskie builds the taskie binary into a directory of its own (once
// for all tests), which goes first on PATH so the plugin's `taskie hook …`
// commands find it.
func buildTaskie(t *testing.T, root string) string {
	t.Helper()
	build.once.Do(func() {
		defer openLanes()
		build.dir, build.err = os.MkdirTemp("", "taskie-e2e-bin-")
		if build.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(build.dir, "taskie"), "./cmd/taskie")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/taskie: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.dir
}

// lanes are the slots in which the tests run their clients: at most as
// many tests as -parallel says (default GOMAXPROCS) run at once, and the
// test that usually runs longest goes first, so that the whole-plan test does not
// start last. None runs before the build of taskie is done, by when every
// test has joined the queue.
var lanes struct {
	sync.Mutex
	free    int
	open    bool // the build is done
	waiting []*waiter
}

type waiter struct {
	typical time.Duration
	granted chan struct{}
}

// queue waits for a lane for t and holds it until t ends. typical is how
// long t usually takes (it orders the queue). The build of taskie (once
// for all tests) happens first; queue returns its directory.
func queue(t *testing.T, root string, typical time.Duration) string {
	t.Helper()
	w := &waiter{typical: typical, granted: make(chan struct{})}
	lanes.Lock()
	lanes.waiting = append(lanes.waiting, w)
	lanes.Unlock()
	queued := time.Now()
	var granted time.Time
	t.Cleanup(func() { // the last cleanup: after the processes are ended
		leave(w)
		if !granted.IsZero() {
			t.Logf("lane: %s waited %s, ran %s", t.Name(), granted.Sub(queued).Round(100*time.Millisecond), time.Since(granted).Round(100*time.Millisecond))
		}
	})
	bin := buildTaskie(t, root)
	<-w.granted
	granted = time.Now()
	return bin
}

// leave gives w's lane back, or takes w out of the queue.
func leave(w *waiter) {
	lanes.Lock()
	defer lanes.Unlock()
	select {
	case <-w.granted:
		lanes.free++
	default:
		for i, o := range lanes.waiting {
			if o == w {
				lanes.waiting = append(lanes.waiting[:i], lanes.waiting[i+1:]...)
				break
			}
		}
	}
	dispatch()
}

func openLanes() {
	lanes.Lock()
	defer lanes.Unlock()
	lanes.open = true
	dispatch()
}

// dispatch gives the free lanes to the tests that usually run longest
// (the first to join among equals). The caller holds the lock.
func dispatch() {
	for lanes.open && lanes.free > 0 && len(lanes.waiting) > 0 {
		next := 0
		for i, w := range lanes.waiting {
			if w.typical > lanes.waiting[next].typical {
				next = i
			}
		}
		w := lanes.waiting[next]
		lanes.waiting = append(lanes.waiting[:next], lanes.waiting[next+1:]...)
		lanes.free--
		close(w.granted)
	}
}

func cleanupShared() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}
