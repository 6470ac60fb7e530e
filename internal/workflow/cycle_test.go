package workflow

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
)

func TestStartsCycle(t *testing.T) {
	implementing2 := mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0)
	tests := []struct {
		name      string
		old, next *state.State
		want      bool
	}{
		{"no state after", implementing2, nil, false},
		{"first state, review next at 0", nil, implementing2, true},
		{"state written whole, review next at 0", nil, mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0), true},
		{"same review, task and iteration", implementing2, with(implementing2, func(s *state.State) { s.MaxReviews = 9 }), false},
		{"another task", mkState(domain.NextTask, domain.CodeReview, 1, 0, "opus", 0), implementing2, true},
		{"another review", mkState(domain.NextTask, domain.AllCodeReview, 2, 0, "opus", 0), implementing2, true},
		{"back to iteration 0", mkState(domain.PostCodeReview, domain.CodeReview, 2, 3, "opus", 0), implementing2, true},
		{"iteration above 0", nil, mkState(domain.PostCodeReview, domain.CodeReview, 2, 1, "opus", 0), false},
		{"no review next", nil, mkState(domain.NewPlan, "", 0, 0, "opus", 0), false},
		{"advance target next", nil, mkState(domain.PostCodeReview, domain.CompleteTask, 2, 0, "opus", 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := StartsCycle(tc.old, tc.next); got != tc.want {
				t.Errorf("StartsCycle = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCycleArchive(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	tests := []struct {
		name   string
		next   *state.State
		series []string
		want   *events.Archive
	}{
		{"nothing to move", mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), nil, nil},
		{"a code review is per task", mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), []string{"task-2-review-1.md", "task-2-post-review-1.md"},
			&events.Archive{Dir: ".taskie/archive/p/task-2-code-review-20260102T020405.000000006Z", Files: []string{"task-2-review-1.md", "task-2-post-review-1.md"}}},
		{"a plan review is per plan", mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0), []string{"plan-review-1.md"},
			&events.Archive{Dir: ".taskie/archive/p/plan-review-20260102T020405.000000006Z", Files: []string{"plan-review-1.md"}}},
		{"the final review names no task", mkState(domain.PostCodeReview, domain.AllCodeReview, 3, 0, "opus", 0), []string{"all-code-review-1.md"},
			&events.Archive{Dir: ".taskie/archive/p/all-code-review-20260102T020405.000000006Z", Files: []string{"all-code-review-1.md"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, CycleArchive("p", tc.next, tc.series, now)); d != "" {
				t.Errorf("CycleArchive (-want +got):\n%s", d)
			}
		})
	}
}

func TestOwnerChange(t *testing.T) {
	owned := func(id string) *state.State {
		return with(mkState(domain.NextTask, "", 2, 0, "opus", 0), func(s *state.State) { s.SessionID = id })
	}
	tests := []struct {
		name      string
		old, next *state.State
		want      *events.Event
	}{
		{"no state after", owned("a"), nil, nil},
		{"same session", owned("a"), owned("a"), nil},
		{"another session", owned("a"), owned("b"), &events.Event{Event: events.OwnerChanged, Actor: "hook", Task: "2", From: "a", To: "b",
			Reason: "session b drives the plan", Meta: map[string]any{"previous": "a"}}},
		{"a first owner", nil, owned("b"), &events.Event{Event: events.OwnerChanged, Actor: "hook", Task: "2", From: "", To: "b",
			Reason: "session b drives the plan", Meta: map[string]any{"previous": ""}}},
		{"no owner before or after", nil, owned(""), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, OwnerChange(tc.old, tc.next, "hook")); d != "" {
				t.Errorf("OwnerChange (-want +got):\n%s", d)
			}
		})
	}
}
