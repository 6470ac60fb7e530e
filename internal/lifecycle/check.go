package lifecycle

import (
	"fmt"
	"strconv"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Rule is an invariant of docs/lifecycle.md, or a rule of the log that a hand edit can
// break.
type Rule string

// Rules.
const (
	RuleOneState    Rule = "exactly one state per task"
	RuleNoSkip      Rule = "no skipped states except by CTO override"
	RuleTerminal    Rule = "terminal states do not move"
	RuleFailures    Rule = "failures ≤ 3 per state"
	RuleCTOAttempts Rule = "CTO attempts ≤ 2"
	RuleLegal       Rule = "moves follow the table"
	RuleTime        Rule = "time does not go backwards"
)

// Violation is a broken invariant: in a Task record (Pos -1) or at
// position Pos (0-based) of a log.
type Violation struct {
	Pos  int
	Task domain.TaskID
	Rule Rule
	Msg  string
}

// String renders "effect 12: task 3: message (rule)".
func (v Violation) String() string {
	s := ""
	if v.Pos >= 0 {
		s = "effect " + strconv.Itoa(v.Pos) + ": "
	}
	if v.Task > 0 {
		s += "task " + v.Task.String() + ": "
	}
	return s + v.Msg + " (" + string(v.Rule) + ")"
}

// allStates is States(), for loops that must not allocate.
var allStates = States()

// Check returns the invariants a task record breaks: one known state;
// no state reached without its predecessor on the chain having been
// entered; nothing entered after a terminal state was left; failures ≤ 3
// per state; CTO attempts ≤ 2; EscalatedFrom set exactly while escalated;
// no negative times.
func Check(t Task) []Violation {
	var vs []Violation
	add := func(r Rule, format string, args ...any) {
		vs = append(vs, Violation{Pos: -1, Task: t.ID, Rule: r, Msg: fmt.Sprintf(format, args...)})
	}
	if !t.State.Valid() {
		add(RuleOneState, "state %q is not a lifecycle state", t.State)
	}
	checkEscalatedFrom(t, add)
	checkCounts(t, add)
	checkReached(t, add)
	checkTimes(t, add)
	return vs
}

type adder func(r Rule, format string, args ...any)

func checkEscalatedFrom(t Task, add adder) {
	switch {
	case t.Escalated() && !t.EscalatedFrom.Working():
		add(RuleOneState, "in %s but escalated from %q, not a working state", t.State, t.EscalatedFrom)
	case !t.Escalated() && t.EscalatedFrom != "":
		add(RuleOneState, "in %s but also marked escalated from %s", t.State, t.EscalatedFrom)
	}
}

func checkCounts(t Task, add adder) {
	for _, s := range allStates {
		switch n := t.Failures[s]; {
		case n > MaxFailures:
			add(RuleFailures, "%d failures in %s", n, s)
		case n < 0:
			add(RuleFailures, "%d failures in %s", n, s)
		case n > 0 && s.Terminal():
			add(RuleTerminal, "%d failures counted in terminal %s", n, s)
		}
	}
	for s := range t.Failures {
		if !s.Valid() {
			add(RuleOneState, "failures counted in %q, not a lifecycle state", s)
		}
	}
	if t.CTOAttempts > MaxCTOAttempts || t.CTOAttempts < 0 {
		add(RuleCTOAttempts, "%d CTO attempts", t.CTOAttempts)
	}
}

// checkReached finds states reached without their predecessor and terminal
// states that were left.
func checkReached(t Task, add adder) {
	for _, s := range chain[1:] {
		_, left := t.Entered[s]
		reached := left || s == t.State || s == t.EscalatedFrom
		if _, ok := t.Entered[s.prev()]; reached && !ok {
			add(RuleNoSkip, "reached %s without entering %s", s, s.prev())
		}
	}
	for _, s := range []State{Completed, Abandoned} {
		if _, ok := t.Entered[s]; ok {
			add(RuleTerminal, "left %s, a terminal state", s)
		}
	}
	for s := range t.Entered {
		if !s.Valid() {
			add(RuleOneState, "time recorded in %q, not a lifecycle state", s)
		}
	}
}

func checkTimes(t Task, add adder) {
	if t.Since.Before(t.Created) {
		add(RuleTime, "entered %s at %s, before it was created at %s", t.State, stamp(t.Since), stamp(t.Created))
	}
	for _, s := range allStates {
		if d := t.Entered[s]; d < 0 {
			add(RuleTime, "%s of time in %s", d, s)
		}
	}
}

// absorb folds e into tasks whatever it breaks, and returns the violation
// it broke, if any (for Log).
func absorb(tasks map[domain.TaskID]Task, pos int, e Effect) (Violation, bool) {
	t, ok := tasks[e.Task]
	rule, msg := check(&t, ok, e)
	if rule != "" && !ok && e.Kind != KindCreated {
		t = newTask(e.Task, e.At)
		t.State = e.From
	}
	evolve(&t, e)
	tasks[e.Task] = t
	return Violation{Pos: pos, Task: e.Task, Rule: rule, Msg: msg}, rule != ""
}
