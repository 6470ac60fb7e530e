// Package events appends to and reads a plan's events.jsonl (docs/lifecycle.md#where-it-is-kept): an
// append-only history, one JSON object per line. Callers hold the plan lock
// while appending.
package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// FileName is the event log inside a plan directory.
const FileName = "events.jsonl"

// Event kinds.
const (
	PhaseChange     = "PHASE_CHANGE"
	StateTransition = "STATE_TRANSITION"
	ReviewStarted   = "REVIEW_STARTED"
	ReviewFinished  = "REVIEW_FINISHED"
	ReviewFailed    = "REVIEW_FAILED"
	FieldSet        = "FIELD_SET"
	PlanCreated     = "PLAN_CREATED"
	TaskStatus      = "TASK_STATUS"
	ReviewsArchived = "REVIEWS_ARCHIVED"
	Progress        = "PROGRESS"
	Claim           = "CLAIM"
	Paused          = "PAUSED"
	Resumed         = "RESUMED"
	OwnerChanged    = "OWNER_CHANGED"
	Recovered       = "RECOVERED"
	// LifecycleCommit is the commit event of a `taskie task move|fail|…`:
	// the lifecycle records it changed in state.json (the moves themselves
	// are the lifecycle events before it).
	LifecycleCommit = "LIFECYCLE_CHANGED"
	// Checkpoint records the whole of state.json when it was changed
	// outside taskie (or by a version that did not log every field), so
	// that a replay from here on is exact.
	Checkpoint = "STATE_CHECKPOINT"
)

// Event is one line of events.jsonl.
type Event struct {
	TS     time.Time      `json:"ts"`
	Plan   string         `json:"plan"`
	Task   string         `json:"task,omitempty"`
	Event  string         `json:"event"`
	From   string         `json:"from,omitempty"`
	To     string         `json:"to,omitempty"`
	Actor  string         `json:"actor,omitempty"`
	Reason string         `json:"reason,omitempty"`
	Meta   map[string]any `json:"meta,omitempty"`

	// A commit that changes state.json or tasks.md ends with one state
	// event carrying the change itself, so that the log is the record:
	// Set/Unset are the state.json fields after the change (state.Delta),
	// Lifecycle the lifecycle records it changed (the field is logged
	// whole in Set only when it appears; logs written before hold it whole
	// in every commit, which replays the same), Tasks the tasks.md
	// statuses set, Archive the review files moved.
	// SHA and Prev fingerprint state.json after and before, TSHA and TPrev
	// tasks.md, so that a commit cut short by a crash is found and redone.
	Set   map[string]json.RawMessage `json:"set,omitempty"`
	Unset []string                   `json:"unset,omitempty"`
	// Lifecycle: task id → the task's record after the change, null when removed.
	Lifecycle map[string]json.RawMessage `json:"lifecycle,omitempty"`
	Tasks     map[string]string          `json:"tasks,omitempty"`
	Archive   *Archive                   `json:"archive,omitempty"`
	SHA       string                     `json:"sha,omitempty"`
	Prev      string                     `json:"prev,omitempty"`
	TSHA      string                     `json:"tsha,omitempty"`
	TPrev     string                     `json:"tprev,omitempty"`
	// PrevFile and TPrevFile identify state.json and tasks.md as the
	// commit found them (inode, change time, size): a redo completes the
	// commit only while the file is still that one, never over a file
	// put back since by hand or by git.
	PrevFile  string `json:"prev_file,omitempty"`
	TPrevFile string `json:"tprev_file,omitempty"`
}

// Archive says which review files a commit moved out of the plan
// directory, and where (relative to the repository root).
type Archive struct {
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

// IsCommit reports whether e is the state event that ends a commit.
func (e *Event) IsCommit() bool { return e.SHA != "" || e.TSHA != "" }

// Replaces reports whether a commit event holds the whole of state.json
// rather than a change to the state before it: a plan's first state, a
// checkpoint, a recovery.
func (e *Event) Replaces() bool {
	return e.Prev == "" || e.Event == Checkpoint || e.Event == Recovered
}

// Path returns the event log of a plan directory.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// ScanReader streams the events read from r; name is used in warnings.
// Lines that do not parse (a torn last line after a crash) are skipped
// and reported, never fatal.
func ScanReader(r io.Reader, name string, fn func(Event), warn func(string)) error {
	return ScanLines(r, MaxLine, func(n int, raw []byte) error {
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			return nil
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			warn(fmt.Sprintf("%s:%d: skipped unreadable event line (torn write?): %v", name, n, err))
			return nil
		}
		fn(e)
		return nil
	}, func(n int) { warn(tooLongWarning(name, n)) })
}
