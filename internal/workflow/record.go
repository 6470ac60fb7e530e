package workflow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
)

// Record returns the state after "taskie done p": phase p is recorded as
// finished and, in automated mode (next_phase set, or auto), next_phase
// becomes what follows p. s is not modified.
func Record(s *state.State, p domain.Phase, auto bool, models []domain.Model) (*state.State, error) {
	n := s.Clone()
	if p == domain.Complete && s.Next() == domain.Complete {
		n.Phase, n.NextPhase = domain.Complete, nil
		return n, nil
	}
	if err := CheckMove(s.Phase, p); err != nil {
		return nil, err
	}
	if domain.IsImplementing(p) && n.Task() == 0 {
		return nil, fmt.Errorf("no current task: run `taskie start <task>` first")
	}
	automated := auto || s.Next() != ""
	n.Phase, n.NextPhase = p, nil
	if automated {
		n.NextPhase = state.Opt(AutoNext(p))
	}
	if automated && (p == domain.NewPlan || p == domain.CreateTasks) {
		ResetCycle(n, models)
	}
	settleNeedsHuman(s, n)
	return n, nil
}

// Start returns the state after starting task t (docs/state-machine.md): the implementing
// phase, current_task and, in automated mode, a fresh code-review cycle.
func Start(s *state.State, task domain.TaskID, auto bool, models []domain.Model) (*state.State, error) {
	p := ImplementPhase(s.TDD)
	if err := CheckMove(s.Phase, p); err != nil {
		return nil, err
	}
	n := s.Clone()
	n.Phase, n.CurrentTask, n.NextPhase = p, state.Opt(task), nil
	if auto {
		n.NextPhase = state.Opt(domain.CodeReview)
	}
	ResetCycle(n, models)
	return n, nil
}

// Settable lists the fields "taskie set" may change.
var Settable = []string{"phase", "next_phase", "current_task", "max_reviews", "phase_iteration",
	"review_model", "consecutive_clean", "tdd", "enabled", "session_id"}

// Set returns the state with one field changed, after checking the value.
// "null" (or "") clears nullable fields. Phase changes must be legal moves.
func Set(s *state.State, field, value string) (*state.State, error) {
	n := s.Clone()
	null := value == "" || value == "null"
	switch field {
	case "phase":
		if err := CheckMove(s.Phase, domain.Phase(value)); err != nil {
			return nil, err
		}
		n.Phase = domain.Phase(value)
	case "next_phase":
		if !null && !domain.IsNextPhase(domain.Phase(value)) {
			next := append(slices.Clone(domain.Phases), domain.CompleteTask, domain.CompleteTaskTDD)
			if s := Nearest(value, phaseNames(next)); s != "" {
				return nil, fmt.Errorf("unknown next_phase %q; did you mean %q?", value, s)
			}
			return nil, fmt.Errorf("unknown next_phase %q; use null or one of %s", value, quoteList(append(slices.Clone(domain.Phases), domain.CompleteTask, domain.CompleteTaskTDD)))
		}
		n.NextPhase = nil
		if !null {
			n.NextPhase = state.Opt(domain.Phase(strings.TrimSpace(value)))
		}
	case "current_task":
		n.CurrentTask = nil
		if !null {
			id, err := domain.ParseTaskID(value)
			if err != nil {
				return nil, fmt.Errorf("%s must be a positive integer, got %q", field, value)
			}
			n.CurrentTask = &id
		}
		if n.Task() != s.Task() && n.PhaseIteration != nil {
			// phase_iteration resets when current_task changes.
			n.PhaseIteration, n.ConsecutiveClean = state.Int(0), 0
		}
	case "max_reviews", "consecutive_clean", "phase_iteration":
		if field == "phase_iteration" && null {
			n.PhaseIteration = nil
			break
		}
		v, err := nonNegative(field, value)
		if err != nil {
			return nil, err
		}
		switch field {
		case "max_reviews":
			n.MaxReviews = v
		case "consecutive_clean":
			n.ConsecutiveClean = v
		default:
			n.PhaseIteration = state.Int(v)
		}
	case "review_model":
		if null {
			return nil, fmt.Errorf("review_model cannot be empty")
		}
		n.ReviewModel = domain.Model(value)
	case "tdd", "enabled":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("%s must be true or false, got %q", field, value)
		}
		if field == "tdd" {
			n.TDD = b
		} else {
			n.Enabled = &b
		}
	case "session_id":
		if n.SessionID = value; null {
			n.SessionID = ""
		}
	default:
		if s := Nearest(field, Settable); s != "" {
			return nil, fmt.Errorf("cannot set %q; did you mean %q?", field, s)
		}
		return nil, fmt.Errorf("cannot set %q; settable fields: %s", field, strings.Join(Settable, ", "))
	}
	settleNeedsHuman(s, n)
	return n, nil
}

