package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
)

func TestHandEditReset(t *testing.T) {
	models := []domain.Model{"opus", "sonnet"}
	// Task 1's code review passed twice: the hook advanced to complete-task.
	passed := mkState(domain.CodeReview, domain.CompleteTask, 1, 2, "opus", 2)
	tests := []struct {
		name        string
		logged, cur *state.State
		want        *HandEdit // nil: nothing starts
	}{
		{"no log", nil, passed, nil},
		{"no file", passed, nil, nil},
		{"nothing moved", passed, with(passed, func(s *state.State) { s.MaxReviews = 9 }), nil},
		{"current_task moved, counters left: they start",
			passed, mkState(domain.NextTask, domain.CodeReview, 2, 2, "opus", 2),
			&HandEdit{State: mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), Field: "current_task", Reset: []string{"phase_iteration", "consecutive_clean"}}},
		{"the model the rotation left starts at its first",
			mkState(domain.CodeReview, domain.CodeReview, 1, 1, "sonnet", 1), mkState(domain.NextTask, domain.CodeReview, 2, 1, "sonnet", 1),
			&HandEdit{State: mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), Field: "current_task", Reset: []string{"phase_iteration", "consecutive_clean", "review_model"}}},
		{"a counter edited too is the editor's choice",
			passed, mkState(domain.NextTask, domain.CodeReview, 2, 1, "opus", 2),
			&HandEdit{State: mkState(domain.NextTask, domain.CodeReview, 2, 1, "opus", 0), Field: "current_task", Reset: []string{"consecutive_clean"}}},
		{"counters edited to fresh values: nothing to start",
			passed, mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), nil},
		{"current_task cleared", passed, mkState(domain.CodeReview, domain.CompleteTask, 0, 2, "opus", 2),
			&HandEdit{State: mkState(domain.CodeReview, domain.CompleteTask, 0, 0, "opus", 0), Field: "current_task", Reset: []string{"phase_iteration", "consecutive_clean"}}},
		{"phase_iteration null stays null",
			mkState(domain.NextTask, "", 1, -1, "opus", 1), mkState(domain.NextTask, "", 2, -1, "opus", 1),
			&HandEdit{State: mkState(domain.NextTask, "", 2, -1, "opus", 0), Field: "current_task", Reset: []string{"consecutive_clean"}}},
		{"a stale needs_human is cleared",
			with(passed, func(s *state.State) { s.NeedsHuman = true }), with(mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), func(s *state.State) { s.NeedsHuman = true }),
			&HandEdit{State: mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), Field: "current_task", Reset: []string{"needs_human"}}},
		{"phase into another review series",
			mkState(domain.PostPlanReview, domain.PlanReview, 0, 2, "sonnet", 1), mkState(domain.CreateTasks, domain.TasksReview, 0, 2, "sonnet", 1),
			&HandEdit{State: mkState(domain.CreateTasks, domain.TasksReview, 0, 0, "opus", 0), Field: "phase", Reset: []string{"phase_iteration", "consecutive_clean", "review_model"}}},
		{"phase within its series: the cycle goes on",
			mkState(domain.CodeReview, domain.PostCodeReview, 1, 1, "sonnet", 0), mkState(domain.PostCodeReview, domain.CodeReview, 1, 1, "sonnet", 0), nil},
		{"implementing phase of the same task: its code review's series",
			mkState(domain.PostCodeReview, domain.CodeReview, 1, 1, "sonnet", 0), mkState(domain.ContinueTask, domain.CodeReview, 1, 1, "sonnet", 0), nil},
		{"phase to complete: no series to start",
			mkState(domain.PostAllCodeReview, domain.AllCodeReview, 0, 1, "sonnet", 0), mkState(domain.Complete, "", 0, 1, "sonnet", 0), nil},
		{"phase from the code review to the final review",
			mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), mkState(domain.AllCodeReview, domain.PostAllCodeReview, 3, 2, "opus", 1),
			&HandEdit{State: mkState(domain.AllCodeReview, domain.PostAllCodeReview, 3, 0, "opus", 0), Field: "phase", Reset: []string{"phase_iteration", "consecutive_clean"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *HandEdit
			unchanged(t, tc.cur, func() { got = HandEditReset(tc.logged, tc.cur, models) })
			if d := cmp.Diff(tc.want, got, stateOpts); d != "" {
				t.Errorf("HandEditReset (-want +got):\n%s", d)
			}
		})
	}
}
