package parallel

import (
	"fmt"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// MaxLeaseTTL bounds a lease: a claim longer than a day is a task
// abandoned by a dead agent that nobody may take over.
const MaxLeaseTTL = 24 * time.Hour

// WriteOutcome says whether an actor may change a task (its result,
// lifecycle, status, notes or worktree) given the task's claim.
type WriteOutcome int

// Write outcomes.
const (
	WriteFree    WriteOutcome = iota + 1 // no live claim: anyone may write
	WriteHolder                          // the actor holds the live claim
	WriteForced                          // another agent holds it live; --force overrides, recorded
	WriteRefused                         // another agent holds it live; Err says whom
)

var writeNames = [...]string{"", "free", "holder", "forced", "refused"}

// String names the value in test failures (%v); taskie prints none.
func (o WriteOutcome) String() string {
	if o <= 0 || int(o) >= len(writeNames) {
		return fmt.Sprintf("write(%d)", int(o))
	}
	return writeNames[o]
}

// WriteDecision is the result of DecideWrite.
type WriteDecision struct {
	Outcome WriteOutcome
	// Holder is the live claim a WriteForced overrides or a WriteRefused
	// respects.
	Holder *Claim
	// Err is set exactly when Outcome is WriteRefused (a *HeldError).
	Err error
}

// DecideWrite decides whether actor ("" when it gave no name) may write
// to task, given the task's claim (nil when none): a live claim is the
// holder's alone, unless force overrides it. An expired claim protects
// nothing: its holder is gone, and claiming the task takes it over.
func DecideWrite(task domain.TaskID, current *Claim, actor string, force bool, now time.Time) WriteDecision {
	switch {
	case current == nil || !current.Live(now):
		return WriteDecision{Outcome: WriteFree}
	case actor != "" && current.Agent == actor:
		return WriteDecision{Outcome: WriteHolder}
	}
	h := *current
	if force {
		return WriteDecision{Outcome: WriteForced, Holder: &h}
	}
	return WriteDecision{Outcome: WriteRefused, Holder: &h, Err: &HeldError{Task: task, Holder: h, Agent: actor, Now: now}}
}

// ClaimOf is task's claim among claims (the one that expires last), nil
// when none.
func ClaimOf(claims []Claim, task domain.TaskID) *Claim {
	if c, ok := leases(claims)[task]; ok {
		return &c
	}
	return nil
}
