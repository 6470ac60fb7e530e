package cli

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// TestViewsDoNotListThePlan: status, ready and groups read tasks.md,
// state.json and the task files they show by name, never the listing of
// the plan directory, which a plan of 10,000 tasks fills with 60,000 names
// (docs/performance.md); validate lists it, which shows the count sees a
// listing.
func TestViewsDoNotListThePlan(t *testing.T) {
	for _, k := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME"} {
		t.Setenv(k, t.TempDir())
	}
	t.Setenv("TASKIE_DATABASE_URL", "")
	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md": "# Plan\n",
		".taskie/plans/p/tasks.md": "| Id | Status | Title | Depends on |\n|----|--------|-------|------------|\n" +
			"| 1 | done | one | |\n| 2 | pending | two | 1 |\n| 3 | pending | three | 2 |\n",
		".taskie/plans/p/state.json":         `{"max_reviews": 8, "current_task": "1", "phase": "next-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}` + "\n",
		".taskie/plans/p/task-1.md":          "# Task 1\n",
		".taskie/plans/p/task-2.md":          "# Task 2\n\nEdit `internal/x2/x.go`.\n",
		".taskie/plans/p/task-3.md":          "# Task 3\n",
		".taskie/plans/p/task-1-review-1.md": "review\n",
	})
	t.Chdir(dir)
	pd := filepath.Join(dir, ".taskie", "plans", "p")
	listed := func(args ...string) bool {
		t.Helper()
		var n atomic.Int64
		restore := fsafe.SetListHook(func(path string) {
			if filepath.Clean(path) == pd {
				n.Add(1)
			}
		})
		defer restore()
		var out, errb strings.Builder
		if code := Run(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 && args[0] != "validate" {
			t.Fatalf("taskie %s: exit %d: %s%s", strings.Join(args, " "), code, out.String(), errb.String())
		}
		return n.Load() > 0
	}
	if !listed("validate") {
		t.Fatal("validate did not list the plan directory: the count sees no listing")
	}
	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"ready"}, {"groups"}} {
		if listed(args...) {
			t.Errorf("taskie %s listed the plan directory", strings.Join(args, " "))
		}
	}
}
