// Package store owns every read and write of a plan's files. A command
// loads one Snapshot — state.json, tasks.md and the directory listing, each
// read and decoded once — decides on it, and hands a Change to Commit,
// which appends the change's events and then replaces tasks.md and
// state.json under the plan lock, refusing when anything moved since the
// snapshot (compare-and-swap). A command that fails writes nothing.
//
// Store is an interface so that the coordination data can live elsewhere
// (PostgreSQL, for fleets) beside the file implementation, the default.
package store

import (
	"errors"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
)

// Store reads and changes plans.
type Store interface {
	// Load returns one consistent snapshot of a plan.
	Load(plan string) (*Snapshot, error)
	// Commit applies a change made on the snapshot of version v; it fails
	// with ErrMoved when the plan changed since.
	Commit(plan string, v Version, c Change) (*Snapshot, error)
	// Update loads the plan under its lock, asks fn for a change and
	// commits it: read-modify-write that never loses a concurrent update.
	Update(plan string, fn func(*Snapshot) (Change, error)) (*Snapshot, error)
	// Append adds events that change no file (a review started, a note).
	Append(plan string, evs ...events.Event) error
	// Scan streams a plan's events in log order.
	Scan(plan string, fn func(events.Event), warn func(string)) error
}

// ErrMoved is returned by Commit when the plan changed since its snapshot.
var ErrMoved = errors.New("the plan changed meanwhile")

// ErrReviewRunning refuses a change that would start a new review cycle
// while a reviewer still works on the current one.
var ErrReviewRunning = errors.New("a review of this plan is running")

// Version fingerprints the files a change depends on: state.json and
// tasks.md ("" when absent).
type Version struct {
	State, Tasks string
}

// Change is what a command wants written. Nil or empty fields change
// nothing.
type Change struct {
	Actor  string
	Reason string
	// Kind is the event kind of the state event (events.PhaseChange when
	// empty and the phase moved, events.FieldSet otherwise).
	Kind string
	// Task is the task the change is about, for the state event (0: the
	// state's current_task).
	Task domain.TaskID
	// Meta is extra detail for the state event (the field a `set` named).
	Meta map[string]any
	// State is the new state.json.
	State *state.State
	// Statuses sets Status cells of tasks.md: task id → status.
	Statuses map[domain.TaskID]string
	// Files writes plan files (plan.md, task-T.md): name → content.
	Files map[string][]byte
	// Outside writes files elsewhere under .taskie (the progress archive):
	// path relative to the repository root → content. They are written
	// before Files, so an entry moved out of a task file is in its new
	// place before it leaves the old one.
	Outside map[string][]byte
	// Events are appended before the state event.
	Events []events.Event
	// Create allows a plan without state.json to get one.
	Create bool
	// Replace writes State whatever state.json holds now, even a file that
	// does not parse (taskie recover): the log records it whole.
	Replace bool
	// DuringReview is set by the hook while it holds the review lock: its
	// own change may start a new cycle.
	DuringReview bool
	// NewCycle says the change opens a fresh review cycle
	// (workflow.StartsCycle): refused while a review holds the review lock,
	// unless DuringReview. Archive lists the earlier cycle's files to move
	// aside first (workflow.CycleArchive); the store moves what it is
	// handed and records it in the commit event.
	NewCycle bool
	Archive  *events.Archive
}

// Empty reports whether the change writes nothing.
func (c Change) Empty() bool {
	return c.State == nil && len(c.Statuses) == 0 && len(c.Files) == 0 && len(c.Outside) == 0 && len(c.Events) == 0
}
