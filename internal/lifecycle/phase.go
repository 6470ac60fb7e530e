package lifecycle

import "time"

// PhaseEvent is something the plan phases (docs/state-machine.md) report about a task; the
// phases drive the lifecycle through FromPhase (docs/lifecycle.md#fed-by-the-plan-phases).
type PhaseEvent string

// Phase events.
const (
	// TaskStarted: next-task, next-task-tdd or continue-task began the task.
	TaskStarted PhaseEvent = "task-started"
	// ReviewStarted: a code review of the task began.
	ReviewStarted PhaseEvent = "review-started"
	// ReviewFailed: a code review returned FAIL.
	ReviewFailed PhaseEvent = "review-failed"
	// ReviewPassed: the review cycle passed (two consecutive PASS).
	ReviewPassed PhaseEvent = "review-passed"
	// CommitSeen: the task's commit was seen, or the plan has no git.
	CommitSeen PhaseEvent = "commit-seen"
)

// phaseStep is what a phase event does: fast-forward to a state, then
// maybe a failure move.
type phaseStep struct {
	target State
	failTo State
	reason string
}

var phaseSteps = map[PhaseEvent]phaseStep{
	TaskStarted:   {InProgress, "", "task started"},
	ReviewStarted: {QualityReview, "", "code review started"},
	ReviewFailed:  {QualityReview, InProgress, "code review failed"},
	ReviewPassed:  {Committing, "", "review cycle passed"},
	CommitSeen:    {Completed, "", "commit seen"},
}

// FromPhase moves a task as a plan phase event requires, through the same
// moves anyone makes: starting a task → in_progress, a code review →
// quality_review, FAIL → in_progress as a failure (the third escalates),
// a passed cycle → approved → committing, the commit → completed.
//
// When the lifecycle lags the phases (a task started while pending), the
// task is fast-forwarded along the chain one legal forward move at a time,
// one STATE_TRANSITION effect per step by the same actor: no override is
// needed, because no state is skipped. A task already at or past the
// event's state is left as it is, with no effects (a task resumed while in
// testing is still started). A review failure needs quality_review: past it
// (approved, committing, completed) it is an ErrIllegal error. A task under
// escalation or abandoned is not moved by the phases (ErrIllegal): a CTO or
// a human moves it.
func FromPhase(t Task, ev PhaseEvent, actor Actor, now time.Time) (Task, []Effect, error) {
	step, ok := phaseSteps[ev]
	if !ok {
		return t, nil, errorf(t, ErrInvalid, "unknown phase event %q", ev)
	}
	p := t.State.pos()
	switch {
	case p < 0:
		return t, nil, errorf(t, ErrIllegal, "%s: the task is in %s, which plan phases do not move (a CTO or human does)", step.reason, t.State)
	case step.failTo != "" && p > step.target.pos():
		return t, nil, errorf(t, ErrIllegal, "%s: the task is in %s, past %s", step.reason, t.State, step.target)
	}
	cur, effs := t, []Effect(nil)
	for cur.State.pos() < step.target.pos() {
		next, es, err := Move(cur, cur.State.next(), actor, step.reason, now)
		if err != nil {
			return t, nil, err
		}
		cur, effs = next, append(effs, es...)
	}
	if step.failTo != "" {
		next, es, err := Move(cur, step.failTo, actor, step.reason, now)
		if err != nil {
			return t, nil, err
		}
		cur, effs = next, append(effs, es...)
	}
	return cur, effs, nil
}
