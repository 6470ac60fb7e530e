package store

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// A commit is what one change writes, worked out whole before the first
// byte is written (record), then carried out by write: the events
// appended in one write (the last one the commit event), the review files
// moved to the archive, the files replaced in order, and state.json last.
type commit struct {
	Plan    string
	Events  []events.Event
	Archive *events.Archive
	Writes  []fileWrite
	// State is the state.json written last (nil: left as it is), StateRaw
	// its bytes.
	State    *state.State
	StateRaw []byte
}

// A fileWrite replaces one file.
type fileWrite struct {
	Rel  string // relative to the repository root
	Data []byte
	// Old is what the file holds, when the snapshot read it already; nil:
	// read just before the write, to put it back if a later one fails.
	Old []byte
	// MakeDir makes the file's directory first and removes the temp files
	// left there (under the plan lock, a killed writer's).
	MakeDir bool
}

// found is what a change finds on disk beyond its snapshot, looked at
// before record: whether a review holds the review lock, and which files
// state.json and tasks.md are (fileID), for the redo of a crash.
type found struct {
	ReviewRunning        bool
	StateFile, TasksFile string
}

// find looks at what record needs beyond the snapshot, and only at that:
// the review lock when the change opens a cycle, a file's identity when
// the change may replace it.
func (f *Files) find(s *Snapshot, c Change) found {
	var on found
	if c.NewCycle && !c.DuringReview {
		on.ReviewRunning = f.root.Probe(Rel(s.Plan, ReviewLockName))
	}
	if c.State != nil {
		on.StateFile = f.fileID(s.Plan, state.FileName)
	}
	if len(c.Statuses) > 0 && s.TasksRaw != nil {
		on.TasksFile = f.fileID(s.Plan, "tasks.md")
	}
	return on
}

// record works out what change c writes on snapshot s (taken under the
// plan lock), without I/O: a change refused here writes nothing.
func record(s *Snapshot, c Change, on found, now time.Time) (commit, error) {
	old, next, delta, err := nextState(s, c)
	if err != nil {
		return commit{}, err
	}
	newTasks, statuses, err := s.applyStatuses(c.Statuses)
	if err != nil {
		return commit{}, err
	}
	// Whether the change opens a review cycle, and what it archives, the
	// shell worked out; the store only keeps a running review's files
	// where the review expects them.
	if c.NewCycle && !c.DuringReview && on.ReviewRunning {
		return commit{}, fmt.Errorf("a review of plan %s is running: starting a new review cycle now would move its files; try again when it finishes (%w)", s.Plan, ErrReviewRunning)
	}
	out := commit{Plan: s.Plan, Archive: c.Archive}
	if !delta.Empty() {
		out.State, out.StateRaw = next, next.Encode()
	}
	evs := make([]events.Event, 0, len(c.Events)+2)
	evs = append(evs, c.Events...)
	if !delta.Empty() || statuses != nil || c.Archive != nil {
		if cp := checkpoint(s, old); cp != nil {
			evs = append(evs, *cp)
		}
		ev := c.event(old, next, delta, statuses)
		ev.Prev, ev.SHA = s.Version.State, s.Version.State
		if out.State != nil {
			ev.SHA, ev.PrevFile = Hash(out.StateRaw), on.StateFile
		}
		if ev.SHA == "" {
			ev.SHA = "-" // no state.json before or after: still a commit
		}
		if statuses != nil {
			ev.TPrev, ev.TSHA, ev.TPrevFile = s.Version.Tasks, Hash(newTasks), on.TasksFile
		}
		evs = append(evs, ev)
	}
	for i := range evs {
		evs[i].Plan = s.Plan
		if evs[i].TS.IsZero() {
			evs[i].TS = now
		}
	}
	out.Events = evs
	out.Writes = c.writes(s, newTasks, statuses != nil)
	return out, nil
}

// nextState returns the state a change starts from (nil when it replaces
// the file whole) and the state after it, with the difference.
func nextState(s *Snapshot, c Change) (old, next *state.State, delta state.Delta, err error) {
	old, next = s.State, s.State
	if c.Replace {
		old = nil
	}
	if c.State == nil {
		return old, next, delta, nil
	}
	if old == nil && !c.Replace && (!c.Create || !errors.Is(s.StateErr, state.ErrNotFound)) {
		return nil, nil, delta, s.StateErr
	}
	delta = state.DiffOf(old, c.State)
	if delta.Empty() {
		return old, next, delta, nil
	}
	next, err = state.Apply(old, delta)
	return old, next, delta, err
}

