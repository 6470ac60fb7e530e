package lifecycle

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Task is one task's lifecycle record. Its maps belong to it: the functions
// of this package return copies and never change a Task they are given,
// except a Log, which owns the records it folds into.
type Task struct {
	ID    domain.TaskID
	State State
	// Since is when the task entered State.
	Since time.Time
	// Created is when the task was created in pending.
	Created time.Time
	// Failures counts failures per state since that state was last passed.
	Failures map[State]int
	// CTOAttempts counts the times the task left cto_intervention back into
	// the work; a human's Resolve sets it back to 0.
	CTOAttempts int
	// EscalatedFrom is the working state the task was in when it entered
	// cto_intervention; it is kept through human_escalation and "" otherwise.
	EscalatedFrom State
	// Entered holds, for every state the task has entered and left, the
	// time accumulated in it (zero durations included). The time in the
	// current state is not in it: see Metrics.
	Entered map[State]time.Duration
	// Head is, while the task is in committing, the repository's HEAD
	// when it entered committing ("" without git or without a commit yet):
	// the task's commit is one made after it (CommitDue).
	Head string
	// Warned is the highest timeout level logged (TIMEOUT_WARNING) since
	// the task entered its state; LevelOK when none.
	Warned Level
	// Agent is the agent the task is assigned to: set by the claim that
	// moved it to assigned (Assign), kept while it is worked on, cleared
	// when it returns to pending.
	Agent string
}

// Errors returned by the moves, for errors.Is.
var (
	// ErrIllegal is a move the machine does not allow from the task's state.
	ErrIllegal = errors.New("illegal lifecycle move")
	// ErrRefused is an action the actor may not take.
	ErrRefused = errors.New("actor may not take this action")
	// ErrInvalid is bad input: an unknown actor or state, a clock that goes
	// backwards, a record that breaks an invariant.
	ErrInvalid = errors.New("invalid lifecycle input")
)

// Error is a refused move: the task, the reason (one of the Err values) and
// a message that says what would have been allowed.
type Error struct {
	Task domain.TaskID
	Err  error
	Msg  string
}

// Error returns "task 3: message".
func (e *Error) Error() string {
	if e.Task <= 0 {
		return e.Msg
	}
	return "task " + e.Task.String() + ": " + e.Msg
}

// Unwrap returns the reason, so errors.Is(err, ErrIllegal) works.
func (e *Error) Unwrap() error { return e.Err }

// errorf builds an *Error for t.
func errorf(t Task, kind error, format string, args ...any) error {
	return &Error{Task: t.ID, Err: kind, Msg: fmt.Sprintf(format, args...)}
}

// New creates task id in pending at now, with its TASK_CREATED effect.
func New(id domain.TaskID, actor Actor, now time.Time) (Task, []Effect, error) {
	if id <= 0 {
		return Task{}, nil, &Error{Err: ErrInvalid, Msg: fmt.Sprintf("task id %d is not a positive integer", id)}
	}
	e := Effect{Task: id, Kind: KindCreated, At: logTime(now), To: Pending, Actor: actor, Reason: "task created"}
	return apply(Task{ID: id}, false, []Effect{e})
}

// newTask is a fresh record in pending.
func newTask(id domain.TaskID, at time.Time) Task {
	return Task{
		ID: id, State: Pending, Since: at, Created: at,
		Failures: map[State]int{}, Entered: make(map[State]time.Duration, len(chain)),
	}
}

// clone returns t with its own maps.
func (t Task) clone() Task {
	t.Failures = maps.Clone(t.Failures)
	t.Entered = maps.Clone(t.Entered)
	if t.Failures == nil {
		t.Failures = map[State]int{}
	}
	if t.Entered == nil {
		t.Entered = map[State]time.Duration{}
	}
	return t
}

// base is the working state a recovery acts on: the state escalated from
// while in cto_intervention or human_escalation, the current state otherwise.
func (t Task) base() State {
	if t.State == CTOIntervention || t.State == HumanEscalation {
		return t.EscalatedFrom
	}
	return t.State
}

// Escalated reports whether the task is under CTO review or with a human
// (`taskie query --escalated`).
func (t Task) Escalated() bool {
	return t.State == CTOIntervention || t.State == HumanEscalation
}

// Failing reports whether some state has 2 or more failures
// (`taskie query --failing`).
func (t Task) Failing() bool {
	for _, n := range t.Failures {
		if n >= 2 {
			return true
		}
	}
	return false
}

// apply applies decided effects to a copy of t through step, the code a Log
// uses, and returns the copy and the effects. An effect that does not apply,
// or a result that breaks an invariant (Check), means t was not a valid
// record; t is returned unchanged with the error. Every move passes here,
// so every move checks the invariants.
func apply(t Task, exists bool, effs []Effect) (Task, []Effect, error) {
	out := t.clone()
	for _, e := range effs {
		if rule, msg := check(&out, exists, e); rule != "" {
			return t, nil, errorf(t, ErrInvalid, "%s (%s)", msg, rule)
		}
		evolve(&out, e)
		exists = true
	}
	if vs := Check(out); len(vs) > 0 {
		return t, nil, errorf(t, ErrInvalid, "the record would break an invariant: %s (%s); `taskie validate` reports it", vs[0].Msg, vs[0].Rule)
	}
	return out, effs, nil
}
