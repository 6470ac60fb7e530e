package cli

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/taskie-dev/taskie/internal/state"
)

// TestStatusReadsThePlanOnce: `taskie status` shows the plan and the
// needs-you list of every plan; the plan it shows is read once, not once
// more for the list (on 10,000 tasks each read of a plan is most of the
// command's time, docs/performance.md).
func TestStatusReadsThePlanOnce(t *testing.T) {
	for _, k := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME"} {
		t.Setenv(k, t.TempDir())
	}
	t.Setenv("TASKIE_DATABASE_URL", "")
	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md":    "# Plan\n",
		".taskie/plans/p/tasks.md":   "| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | one |\n",
		".taskie/plans/p/state.json": `{"phase": "next-task", "next_phase": null, "current_task": "1", "max_reviews": 8}` + "\n",
	})
	t.Chdir(dir)
	var decodes atomic.Int64
	defer state.SetDecodeHook(func(string) { decodes.Add(1) })()
	if code := Run([]string{"status", "--json"}, Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}); code != 0 {
		t.Fatalf("taskie status --json: exit %d", code)
	}
	if n := decodes.Load(); n != 1 {
		t.Errorf("state.json decoded %d times, want 1", n)
	}
}
