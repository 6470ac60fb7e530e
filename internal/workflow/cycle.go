package workflow

import (
	"path"
	"strconv"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
)

// StartsCycle reports whether a change from old to next opens a fresh
// review cycle: a review is next at iteration 0, and the review, the task
// or the iteration moved. old is nil for a plan's first state or a state
// written whole (taskie recover).
func StartsCycle(old, next *state.State) bool {
	if next == nil {
		return false
	}
	r := next.Next()
	if !domain.IsReview(r) || next.Iteration() != 0 {
		return false
	}
	if old == nil {
		return true
	}
	return old.Next() != r || old.Task() != next.Task() || old.Iteration() != 0
}

// CycleArchive is where the review and post-review files of an earlier
// cycle of the series next starts (series, as the plan directory lists
// them) move, so that the new cycle numbers its files from 1 without
// overwriting or misreading them; nothing is deleted. nil when there is
// nothing to move.
func CycleArchive(plan string, next *state.State, series []string, now time.Time) *events.Archive {
	if len(series) == 0 {
		return nil
	}
	review := next.Next()
	name := string(review)
	if review == domain.CodeReview && next.Task() > 0 {
		name = "task-" + strconv.Itoa(int(next.Task())) + "-" + name
	}
	dir := path.Join(".taskie", "archive", plan, name+"-"+now.UTC().Format("20060102T150405.000000000Z"))
	return &events.Archive{Dir: dir, Files: series}
}

// OwnerChange is the OWNER_CHANGED event of a change that gives the plan to
// another agent session, nil when the owner stays.
func OwnerChange(old, next *state.State, actor string) *events.Event {
	if next == nil {
		return nil
	}
	prev := ""
	if old != nil {
		prev = old.SessionID
	}
	if prev == next.SessionID {
		return nil
	}
	return &events.Event{Event: events.OwnerChanged, Actor: actor, Task: next.Task().String(), From: prev, To: next.SessionID,
		Reason: "session " + next.SessionID + " drives the plan", Meta: events.Meta(events.OwnerChangedMeta{Previous: prev})}
}
