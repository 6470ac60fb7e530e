package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// everyone may take an action.
var everyone = []Actor{ActorAgent, ActorHook, ActorCTO, ActorHuman, ActorSystem}

// permits is who may take each action. The hook escalates only through
// failure counting; taskie itself (system) also hands a task to a human
// when its review cycle ends without passing (ToHuman); only the CTO and humans
// take a task out of cto_intervention or roll it back; skip is the CTO's,
// abandon and resolve are humans'.
var permits = map[Action][]Actor{
	ActMove:        everyone,
	ActFail:        everyone,
	ActRetry:       {ActorCTO, ActorHuman},
	ActGuidedRetry: {ActorCTO, ActorHuman},
	ActRollback:    {ActorCTO, ActorHuman},
	ActSkip:        {ActorCTO},
	ActAbandon:     {ActorHuman},
	ActResolve:     {ActorHuman},
	ActEscalate:    {ActorAgent, ActorCTO, ActorHuman, ActorSystem},
}

// Allowed reports whether actor may take action.
func Allowed(actor Actor, action Action) bool {
	return slices.Contains(permits[action], actor)
}

// Permitted lists the actors who may take action.
func Permitted(action Action) []Actor { return slices.Clone(permits[action]) }

// begin checks what every action checks first: a known actor allowed to
// take the action, a task in a known state, a clock not before the state
// was entered. It returns now as the log keeps it; see logTime.
func begin(t Task, actor Actor, act Action, now time.Time) (time.Time, error) {
	if !actor.Valid() {
		return now, errorf(t, ErrInvalid, "unknown actor %q; actors are %s", actor, join(Actors()))
	}
	if !Allowed(actor, act) {
		return now, errorf(t, ErrRefused, "%s may not %s (only %s may)", actor, verb(act), join(permits[act]))
	}
	if !t.State.Valid() {
		return now, errorf(t, ErrInvalid, "unknown lifecycle state %q", t.State)
	}
	now = logTime(now)
	if now.Before(t.Since) {
		return now, errorf(t, ErrInvalid, "the clock says %s, before the task entered %s at %s", stamp(now), t.State, stamp(t.Since))
	}
	return now, nil
}

// logTime is a clock reading as the event log keeps it: wall clock only
// (no monotonic reading), whole seconds (the log writes RFC 3339 times). Every
// time a move records goes through it, so the durations a replay from the
// log computes are the ones the moves computed.
func logTime(now time.Time) time.Time { return now.Round(0).Truncate(time.Second) }

// verb names an action in a sentence.
func verb(a Action) string { return strings.ReplaceAll(string(a), "_", " ") }

// effect is an effect of t leaving its state for to.
func (t Task) effect(kind Kind, to State, actor Actor, reason string, now time.Time) Effect {
	return Effect{Task: t.ID, Kind: kind, At: now, From: t.State, To: to, Actor: actor, Reason: reason}
}

// recovery is a RECOVERY effect of action a.
func (t Task) recovery(a Action, to State, actor Actor, reason string, now time.Time) Effect {
	e := t.effect(KindRecovery, to, actor, reason, now)
	e.Meta.Action = a
	if t.State == CTOIntervention && a != ActAbandon {
		e.Meta.CTOAttempts = t.CTOAttempts + 1
	}
	return e
}

// Retry returns a task from cto_intervention to the state it came from with
// that state's failures cleared; it is a CTO attempt (CTO or human only).
func Retry(t Task, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	return retry(t, ActRetry, actor, "", reason, now)
}

// GuidedRetry is Retry with the CTO's guidance, recorded as the effect's
// note (and its reason).
func GuidedRetry(t Task, actor Actor, note string, now time.Time) (Task, []Effect, error) {
	if strings.TrimSpace(note) == "" {
		return t, nil, errorf(t, ErrInvalid, "a guided retry needs a note")
	}
	return retry(t, ActGuidedRetry, actor, note, note, now)
}

func retry(t Task, a Action, actor Actor, note, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, a, now)
	if err != nil {
		return t, nil, err
	}
	if t.State != CTOIntervention {
		return t, nil, errorf(t, ErrIllegal, "%s returns a task from cto_intervention, and the task is in %s%s", verb(a), t.State, notCTOHint(t))
	}
	if err := attemptsLeft(t, a); err != nil {
		return t, nil, err
	}
	e := t.recovery(a, t.EscalatedFrom, actor, reason, now)
	e.Meta.Note = note
	return apply(t, true, []Effect{e})
}

// notCTOHint says what to do instead of a retry.
func notCTOHint(t Task) string {
	switch {
	case t.State == HumanEscalation:
		return " (a human resolves it)"
	case t.State.Working():
		return " (report a failure with fail, or escalate)"
	}
	return ""
}

// attemptsLeft refuses a move out of cto_intervention when the CTO attempts
// are used up (a valid record never waits there in that case).
func attemptsLeft(t Task, a Action) error {
	if t.State == CTOIntervention && t.CTOAttempts >= MaxCTOAttempts {
		return errorf(t, ErrIllegal, "%s would be CTO attempt %d of %d; escalate to a human", verb(a), t.CTOAttempts+1, MaxCTOAttempts)
	}
	return nil
}

