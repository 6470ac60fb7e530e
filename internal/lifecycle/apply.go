package lifecycle

import (
	"fmt"
	"time"
)

// check says what, if anything, is wrong with applying e to t: the
// invariant broken and a message. It is the one gate every effect passes,
// whether decided now (Move, Fail, …) or read back from a log (Log).
// exists is false when the log has not created the task yet.
func check(t *Task, exists bool, e Effect) (Rule, string) {
	if e.Kind == KindCreated {
		return checkCreated(exists, e)
	}
	switch {
	case !exists:
		return RuleOneState, "no TASK_CREATED before it: the task has no state"
	case !e.Actor.Valid():
		return RuleLegal, fmt.Sprintf("unknown actor %q", e.Actor)
	case e.At.Before(t.Since):
		return RuleTime, fmt.Sprintf("at %s, before the task entered %s at %s", stamp(e.At), t.State, stamp(t.Since))
	case e.From != t.State:
		return RuleOneState, fmt.Sprintf("it leaves %s but the task is in %s", e.From, t.State)
	case !e.To.Valid():
		return RuleLegal, fmt.Sprintf("unknown state %q", e.To)
	}
	if t.State.Terminal() && !resolves(t, e) {
		if e.Kind == KindFailure {
			return RuleTerminal, fmt.Sprintf("%s is terminal: no failure counts there", t.State)
		}
		return RuleTerminal, fmt.Sprintf("%s is terminal: %s → %s does not happen", t.State, e.From, e.To)
	}
	switch e.Kind {
	case KindTimeout:
		return checkTimeout(t, e)
	case KindFailure:
		return checkFailure(t, e)
	case KindTransition:
		return checkTransition(e)
	case KindCTO, KindEscalated:
		return checkEscalation(t, e)
	case KindRecovery:
		return checkRecovery(t, e)
	}
	return RuleLegal, fmt.Sprintf("unknown effect kind %q", e.Kind)
}

// stamp formats a time for messages.
func stamp(t time.Time) string { return t.Format(time.RFC3339) }

// resolves reports whether e is one of the two ways out of human_escalation.
func resolves(t *Task, e Effect) bool {
	return t.State == HumanEscalation && e.Kind == KindRecovery &&
		(e.Meta.Action == ActResolve || e.Meta.Action == ActAbandon)
}

func checkCreated(exists bool, e Effect) (Rule, string) {
	switch {
	case exists:
		return RuleOneState, "the task is created a second time"
	case e.Task <= 0:
		return RuleLegal, fmt.Sprintf("task id %d is not a positive integer", e.Task)
	case e.From != "" || e.To != Pending:
		return RuleLegal, fmt.Sprintf("a task is created in pending, not %s", e.To)
	case !e.Actor.Valid():
		return RuleLegal, fmt.Sprintf("unknown actor %q", e.Actor)
	}
	return "", ""
}

func checkTimeout(t *Task, e Effect) (Rule, string) {
	l, err := ParseLevel(e.Meta.Level)
	switch {
	case e.To != e.From:
		return RuleLegal, fmt.Sprintf("a timeout warning stays in %s, it does not move to %s", e.From, e.To)
	case err != nil || l == LevelOK:
		return RuleLegal, fmt.Sprintf("timeout warning with level %q (warning, alert or escalate)", e.Meta.Level)
	case l <= t.Warned:
		return RuleLegal, fmt.Sprintf("timeout %s in %s logged a second time since the task entered it", l, e.From)
	}
	return "", ""
}

func checkFailure(t *Task, e Effect) (Rule, string) {
	if e.To != e.From {
		return RuleLegal, fmt.Sprintf("a failure stays in %s, it does not move to %s", e.From, e.To)
	}
	n := t.Failures[e.From] + 1
	if n > MaxFailures {
		return RuleFailures, fmt.Sprintf("failure %d in %s: %d failures escalate", n, e.From, MaxFailures)
	}
	if e.Meta.Failures != 0 && e.Meta.Failures != n {
		return RuleFailures, fmt.Sprintf("the log says failure %d in %s but counts %d", e.Meta.Failures, e.From, n)
	}
	return "", ""
}

func checkTransition(e Effect) (Rule, string) {
	tr, ok := lookup(e.From, e.To)
	if ok && (tr.Class == ClassForward || tr.Class == ClassFailure || tr.Class == ClassRelease) {
		return "", ""
	}
	if f, to := e.From.pos(), e.To.pos(); f >= 0 && to > f+1 {
		return RuleNoSkip, fmt.Sprintf("%s → %s skips %s without a CTO override", e.From, e.To, join(chain[f+1:to]))
	}
	if ok {
		return RuleLegal, fmt.Sprintf("%s → %s is a %s move, not a %s", e.From, e.To, tr.Class, e.Kind)
	}
	return RuleLegal, fmt.Sprintf("%s → %s is not a legal move", e.From, e.To)
}

