package hook

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/benchfix"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

var (
	fakeOnce sync.Once
	fakeDir  string
	fakeErr  error
)

// fakeReviewer builds the fake reviewer once and returns the directory
// that holds it as claude.
func fakeReviewer(tb testing.TB) string {
	tb.Helper()
	fakeOnce.Do(func() {
		if fakeDir, fakeErr = os.MkdirTemp("", "taskie-hook-fake-*"); fakeErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(fakeDir, "claude"), "../testtools/fakereviewer").CombinedOutput()
		if err != nil {
			fakeErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if fakeErr != nil {
		tb.Fatalf("building the fake reviewer: %v", fakeErr)
	}
	return fakeDir
}

// stopCounts is what one Stop did to its plan's files.
type stopCounts struct {
	PlanLocks, StateDecodes int64
}

// reviewStop sets up a plan whose next step is its plan review, with the
// fake reviewer answering PASS.
func reviewStop(tb testing.TB, setenv func(k, v string)) (root string, run func() (stopCounts, string)) {
	tb.Helper()
	bin := fakeReviewer(tb)
	home := tb.TempDir()
	setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	setenv("HOME", home)
	setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	setenv("CLAUDECODE", "")
	setenv("TASKIE_HOOK_SKIP", "")
	setenv("FAKE_REVIEW_SCRIPT", filepath.Join(home, "verdicts"))
	if err := os.WriteFile(filepath.Join(home, "verdicts"), []byte("PASS\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	root = tb.TempDir()
	in := []byte(fmt.Sprintf(`{"session_id":"s1","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop"}`, root))
	run = func() (stopCounts, string) {
		tb.Helper()
		dir := filepath.Join(root, ".taskie", "plans", "p")
		if err := os.RemoveAll(filepath.Join(root, ".taskie")); err != nil {
			tb.Fatal(err)
		}
		for name, text := range map[string]string{
			"plan.md":    "# P\n\nA plan.\n",
			"state.json": `{"max_reviews": 8, "current_task": null, "phase": "new-plan", "phase_iteration": null, "next_phase": "plan-review", "review_model": "opus", "consecutive_clean": 0, "tdd": false}` + "\n",
		} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		var locks, decodes atomic.Int64
		planLock := filepath.Join(dir, store.LockName)
		restoreLock := fsafe.SetLockHook(func(path string) {
			if path == planLock {
				locks.Add(1)
			}
		})
		restoreDecode := state.SetDecodeHook(func(string) { decodes.Add(1) })
		var out, errOut bytes.Buffer
		code := Stop(Env{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errOut, Getenv: os.Getenv, InputDeadline: time.Second})
		restoreDecode()
		restoreLock()
		if code != 0 && code != 2 {
			tb.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "plan-review-1.md")); err != nil {
			tb.Fatalf("no review ran: %v\n%s%s", err, out.String(), errOut.String())
		}
		return stopCounts{locks.Load(), decodes.Load()}, out.String() + errOut.String()
	}
	return root, run
}

// One Stop that runs a review takes the plan lock at most twice (the
// review's start and its result) and decodes state.json once.
func TestStopWithReviewLocksAndDecodes(t *testing.T) {
	_, run := reviewStop(t, t.Setenv)
	got, out := run()
	if !strings.Contains(out, "plan-post-review") {
		t.Errorf("the stop did not ask for the post-review:\n%s", out)
	}
	if got.PlanLocks > 2 || got.StateDecodes > 1 {
		t.Errorf("one stop with a review: %d plan locks, %d state.json decodes; want at most 2 and 1", got.PlanLocks, got.StateDecodes)
	}
}

// BenchmarkStopWithReview is one Stop that runs a plan review (the fake
// reviewer answers PASS), reporting the plan locks and state.json decodes
// per stop.
func BenchmarkStopWithReview(b *testing.B) {
	_, run := reviewStop(b, b.Setenv)
	var total stopCounts
	n := 0
	for b.Loop() {
		got, _ := run()
		total.PlanLocks += got.PlanLocks
		total.StateDecodes += got.StateDecodes
		n++
	}
	b.ReportMetric(float64(total.PlanLocks)/float64(n), "planlocks/op")
	b.ReportMetric(float64(total.StateDecodes)/float64(n), "decodes/op")
}

// A stop with nothing due lists its plan's directory once: validation and
// the review files read the same listing (a plan of many tasks holds
// thousands of names).
func TestStopNothingDueListsThePlanOnce(t *testing.T) {
	root := t.TempDir()
	dir, err := benchfix.Plan(root, 20, 40)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var lists atomic.Int64
	restore := fsafe.SetListHook(func(path string) {
		if filepath.Clean(path) == dir {
			lists.Add(1)
		}
	})
	in := []byte(fmt.Sprintf(`{"session_id":"s1","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop"}`, root))
	var out, errOut bytes.Buffer
	code := Stop(Env{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, InputDeadline: time.Second})
	restore()
	if code != 0 || out.Len() != 0 || errOut.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q: want a silent allow", code, out.String(), errOut.String())
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("the stop listed the plan directory %d times, want 1", n)
	}
}
