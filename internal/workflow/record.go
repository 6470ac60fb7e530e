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
	set, ok := setterOf(field)
	if !ok {
		if s := Nearest(field, Settable); s != "" {
			return nil, fmt.Errorf("cannot set %q; did you mean %q?", field, s)
		}
		return nil, fmt.Errorf("cannot set %q; settable fields: %s", field, strings.Join(Settable, ", "))
	}
	n := s.Clone()
	if err := set(s, n, setValue{field: field, value: value, null: value == "" || value == "null"}); err != nil {
		return nil, err
	}
	settleNeedsHuman(s, n)
	return n, nil
}

// setValue is the value `taskie set` gives a field; null: "null" or "".
type setValue struct {
	field, value string
	null         bool
}

// setters check a value and set it on n, a clone of s: one per Settable field.
var setters = []struct {
	key string
	fn  func(s, n *state.State, v setValue) error
}{
	{"phase", setPhase},
	{"next_phase", setNextPhase},
	{"current_task", setCurrentTask},
	{"max_reviews", func(_, n *state.State, v setValue) error {
		return setCount(&n.MaxReviews, v)
	}},
	{"consecutive_clean", func(_, n *state.State, v setValue) error {
		return setCount(&n.ConsecutiveClean, v)
	}},
	{"phase_iteration", func(_, n *state.State, v setValue) error {
		if v.null {
			n.PhaseIteration = nil
			return nil
		}
		var it int
		if err := setCount(&it, v); err != nil {
			return err
		}
		n.PhaseIteration = state.Int(it)
		return nil
	}},
	{"review_model", func(_, n *state.State, v setValue) error {
		if v.null {
			return fmt.Errorf("review_model cannot be empty")
		}
		n.ReviewModel = domain.Model(v.value)
		return nil
	}},
	{"tdd", func(_, n *state.State, v setValue) error {
		b, err := parseFlag(v)
		n.TDD = b
		return err
	}},
	{"enabled", func(_, n *state.State, v setValue) error {
		b, err := parseFlag(v)
		n.Enabled = &b
		return err
	}},
	{"session_id", func(_, n *state.State, v setValue) error {
		if n.SessionID = v.value; v.null {
			n.SessionID = ""
		}
		return nil
	}},
}

func setPhase(s, n *state.State, v setValue) error {
	if err := CheckMove(s.Phase, domain.Phase(v.value)); err != nil {
		return err
	}
	n.Phase = domain.Phase(v.value)
	return nil
}

func setNextPhase(_, n *state.State, v setValue) error {
	if !v.null && !domain.IsNextPhase(domain.Phase(v.value)) {
		next := append(slices.Clone(domain.Phases), domain.CompleteTask, domain.CompleteTaskTDD)
		if s := Nearest(v.value, phaseNames(next)); s != "" {
			return fmt.Errorf("unknown next_phase %q; did you mean %q?", v.value, s)
		}
		return fmt.Errorf("unknown next_phase %q; use null or one of %s", v.value, quoteList(next))
	}
	n.NextPhase = nil
	if !v.null {
		n.NextPhase = state.Opt(domain.Phase(strings.TrimSpace(v.value)))
	}
	return nil
}

func setCurrentTask(s, n *state.State, v setValue) error {
	n.CurrentTask = nil
	if !v.null {
		id, err := domain.ParseTaskID(v.value)
		if err != nil {
			return fmt.Errorf("%s must be a positive integer, got %q", v.field, v.value)
		}
		n.CurrentTask = &id
	}
	if n.Task() != s.Task() && n.PhaseIteration != nil {
		// phase_iteration resets when current_task changes.
		n.PhaseIteration, n.ConsecutiveClean = state.Int(0), 0
	}
	return nil
}

// setCount sets a count that must not be negative.
func setCount(dst *int, v setValue) error {
	c, err := nonNegative(v.field, v.value)
	if err != nil {
		return err
	}
	*dst = c
	return nil
}

// parseFlag reads true or false.
func parseFlag(v setValue) (bool, error) {
	b, err := strconv.ParseBool(v.value)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, got %q", v.field, v.value)
	}
	return b, nil
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

// setterOf finds the entry of key in setters: a table the linker lays out, so
// nothing is built at start.
func setterOf(key string) (func(s, n *state.State, v setValue) error, bool) {
	for _, e := range setters {
		if e.key == key {
			return e.fn, true
		}
	}
	return nil, false
}