// checkEscalation checks CTO_INTERVENTION and ESCALATED effects: explicit
// ones need an actor who may escalate, automatic ones need their cause.
func checkEscalation(t *Task, e Effect) (Rule, string) {
	want := ClassToCTO
	if e.Kind == KindEscalated {
		want = ClassToHuman
	}
	if tr, ok := lookup(e.From, e.To); !ok || tr.Class != want {
		return RuleLegal, fmt.Sprintf("%s → %s is not a %s", e.From, e.To, e.Kind)
	}
	switch e.Meta.Action {
	case ActEscalate:
		if !Allowed(e.Actor, ActEscalate) {
			return RuleLegal, fmt.Sprintf("%s may not escalate", e.Actor)
		}
	case "":
		if !autoEscalates(t, e) {
			return RuleLegal, fmt.Sprintf("automatic %s from %s without %d failures or used-up CTO attempts", e.Kind, e.From, MaxFailures)
		}
	default:
		return RuleLegal, fmt.Sprintf("%s with action %q", e.Kind, e.Meta.Action)
	}
	return "", ""
}

// autoEscalates reports whether an automatic escalation has its cause:
// into cto_intervention, the failure limit in From or any failure once the
// CTO attempts are used up; into human_escalation, used-up CTO attempts or
// the failure limit in cto_intervention.
func autoEscalates(t *Task, e Effect) bool {
	if e.Kind == KindEscalated {
		return t.CTOAttempts >= MaxCTOAttempts || t.Failures[CTOIntervention] >= MaxFailures
	}
	n := t.Failures[e.From]
	return n >= MaxFailures || (t.CTOAttempts >= MaxCTOAttempts && n >= 1)
}

func checkRecovery(t *Task, e Effect) (Rule, string) {
	a := e.Meta.Action
	if _, ok := permits[a]; !ok || a == ActMove || a == ActFail || a == ActEscalate {
		return RuleLegal, fmt.Sprintf("%q is not a recovery action", a)
	}
	if !Allowed(e.Actor, a) {
		if a == ActSkip {
			return RuleNoSkip, fmt.Sprintf("skip by %s: only the CTO may skip a state", e.Actor)
		}
		return RuleLegal, fmt.Sprintf("%s may not %s", e.Actor, a)
	}
	if e.From == CTOIntervention && a != ActAbandon && t.CTOAttempts >= MaxCTOAttempts {
		return RuleCTOAttempts, fmt.Sprintf("%s would be CTO attempt %d; at most %d", a, t.CTOAttempts+1, MaxCTOAttempts)
	}
	if want, ok := recoveryTarget(t, e); !ok {
		return RuleLegal, fmt.Sprintf("%s from %s cannot go to %s%s", a, e.From, e.To, want)
	}
	if a == ActGuidedRetry && e.Meta.Note == "" {
		return RuleLegal, "a guided retry needs a note"
	}
	return "", ""
}

// recoveryTarget reports whether e's target is where its action goes from
// t, with a hint naming the right target when it is not.
func recoveryTarget(t *Task, e Effect) (string, bool) {
	base := t.base()
	inWork := e.From.Working() || e.From == CTOIntervention
	switch e.Meta.Action {
	case ActRetry, ActGuidedRetry:
		return " (it returns to " + string(base) + ")", e.From == CTOIntervention && e.To == base
	case ActRollback:
		return " (it goes to a working state before " + string(base) + ")", inWork && e.To.Working() && e.To.pos() < base.pos()
	case ActSkip:
		return " (it goes to " + string(base.next()) + ")", inWork && e.To == base.next()
	case ActAbandon:
		return "", e.To == Abandoned
	case ActResolve:
		return " (it returns to " + string(base) + ")", e.From == HumanEscalation && e.To == base
	}
	return " (unknown recovery action)", false
}

// evolve applies e to t without checking it: check has, or CheckLog has
// reported what is wrong and wants the log's word taken.
func evolve(t *Task, e Effect) {
	switch e.Kind {
	case KindCreated:
		*t = newTask(e.Task, e.At)
		return
	}
	if t.Failures == nil || t.Entered == nil {
		*t = t.clone() // a record built by hand
	}
	switch e.Kind {
	case KindFailure:
		t.Failures[e.From]++
		return
	case KindTimeout:
		if l, err := ParseLevel(e.Meta.Level); err == nil && l > t.Warned {
			t.Warned = l
		}
		return
	}
	from := t.State
	t.Entered[from] += max(e.At.Sub(t.Since), 0)
	switch e.Kind {
	case KindTransition:
		if e.To == from.next() {
			delete(t.Failures, from)
		}
	case KindCTO:
		t.EscalatedFrom = from
	case KindRecovery:
		recoverTask(t, e)
	}
	t.State, t.Since, t.Warned = e.To, e.At, LevelOK
	switch {
	case e.To == Pending:
		t.Agent = "" // back in the queue: nobody's
	case e.Meta.Agent != "":
		t.Agent = e.Meta.Agent
	}
	t.Head = ""
	if e.To == Committing {
		t.Head = e.Meta.Head
	}
}

// recoverTask updates the counters for a recovery action. Leaving
// cto_intervention back into the work is a CTO attempt; the states to be
// worked again start with no failures.
func recoverTask(t *Task, e Effect) {
	base := t.base()
	if t.State == CTOIntervention && e.Meta.Action != ActAbandon {
		t.CTOAttempts++
		delete(t.Failures, CTOIntervention)
	}
	switch e.Meta.Action {
	case ActRetry, ActGuidedRetry, ActSkip:
		delete(t.Failures, base)
	case ActRollback:
		if p := e.To.pos(); p >= 0 {
			for _, s := range chain[p:] {
				delete(t.Failures, s)
			}
		}
	case ActResolve:
		clear(t.Failures)
		t.CTOAttempts = 0
	}
	t.EscalatedFrom = ""
}
