package domain

import (
	"fmt"
	"time"
)

// Claim is an agent's lease on a task. It is live while now is before
// Expires; Heartbeat is the last time it was granted or renewed.
type Claim struct {
	Task      TaskID
	Agent     string
	Acquired  time.Time
	Expires   time.Time
	Heartbeat time.Time
	// Token is the claim's fencing token: issued by the store when the
	// claim is granted or taken over, higher than every token the task had
	// before, kept by renewals. 0 is a claim stored before tokens existed.
	Token int64
	// Place is where the holder runs (machine, clone, worktree): a name
	// used from another place is refused while this claim is live. ""
	// when not known (a claim stored before places were recorded).
	Place string
}

// Fence is what a caller presents with a write for a claim: where it runs
// and, when it knows it, the token of the claim it holds (0: none).
type Fence struct {
	Place string
	Token int64
}

// Never is the expiry of a lease that never expires: a store row set to
// infinity reads as it. Only `taskie release --force` ends such a lease.
var Never = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// Endless reports whether the lease never expires.
func (c Claim) Endless() bool { return !c.Expires.Before(Never) }

// Live reports whether the lease still holds at now.
func (c Claim) Live(now time.Time) bool { return now.Before(c.Expires) }

// ClaimOutcome is what a claim, heartbeat or release decision says to do.
type ClaimOutcome int

// Outcomes.
const (
	ClaimGranted  ClaimOutcome = iota + 1 // the task was free: store Claim
	ClaimRenewed                          // the agent already held it: store Claim (new expiry)
	ClaimTakeover                         // another agent's lease had expired: store Claim, record Previous
	ClaimRefused                          // nothing changes; Err says why
	ClaimReleased                         // the holder let go: delete the claim
)

var outcomeNames = [...]string{"", "granted", "renewed", "takeover", "refused", "released"}

func (o ClaimOutcome) String() string {
	if o <= 0 || int(o) >= len(outcomeNames) {
		return fmt.Sprintf("outcome(%d)", int(o))
	}
	return outcomeNames[o]
}

// ClaimDecision is what the claims policy (package parallel) decides and
// the coordination store writes.
type ClaimDecision struct {
	Outcome ClaimOutcome
	// Claim is the lease to store after ClaimGranted, ClaimRenewed or ClaimTakeover; after
	// ClaimReleased, the lease that was let go.
	Claim Claim
	// Previous is the lease replaced by a ClaimTakeover, for its event, or the
	// lease that caused a refusal.
	Previous *Claim
	// Revived is set when a ClaimRenewed lease had expired but nobody had taken
	// the task over.
	Revived bool
	// Err is set exactly when Outcome is ClaimRefused.
	Err error
}
