package workflow

import (
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// The escalation ladder (docs/lifecycle.md, "The CTO"): three failed
// reviews put the task in cto_intervention and the next stop runs a CTO
// review instead of a code review; two CTO attempts without a pass, the
// review cap or a cycle that does not converge hand the task to a human,
// and the hook stops automating it until `taskie task resolve`.

// TaskLife is the current task's lifecycle state and CTO attempts, read
// from state.json's lifecycle field; "" when the task has no record (or
// the field does not decode: `taskie validate` reports it).
func TaskLife(s *state.State) (lifecycle.State, int) {
	if s == nil || s.Task() <= 0 || len(s.Lifecycle) == 0 {
		return "", 0
	}
	r, ok := taskrec.Find(taskrec.OfFiles(nil, s), s.Task())
	if !ok || !r.Recorded {
		return "", 0
	}
	return r.State, r.Life.CTOAttempts
}

// inCodeCycle reports whether next_phase p is a code review or its
// post-review: the cycle a task's escalation stops.
func inCodeCycle(p domain.Phase) bool {
	return p == domain.CodeReview || p == domain.PostCodeReview
}

// CTO decisions: what a CTO review answers (review.CTODecision).
const (
	CTOGuidedRetry = "guided_retry"
	CTORollback    = "rollback"
	CTOSkip        = "skip"
	CTOEscalate    = "escalate"
)

// CTOOutcome is what carrying out a CTO decision does to the plan.
type CTOOutcome struct {
	// Save is the new state.json (the review cycle moved on for a skip),
	// nil when the cycle continues as it is.
	Save *state.State
	// Block: the agent goes on working with the guidance (guided retry,
	// rollback). Otherwise the stop is allowed: the task passed by the
	// CTO's override (skip) or is with a human (escalate).
	Block bool
	// MarkDone is the task a skip completed: tasks.md says done.
	MarkDone domain.TaskID
	// Target is next_phase after a skip.
	Target domain.Phase
}

// AfterCTO decides what a CTO decision does to the review cycle of state
// s. The lifecycle move (retry, rollback, skip, escalate) is the shell's;
// a skip also ends the task's review cycle as a pass would.
func AfterCTO(s *state.State, decision string, pendingOther bool, models []domain.Model) CTOOutcome {
	switch decision {
	case CTOGuidedRetry, CTORollback:
		return CTOOutcome{Block: s.IsEnabled()}
	case CTOSkip:
		n := s.Clone()
		target := AdvanceTarget(domain.CodeReview, s.TDD, pendingOther)
		n.Phase, n.NextPhase = domain.CodeReview, state.Opt(target)
		if target == domain.AllCodeReview {
			ResetCycle(n, models)
		}
		return CTOOutcome{Save: n, MarkDone: s.Task(), Target: target}
	}
	return CTOOutcome{}
}
