package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/workflow"
)

func TestOrphaned(t *testing.T) {
	ev := func(kind, review, task string, it float64) events.Event {
		// As read back from events.jsonl: numbers are float64.
		return events.Event{Event: kind, Task: task, Meta: map[string]any{"review": review, "iteration": it}}
	}
	started := ev(events.ReviewStarted, "plan-review", "", 1)
	for _, tc := range []struct {
		name string
		evs  []events.Event
		want bool
	}{
		{"no event", nil, false},
		{"started, no end: the hook was killed", []events.Event{started}, true},
		{"started then finished", []events.Event{started, ev(events.ReviewFinished, "plan-review", "", 1)}, false},
		{"started then failed", []events.Event{started, ev(events.ReviewFailed, "plan-review", "", 1)}, false},
		{"finished, then started again and killed", []events.Event{started, ev(events.ReviewFinished, "plan-review", "", 1), started}, true},
		{"another iteration's start", []events.Event{ev(events.ReviewStarted, "plan-review", "", 2)}, false},
		{"another review's start", []events.Event{ev(events.ReviewStarted, "tasks-review", "", 1)}, false},
		{"another task's start", []events.Event{ev(events.ReviewStarted, "plan-review", "3", 1)}, false},
		{"an event without meta", []events.Event{{Event: events.ReviewStarted}}, false},
		{"another iteration's end does not end it", []events.Event{started, ev(events.ReviewFinished, "plan-review", "", 2)}, true},
	} {
		if got := Orphaned(tc.evs, domain.PlanReview, 0, 1); got != tc.want {
			t.Errorf("%s: Orphaned = %v, want %v", tc.name, got, tc.want)
		}
	}
	code := []events.Event{ev(events.ReviewStarted, "code-review", "3", 2)}
	if !Orphaned(code, domain.CodeReview, 3, 2) || Orphaned(code, domain.CodeReview, 4, 2) {
		t.Error("a code review's orphan is matched by its task")
	}
}

// setAside moves a file that is no review of this cycle into the log
// directory, headed by why, so no later stop or `taskie continue` adopts it.
func TestSetAsideMovesTheFileToTheLogs(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/p/plan.md":          "# p\n",
		".taskie/plans/p/plan-review-1.md": "orphan review\n",
	})
	fs := openStore(t, root)
	p, err := project.With(fs, "p")
	if err != nil {
		t.Fatal(err)
	}
	h := &stopper{p: p, now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
	d := workflow.StopDecision{Review: domain.PlanReview, Iteration: 1}
	got := h.setAside(d, "plan-review-1.md", "left by a reviewer whose hook was killed")
	if want := filepath.Join(".taskie", "logs", "p-plan-review-1-20261126T100000Z.log"); got != want {
		t.Errorf("setAside = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, ".taskie/plans/p/plan-review-1.md")); !os.IsNotExist(err) {
		t.Errorf("the review file is still in the plan: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(root, got))
	if err != nil {
		t.Fatal(err)
	}
	if want := "--- plan-review-1.md: left by a reviewer whose hook was killed ---\norphan review\n"; string(data) != want {
		t.Errorf("kept log = %q, want %q", data, want)
	}
	// A second orphan of the same review in the same second gets its own log.
	writeFiles(t, root, map[string]string{".taskie/plans/p/plan-review-1.md": "second\n"})
	if again := h.setAside(d, "plan-review-1.md", "again"); again == got || !strings.HasSuffix(again, "-1.log") {
		t.Errorf("second setAside = %q, want a new log next to %q", again, got)
	}
	if got := h.setAside(d, "plan-review-1.md", "nothing there"); got != "(nothing to keep)" {
		t.Errorf("setAside of a missing file = %q", got)
	}
}