// CycleOf names the review cycle a plan's automation is in: the review
// next_phase runs (or returns to, after a post-review) and, for
// code-review, the task. review is "" outside every review cycle.
func CycleOf(s *state.State) (review domain.Phase, task domain.TaskID) {
	review = s.Next()
	if !domain.IsReview(review) {
		review = domain.ReviewOf(review)
	}
	switch review {
	case "":
		return "", 0
	case domain.CodeReview:
		return review, s.Task()
	}
	return review, 0
}

// LeftCycle reports whether the change from → to leaves the review cycle
// from was in: next_phase no longer runs its review (another review, a
// task to start, null), the task changed, or phase_iteration went back to
// 0 (a fresh cycle).
func LeftCycle(from, to *state.State) bool {
	r, t := CycleOf(from)
	if r == "" {
		return false
	}
	r2, t2 := CycleOf(to)
	return r2 != r || t2 != t || (to.Iteration() == 0 && from.Iteration() > 0)
}

// settleNeedsHuman clears needs_human when the change s → n left the
// review cycle that stopped for a human: moving on is the decision, and a
// flag left set would stop the next cycle's reviews and keep asking for
// `taskie resume`.
func settleNeedsHuman(s, n *state.State) {
	if n.NeedsHuman && LeftCycle(s, n) {
		n.NeedsHuman = false
	}
}

func nonNegative(field, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be an integer ≥ 0, got %q", field, v)
	}
	return n, nil
}

// Check returns every problem with a state's values (validation rule 8).
// current_task needs no check: Decode refuses one that is no task id.
func Check(s *state.State) []string {
	var out []string
	if !domain.IsPhase(s.Phase) {
		out = append(out, fmt.Sprintf("unknown phase %q", s.Phase))
	}
	if n := s.Next(); n != "" && !domain.IsNextPhase(n) {
		out = append(out, fmt.Sprintf("unknown next_phase %q", n))
	}
	if s.PhaseIteration != nil && *s.PhaseIteration < 0 {
		out = append(out, fmt.Sprintf("phase_iteration must be ≥ 0, got %d", *s.PhaseIteration))
	}
	if s.ReviewModel == "" {
		out = append(out, "review_model is empty")
	}
	return out
}

// Lint is validation rule 8: Check, and a phase_iteration above
// max_reviews, which the Stop hook refuses to review from. taskie set
// accepts one (the cap may be lowered mid-cycle), so replay must too:
// only validation reports it.
func Lint(s *state.State) []string {
	out := Check(s)
	if s.PhaseIteration != nil && *s.PhaseIteration > s.MaxReviews {
		out = append(out, fmt.Sprintf("phase_iteration %d is above max_reviews (%d): the Stop hook runs no review from it; set it within 0…%d (`taskie set phase_iteration N`) or raise max_reviews",
			*s.PhaseIteration, s.MaxReviews, s.MaxReviews))
	}
	return out
}