// checkpoint records state.json as found when it is not what the log's
// last commit left (changed outside taskie, or by an older version), so
// that a replay of the log stays exact.
func checkpoint(s *Snapshot, old *state.State) *events.Event {
	last := s.last
	if old == nil || (last != nil && last.SHA == s.Version.State) {
		return nil
	}
	reason := "state.json as found (changed outside taskie or by an older version)"
	if last != nil && last.Prev != "" && last.Prev == s.Version.State {
		// Not a crash: the redo would have completed it.
		reason = "state.json restored by hand to the state before the last change: kept as found"
	}
	return &events.Event{Event: events.Checkpoint, Actor: "taskie", Reason: reason,
		Set: state.Full(old).Set, SHA: s.Version.State}
}

// event is the commit event of a change, without its fingerprints.
func (c Change) event(old, next *state.State, delta state.Delta, statuses map[string]string) events.Event {
	ev := events.Event{Event: c.kind(old, next), Task: c.Task.String(), Actor: c.Actor, Reason: c.Reason, Meta: c.Meta,
		Set: delta.Set, Unset: delta.Unset, Lifecycle: delta.Lifecycle, Tasks: statuses, Archive: c.Archive}
	if old != nil {
		ev.From = string(old.Phase)
	}
	if next != nil {
		ev.To = string(next.Phase)
		if ev.Task == "" {
			ev.Task = next.Task().String()
		}
	}
	return ev
}

// writes lists the files a change replaces, in the order a redo relies
// on: files outside the plan, task files, tasks.md (state.json comes
// last, on its own).
func (c Change) writes(s *Snapshot, newTasks []byte, tasks bool) []fileWrite {
	var ws []fileWrite
	for _, rel := range slices.Sorted(maps.Keys(c.Outside)) {
		ws = append(ws, fileWrite{Rel: rel, Data: c.Outside[rel], MakeDir: true})
	}
	for _, name := range slices.Sorted(maps.Keys(c.Files)) {
		ws = append(ws, fileWrite{Rel: Rel(s.Plan, name), Data: c.Files[name]})
	}
	if tasks {
		ws = append(ws, fileWrite{Rel: Rel(s.Plan, "tasks.md"), Data: newTasks, Old: s.TasksRaw})
	}
	return ws
}

// kind names the state event of a change.
func (c Change) kind(old, next *state.State) string {
	switch {
	case c.Kind != "":
		return c.Kind
	case old == nil && next != nil:
		return events.PhaseChange
	case old != nil && next != nil && (old.Phase != next.Phase || old.Next() != next.Next() || old.Task() != next.Task()):
		return events.PhaseChange
	case c.State == nil && len(c.Statuses) > 0:
		return events.TaskStatus
	}
	return events.FieldSet
}

// applyStatuses returns tasks.md with the statuses set, and the statuses
// that actually changed (nil when none did).
func (s *Snapshot) applyStatuses(want map[domain.TaskID]string) ([]byte, map[string]string, error) {
	if len(want) == 0 || s.TasksRaw == nil || s.hasStatuses(want) {
		return nil, nil, nil
	}
	ts, _ := plan.ParseTasks(s.TasksRaw)
	if ts == nil {
		return nil, nil, nil
	}
	var changed map[string]string
	for _, id := range slices.Sorted(maps.Keys(want)) {
		t, ok := ts.Find(int(id))
		if !ok || t.StatusNorm() == want[id] {
			continue
		}
		if err := ts.SetStatus(int(id), want[id]); err != nil {
			return nil, nil, err
		}
		if changed == nil {
			changed = map[string]string{}
		}
		changed[id.String()] = want[id]
	}
	if changed == nil {
		return nil, nil, nil
	}
	return ts.Bytes(), changed, nil
}

// hasStatuses reports whether the snapshot's tasks.md already gives every
// task of want its status (or has no such task): a claim's commit then
// leaves tasks.md alone without parsing it again.
func (s *Snapshot) hasStatuses(want map[domain.TaskID]string) bool {
	if s.Tasks == nil {
		return false
	}
	for id, st := range want {
		if t, ok := s.Tasks.Find(int(id)); ok && t.StatusNorm() != st {
			return false
		}
	}
	return true
}
