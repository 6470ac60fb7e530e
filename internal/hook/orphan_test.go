package hook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
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

// OrphanedReviews lists every review the log shows started and never
// ended, once, in the order last started: the Stop decision looks them up.
func TestOrphanedReviews(t *testing.T) {
	ev := func(kind, review, task string, it float64) events.Event {
		return events.Event{Event: kind, Task: task, Meta: map[string]any{"review": review, "iteration": it}}
	}
	evs := []events.Event{
		ev(events.ReviewStarted, "code-review", "3", 2),
		ev(events.ReviewStarted, "plan-review", "", 1),
		ev(events.ReviewFinished, "code-review", "3", 2),
		ev(events.ReviewStarted, "code-review", "3", 2),
		ev(events.ReviewStarted, "tasks-review", "2", 1),
		ev(events.ReviewStarted, "all-code-review", "x", 1),
		{Event: events.ReviewStarted, Task: "4"},
	}
	want := []workflow.ReviewAt{
		{Review: domain.PlanReview, N: 1},
		{Review: domain.CodeReview, Task: 3, N: 2},
		{Review: domain.TasksReview, Task: 2, N: 1},
	}
	if diff := cmp.Diff(want, OrphanedReviews(evs)); diff != "" {
		t.Errorf("OrphanedReviews (-want +got):\n%s", diff)
	}
}