// Rollback returns a task to an earlier working state, before the state it
// is in (or was escalated from), clearing the failures of the states it
// will work again. From cto_intervention it is a CTO attempt. CTO or human.
func Rollback(t Task, to State, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActRollback, now)
	if err != nil {
		return t, nil, err
	}
	if !t.State.Working() && t.State != CTOIntervention {
		return t, nil, errorf(t, ErrIllegal, "%s cannot roll back: rollback works from a working state or cto_intervention", t.State)
	}
	base := t.base()
	if !to.Working() || to.pos() >= base.pos() {
		if base == Pending {
			return t, nil, errorf(t, ErrIllegal, "cannot roll back to %s: no state is earlier than pending", to)
		}
		return t, nil, errorf(t, ErrIllegal, "cannot roll back to %s: rollback from %s goes to one of %s", to, base, join(chain[:base.pos()]))
	}
	if err := attemptsLeft(t, ActRollback); err != nil {
		return t, nil, err
	}
	return apply(t, true, []Effect{t.recovery(ActRollback, to, actor, reason, now)})
}

// Skip passes the state a task is stuck in (its state, or the state it was
// escalated from) and moves it to the next state of the chain. It is the
// CTO's override; from cto_intervention it is a CTO attempt.
func Skip(t Task, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActSkip, now)
	if err != nil {
		return t, nil, err
	}
	if !t.State.Working() && t.State != CTOIntervention {
		return t, nil, errorf(t, ErrIllegal, "%s cannot be skipped: skip works from a working state or cto_intervention", t.State)
	}
	if err := attemptsLeft(t, ActSkip); err != nil {
		return t, nil, err
	}
	return apply(t, true, []Effect{t.recovery(ActSkip, t.base().next(), actor, reason, now)})
}

// Abandon ends a task that is not completed: a human's decision, which also
// resolves a human escalation.
func Abandon(t Task, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActAbandon, now)
	if err != nil {
		return t, nil, err
	}
	if t.State == Completed || t.State == Abandoned {
		return t, nil, errorf(t, ErrIllegal, "%s is terminal: it cannot be abandoned", t.State)
	}
	return apply(t, true, []Effect{t.recovery(ActAbandon, Abandoned, actor, reason, now)})
}

// Resolve is a human's answer to a human escalation: the task returns to
// the state it was escalated from with no failures and no CTO attempts.
func Resolve(t Task, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActResolve, now)
	if err != nil {
		return t, nil, err
	}
	if t.State != HumanEscalation {
		return t, nil, errorf(t, ErrIllegal, "resolve answers a human escalation, and the task is in %s", t.State)
	}
	return apply(t, true, []Effect{t.recovery(ActResolve, t.EscalatedFrom, actor, reason, now)})
}

// Escalate asks for help without waiting for failures: a working task goes
// to cto_intervention (straight on to human_escalation if its CTO attempts
// are used up), a task in cto_intervention goes to human_escalation.
func Escalate(t Task, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	now, err := begin(t, actor, ActEscalate, now)
	if err != nil {
		return t, nil, err
	}
	var e Effect
	switch {
	case t.State.Working():
		e = t.effect(KindCTO, CTOIntervention, actor, reason, now)
	case t.State == CTOIntervention:
		e = t.effect(KindEscalated, HumanEscalation, actor, reason, now)
	default:
		return t, nil, errorf(t, ErrIllegal, "%s cannot be escalated: it is terminal", t.State)
	}
	e.Meta.Action = ActEscalate
	effs := []Effect{e}
	if e.Kind == KindCTO && t.CTOAttempts >= MaxCTOAttempts {
		effs = append(effs, toHuman(t.ID, now))
	}
	return apply(t, true, effs)
}

// toHuman is the automatic move to human_escalation once the CTO attempts
// are used up; taskie makes it.
func toHuman(id domain.TaskID, now time.Time) Effect {
	return Effect{
		Task: id, Kind: KindEscalated, At: now, From: CTOIntervention, To: HumanEscalation,
		Actor: ActorSystem, Reason: fmt.Sprintf("%d CTO attempts used up", MaxCTOAttempts),
	}
}

// ToHuman hands a task to a human with reason: an explicit escalation by
// taskie (actor system) when its review cycle ends without passing — the
// review cap, a cycle that does not converge, or a CTO's decision to
// escalate. A working task passes through cto_intervention (two effects);
// a task already with a human is left as it is.
func ToHuman(t Task, reason string, now time.Time) (Task, []Effect, error) {
	var effs []Effect
	for range 2 {
		if t.State == HumanEscalation {
			return t, effs, nil
		}
		next, es, err := Escalate(t, ActorSystem, reason, now)
		if err != nil {
			return t, nil, err
		}
		t, effs = next, append(effs, es...)
	}
	return t, effs, nil
}
