package store

import (
	"context"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
)

// LifeMoves are the lifecycle events a claim write records with it in a
// shared store, in the same statement (docs/fleet.md, "One round trip"):
// the lifecycle machine decided them beforehand for every state the
// task's shared record may be in, and the store picks the ones of the
// state it finds. Lines are events as their log keeps them, keyed by
// LifeKey, with the task written as TaskSentinel and the time as
// TimeSentinel for the store to fill in. Empty: no move.
type LifeMoves struct {
	Lines map[string][][]byte
	// UnlessComplete leaves the task's record alone when its latest result
	// is complete (a release after the result: the work waits to be merged).
	UnlessComplete bool
	// Refuse are the keys of the states in which the machine refuses the
	// move: a write that needs it is then not made at all.
	Refuse []string
}

// The stand-ins of a LifeMoves line for the task and the time.
const TaskSentinel = 999999999

// TimeSentinel is the time of a LifeMoves line before the store sets it.
var TimeSentinel = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// LifeKey is the key of the lines for a task whose shared record is in
// state ("" when it has none), mine when it is assigned to the writer.
func LifeKey(state string, mine bool) string {
	switch {
	case state == "":
		return "none"
	case mine:
		return state + "/mine"
	}
	return state
}

// Written is what a fenced write made in one statement found and did;
// the caller decides again on what was found.
type Written struct {
	Found   *domain.Claim // the task's claim as found, nil when free
	Now     time.Time     // the coordination clock of the statement
	Written bool          // the events were appended
	LifeKey string        // the state of the task's shared record, as LifeKey
	Lines   []string      // the lifecycle events recorded
}

// FenceLocker is a coordination store that can hold a task's claim still
// while a write is made for it: no claim, takeover, renewal or release of
// the task happens between check, which decides on the claim as found
// under the lock, and the end of write. A lifecycle move made for a claim
// is then made under the claim its fencing token names, or not at all.
type FenceLocker interface {
	Fenced(ctx context.Context, p PlanKey, task domain.TaskID, check func(cur *domain.Claim, now time.Time) error, write func() error) error
}

// Claimed is what a one-statement claim of a named task found and did;
// the caller decides again on what was found.
type Claimed struct {
	Decision domain.ClaimDecision // the rules' decision on the claim found
	LifeKey  string               // the state of the task's shared record, as LifeKey
	// Closed: nothing was written because the record's state is one of
	// LifeMoves.Refuse or the task's latest result is complete (Complete:
	// its commit, "?" when it names none).
	Closed   bool
	Complete string
	Lines    []string // the lifecycle events recorded
}

// FailWrite is a failed result written in one statement with the release
// of the writer's claim and the lifecycle move: Results[i] is the
// TASK_RESULT line of attempt i+1, the last one that of every attempt
// after, AttemptMarker standing for its number; Kept and Released are the
// lifecycle lines when the writer holds no claim and when its claim is
// released with the result, decided on the task's shared record as read
// (a failure counts on the record's own counts): the statement writes
// nothing unless the record's latest lifecycle event is still At (0:
// none; see TaskLife).
type FailWrite struct {
	Results        [][]byte
	Kept, Released [][]byte
	At             int64
}

// AttemptMarker stands for the attempt number in the last of
// FailWrite.Results.
const AttemptMarker = 999999997

// Failed is what a failed result written in one statement found and did.
type Failed struct {
	Written
	Attempt  int   // the attempt the result counts
	Released bool  // the writer's claim was released with it
	At       int64 // the record's latest lifecycle event found
}

// Override is a write made with --force in one statement over whatever
// claim the statement finds (a stale token is still refused): Forced are
// the write's events as they read when a live claim of another holder is
// overridden, HolderMarker standing for the holder's name; the statement
// logs the override (CLAIM_OVERRIDE) of Command.
type Override struct {
	Command string
	Forced  []events.Event
}

// HolderMarker stands for the overridden holder in Override.Forced.
const HolderMarker = "\x00holder"
