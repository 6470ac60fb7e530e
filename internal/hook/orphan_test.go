package hook

import (
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
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
