package lifecycle

import (
	"fmt"
	"time"
)

// Move moves a task to another state along the table. Forward moves clear
// the failures of the state left; failure moves (planning → planning,
// quality_review → in_progress, committing → in_progress) count a failure
// first and go to cto_intervention instead when it is the third. Rows of
// the other classes are made by the action that owns them, with its
// permissions: into cto_intervention or human_escalation by Escalate, out
// of cto_intervention by Retry (to the state it came from) or Rollback
// (earlier), out of human_escalation by Resolve, to abandoned by Abandon.
// An illegal move returns an error listing the moves legal now.
func Move(t Task, to State, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActMove, now)
	if err != nil {
		return t, nil, err
	}
	tr, ok := lookup(t.State, to)
	if !ok || !fits(t, tr) {
		return t, nil, illegal(t, to)
	}
	switch tr.Class {
	case ClassFailure:
		return fail(t, to, actor, reason, now)
	case ClassToCTO, ClassToHuman:
		return Escalate(t, actor, reason, now)
	case ClassReturn:
		if to == t.EscalatedFrom {
			return Retry(t, actor, reason, now)
		}
		return Rollback(t, to, actor, reason, now)
	case ClassResolve:
		return Resolve(t, actor, reason, now)
	case ClassAbandon:
		return Abandon(t, actor, reason, now)
	}
	return apply(t, true, []Effect{t.effect(KindTransition, to, actor, reason, now)})
}

// illegal is the error for a move the table does not allow now.
func illegal(t Task, to State) error {
	switch {
	case !to.Valid():
		return errorf(t, ErrIllegal, "unknown lifecycle state %q; states are %s", to, join(States()))
	case t.State == Completed || t.State == Abandoned:
		return errorf(t, ErrIllegal, "%s is terminal: it does not move", t.State)
	}
	// What is legal instead depends on who asks: Options, which callers add.
	return errorf(t, ErrIllegal, "%s → %s is not a legal move", t.State, to)
}

// Fail counts a failure in the task's state. The third failure in a state
// moves it to cto_intervention (the third in cto_intervention, to
// human_escalation); once the CTO attempts are used up, any failure moves
// it on to human_escalation. The automatic moves are taskie's (actor
// system) and say why.
func Fail(t Task, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActFail, now)
	if err != nil {
		return t, nil, err
	}
	if t.State.Terminal() {
		return t, nil, errorf(t, ErrIllegal, "%s is terminal: failures do not count there", t.State)
	}
	return fail(t, "", actor, reason, now)
}

// fail counts a failure and escalates, or else moves on to `to` when the
// failure is a failure move.
func fail(t Task, to State, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	s := t.State
	n := t.Failures[s] + 1
	f := t.effect(KindFailure, s, actor, reason, now)
	f.Meta.Failures = n
	effs := []Effect{f}
	used := t.CTOAttempts >= MaxCTOAttempts
	switch {
	case s == CTOIntervention:
		if n >= MaxFailures {
			e := toHuman(t.ID, now)
			e.Reason = fmt.Sprintf("%d failures in %s", n, s)
			effs = append(effs, e)
		}
	case n >= MaxFailures || used:
		why := fmt.Sprintf("%d failures in %s", n, s)
		if n < MaxFailures {
			why = fmt.Sprintf("failure in %s after %d CTO attempts", s, MaxCTOAttempts)
		}
		effs = append(effs, t.effect(KindCTO, CTOIntervention, ActorSystem, why, now))
		if used {
			effs = append(effs, toHuman(t.ID, now))
		}
	case to != "":
		effs = append(effs, t.effect(KindTransition, to, actor, reason, now))
	}
	return apply(t, true, effs)
}

// Assign moves a task from pending to assigned for agent, recorded on the
// move (meta agent) and in the record: what a claim does (docs/parallel.md).
// It is the forward move pending → assigned with its agent; from any other
// state it is illegal. Its way back is Move(t, Pending, …), a release.
func Assign(t Task, agent string, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActMove, now)
	if err != nil {
		return t, nil, err
	}
	if t.State != Pending {
		return t, nil, illegal(t, Assigned)
	}
	e := t.effect(KindTransition, Assigned, actor, reason, now)
	e.Meta.Agent = agent
	return apply(t, true, []Effect{e})
}
