package cli

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
)

// syncBuffer is a bytes.Buffer safe to write from one goroutine while
// another reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With the PostgreSQL store, `taskie watch` wakes on the store's
// notification: a claim made meanwhile shows within 2 s although the
// period is 30 s (piped, no file is watched).
func TestWatchWakesOnNotify(t *testing.T) {
	t.Setenv(store.DatabaseURLEnv, migratedDB(t))
	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md":    "# Plan\n",
		".taskie/plans/p/tasks.md":   "| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | one |\n",
		".taskie/plans/p/task-1.md":  "# Task 1\n",
		".taskie/plans/p/state.json": `{"max_reviews": 8, "current_task": null, "phase": "next-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}`,
		".taskie/config.json":        `{"project": "example.com/team/app"}`,
	})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if code := Run([]string{"-C", dir, "trust"}, Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}); code != 0 {
		t.Fatal("taskie trust failed")
	}
	var out syncBuffer
	var errb bytes.Buffer
	s := &Streams{Out: &out, Err: &errb}
	o := &watchOpts{s: s, g: &globals{dir: dir, s: s}, ctx: context.Background(), interval: 30 * time.Second, limit: 4 * time.Second}
	done := make(chan error, 1)
	go func() { done <- runWatch(o) }()
	waitOut := func(what string, limit time.Duration) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !strings.Contains(out.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q within %s; watch printed:\n%s\nstderr: %s", what, limit, out.String(), errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitOut("plan p", 5*time.Second)
	time.Sleep(300 * time.Millisecond) // the listener is up
	cs, _, cerr := testStreams("")
	if code := Run([]string{"claim", "1", "--as", "agent-a", "-C", dir}, *cs); code != 0 {
		t.Fatalf("claim: exit %d: %s", code, cerr)
	}
	claimed := time.Now()
	waitOut("agent-a (claimed", 2*time.Second)
	t.Logf("shown %s after the claim", time.Since(claimed).Round(time.Millisecond))
	if n := strings.Count(out.String(), "\n=== "); n != 1 {
		t.Errorf("%d snapshots after the first; want 1:\n%s", n, out.String())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
