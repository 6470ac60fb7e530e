package workflow

import (
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
)

// HandEdit is what a change of state.json made outside taskie means for
// the review counters (HandEditReset).
type HandEdit struct {
	State *state.State // the state to act on: cur with the counters started
	Field string       // the field the edit moved: current_task or phase
	Reset []string     // the counters started, in state.json's order
}

// HandEditReset starts the review counters after a hand edit of
// state.json, as `taskie start` and `taskie set current_task` start them
// (docs/hook.md): logged is the state the log's last commit wrote, cur the
// file as found. When cur moved current_task, or moved phase into another
// review series, each counter it left as logged had it (phase_iteration,
// consecutive_clean, review_model, needs_human) starts afresh; a counter
// edited too is the editor's choice and stays. nil when nothing starts:
// no such move, or every counter already fresh or edited. cur is not
// modified.
func HandEditReset(logged, cur *state.State, models []domain.Model) *HandEdit {
	if logged == nil || cur == nil {
		return nil
	}
	field := ""
	switch {
	case logged.Task() != cur.Task():
		field = "current_task"
	case logged.Phase != cur.Phase && seriesOf(cur) != "" && seriesOf(cur) != seriesOf(logged):
		field = "phase"
	default:
		return nil
	}
	n := cur.Clone()
	var reset []string
	if cur.PhaseIteration != nil && cur.Iteration() != 0 && logged.PhaseIteration != nil && cur.Iteration() == logged.Iteration() {
		n.PhaseIteration = state.Int(0)
		reset = append(reset, "phase_iteration")
	}
	if cur.ConsecutiveClean != 0 && cur.ConsecutiveClean == logged.ConsecutiveClean {
		n.ConsecutiveClean = 0
		reset = append(reset, "consecutive_clean")
	}
	if first := FirstModel(models); cur.ReviewModel != first && cur.ReviewModel == logged.ReviewModel {
		n.ReviewModel = first
		reset = append(reset, "review_model")
	}
	if cur.NeedsHuman && logged.NeedsHuman {
		// Moving on is the decision (settleNeedsHuman): the flag would stop
		// the new cycle's reviews.
		n.NeedsHuman = false
		reset = append(reset, "needs_human")
	}
	if len(reset) == 0 {
		return nil
	}
	return &HandEdit{State: n, Field: field, Reset: reset}
}

// seriesOf names the review series phase p of s belongs to: a review, its
// post-review and the phase that leads to it (new-plan to plan-review,
// create-tasks to tasks-review, an implementing phase to its task's
// code-review); "" for complete.
func seriesOf(s *state.State) string {
	var r domain.Phase
	switch p := s.Phase; {
	case domain.IsReview(p):
		r = p
	case domain.IsPostReview(p):
		r = domain.ReviewOf(p)
	case p == domain.NewPlan:
		r = domain.PlanReview
	case p == domain.CreateTasks:
		r = domain.TasksReview
	case domain.IsImplementing(p):
		r = domain.CodeReview
	default:
		return ""
	}
	if r == domain.CodeReview {
		return string(r) + " " + s.Task().String()
	}
	return string(r)
}
