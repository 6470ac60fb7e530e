package lifecycle

import (
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// The oracles the tests check the machine with, kept out of the binary:
// taskie moves tasks through Move, Fail, … and reads logs through Log.

// Fold applies one effect to the records it belongs to, through the same
// check and update the moves use, and returns the records. It updates tasks
// in place (a nil map is made): the records and their maps must belong to
// the fold, not be shared with Tasks the caller keeps. An effect that does
// not apply returns a Violation (as the error) and leaves tasks unchanged.
func Fold(tasks map[domain.TaskID]Task, e Effect) (map[domain.TaskID]Task, error) {
	if tasks == nil {
		tasks = map[domain.TaskID]Task{}
	}
	t, ok := tasks[e.Task]
	if rule, msg := check(&t, ok, e); rule != "" {
		return tasks, Violation{Pos: -1, Task: e.Task, Rule: rule, Msg: msg}
	}
	evolve(&t, e)
	tasks[e.Task] = t
	return tasks, nil
}

// Replay folds a log, in order, into fresh records. It stops at the first
// effect that does not apply, with that effect's position in the Violation.
func Replay(effects []Effect) (map[domain.TaskID]Task, error) {
	tasks := map[domain.TaskID]Task{}
	for i, e := range effects {
		if _, err := Fold(tasks, e); err != nil {
			v := err.(Violation)
			v.Pos = i
			return tasks, v
		}
	}
	return tasks, nil
}

// Error makes a Violation an error, as Fold and Replay return it.
func (v Violation) Error() string { return v.String() }

// CheckLog replays effects and reports every effect that breaks an
// invariant, with its position: a move out of a terminal state, a fourth
// failure in a state, a skipped state without the CTO's override, a third
// CTO attempt, an effect that leaves a state the task is not in, time going
// backwards. After reporting, it takes the log's word for the effect so
// that one bad line is reported once, not again for every line after it.
func CheckLog(effects []Effect) []Violation {
	var vs []Violation
	tasks := map[domain.TaskID]Task{}
	for i, e := range effects {
		if v, bad := absorb(tasks, i, e); bad {
			vs = append(vs, v)
		}
	}
	return vs
}

// Actions returns every action, in a stable order.
func Actions() []Action {
	return []Action{ActMove, ActFail, ActRetry, ActGuidedRetry, ActRollback, ActSkip, ActAbandon, ActResolve, ActEscalate}
}

// Table returns a copy of the machine's legal moves, in a stable order.
// The overrides Rollback and Skip follow their own rules instead.
func Table() []Transition { return slices.Clone(machine().rows) }

// Legal reports whether the table has a move from → to.
func Legal(from, to State) bool {
	_, ok := lookup(from, to)
	return ok
}

// LegalFrom lists the states the table reaches from a state, in table order.
func LegalFrom(from State) []State {
	var out []State
	for _, tr := range machine().rows {
		if tr.From == from {
			out = append(out, tr.To)
		}
	}
	return out
}

// TimeoutWarnings returns the task with a TIMEOUT_WARNING effect for each
// level it has crossed in its state at now and not yet logged since it
// entered the state (Task.Warned): a task found at 160 % gets warning,
// alert and escalate at once; found again later, nothing. The warnings are
// taskie's (actor system). A task without a timeout gets none.
func TimeoutWarnings(t Task, now time.Time, timeouts Timeouts) (Task, []Effect, error) {
	return timeoutWarnings(t, Status(t, logTime(now), timeouts), now)
}
