package lifecycle

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
)

// maxViolations caps the violations a Log keeps; the rest are counted.
const maxViolations = 100

// Log folds a log's effects into task records one at a time: every effect goes through the same check the moves use,
// a violation is recorded with the position it was given, and the log's
// word is then taken for the effect, so that one bad line is reported once
// and the records stay those the log describes. Queries fold the event
// log with it; validation reports its violations.
type Log struct {
	tasks map[domain.TaskID]Task
	vs    []Violation
	more  int
	// finished holds, after ForgetFinished, the tasks that reached
	// completed or abandoned: their state and since only.
	finished map[domain.TaskID]tomb
}

// tomb is what a Log keeps of a finished task it forgot.
type tomb struct {
	state State
	since time.Time
}

// NewLog starts an empty fold.
func NewLog() *Log { return &Log{tasks: map[domain.TaskID]Task{}} }

// Add folds one effect; pos is its position for a violation (a line
// number, say).
func (l *Log) Add(pos int, e Effect) {
	if tb, ok := l.finished[e.Task]; ok {
		// The log moves a finished task again: check it against what was
		// kept (it breaks "terminal states do not move").
		t := newTask(e.Task, tb.since)
		t.State = tb.state
		l.tasks[e.Task] = t
		delete(l.finished, e.Task)
	}
	v, bad := absorb(l.tasks, pos, e)
	if l.finished != nil {
		if t := l.tasks[e.Task]; t.State == Completed || t.State == Abandoned {
			l.finished[e.Task] = tomb{t.State, t.Since}
			delete(l.tasks, e.Task)
		}
	}
	switch {
	case !bad:
	case len(l.vs) < maxViolations:
		l.vs = append(l.vs, v)
	default:
		l.more++
	}
}

// ForgetFinished makes the Log keep of a task that reaches completed or
// abandoned only its state and time, and leave it out of Tasks, so that a
// fold over a long log holds the live tasks alone (a query that cannot
// select a finished task). Call it before the first Add.
func (l *Log) ForgetFinished() { l.finished = map[domain.TaskID]tomb{} }

// Known reports whether the log has a record of task id, a forgotten
// finished one included.
func (l *Log) Known(id domain.TaskID) bool {
	if _, ok := l.tasks[id]; ok {
		return true
	}
	_, ok := l.finished[id]
	return ok
}

// Tasks returns the records folded so far; they belong to the Log.
func (l *Log) Tasks() map[domain.TaskID]Task { return l.tasks }

// Violations returns the violations found so far (at most 100) and how
// many more were only counted.
func (l *Log) Violations() ([]Violation, int) { return l.vs, l.more }

// Fields are an effect as the event log writes it: every value a string,
// meta as its raw JSON object (nil when absent).
type Fields struct {
	Task, Kind, At, From, To, Actor, Reason string
	Meta                                    []byte
}

// ParseEffect reads an effect back from the event log. Kind must be a
// lifecycle kind (ParseKind); states and actors are taken as written, so
// that Log and CheckLog can report a hand-edited value.
func ParseEffect(f Fields) (Effect, error) {
	kind, err := ParseKind(f.Kind)
	if err != nil {
		return Effect{}, err
	}
	id, err := domain.ParseTaskID(f.Task)
	if err != nil {
		return Effect{}, err
	}
	at, err := time.Parse(time.RFC3339, f.At)
	if err != nil {
		return Effect{}, fmt.Errorf("ts %q is not an RFC 3339 time", f.At)
	}
	meta, err := ParseMeta(f.Meta)
	if err != nil {
		return Effect{}, err
	}
	return Effect{Task: id, Kind: kind, At: at.UTC(), From: State(f.From), To: State(f.To),
		Actor: Actor(f.Actor), Reason: f.Reason, Meta: meta}, nil
}

// ParseMeta reads an effect's "meta" object; nil or empty is no meta.
// Other keys are ignored.
func ParseMeta(raw []byte) (Meta, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Meta{}, nil
	}
	var m events.LifecycleMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return Meta{}, fmt.Errorf("meta: %v", err)
	}
	return Meta{Action: Action(m.Action), Note: m.Note, Failures: m.Failures, CTOAttempts: m.CTOAttempts, Head: m.Head,
		Level: m.Level, State: State(m.State), Limit: m.Limit, Agent: m.Agent}, nil
}
