package parallel

import (
	"errors"
	"fmt"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// The claims data are the domain's (the coordination store writes them
// without this package); the names here keep the policy's callers short.
type (
	Claim         = domain.Claim
	Outcome       = domain.ClaimOutcome
	ClaimDecision = domain.ClaimDecision
)

// Outcomes.
const (
	Granted  = domain.ClaimGranted
	Renewed  = domain.ClaimRenewed
	Takeover = domain.ClaimTakeover
	Refused  = domain.ClaimRefused
	Released = domain.ClaimReleased
)

// Never is domain.Never: the expiry of a lease that never expires.
var Never = domain.Never

// Errors carried by refusals. A refusal over another agent's lease is a
// *HeldError.
var (
	ErrNoAgent    = errors.New("an agent name is required")
	ErrNotClaimed = errors.New("not claimed")
)

// HeldError refuses an agent a task claimed by another agent.
type HeldError struct {
	Task   domain.TaskID
	Holder Claim
	Agent  string    // the agent refused
	Now    time.Time // when it was refused
}

func (e *HeldError) Error() string {
	h := e.Holder
	if !h.Live(e.Now) {
		return fmt.Sprintf("task %d: claimed by %s, whose lease expired at %s; claim it to take it over",
			e.Task, h.Agent, h.Expires.UTC().Format(time.RFC3339))
	}
	if h.Endless() {
		return fmt.Sprintf("task %d: claimed by %s with a lease that never expires (a lease lasts at most %s: the store was edited by hand)",
			e.Task, h.Agent, MaxLeaseTTL)
	}
	return fmt.Sprintf("task %d: claimed by %s until %s (%s left)",
		e.Task, h.Agent, h.Expires.UTC().Format(time.RFC3339), h.Expires.Sub(e.Now).Round(time.Second))
}

// DecideClaim decides agent's claim on task, given the stored claim
// (nil when none): Granted when free, Renewed when agent holds it (live
// or expired; Acquired is kept), Takeover when another agent's lease has
// expired, Refused when another agent's lease is live. A ttl ≤ 0 is
// domain.DefaultLeaseTTL; one above MaxLeaseTTL is MaxLeaseTTL.
func DecideClaim(task domain.TaskID, current *Claim, agent string, now time.Time, ttl time.Duration) ClaimDecision {
	if agent == "" {
		return refuse(ErrNoAgent, current)
	}
	fresh := lease(task, agent, now, ttl)
	switch {
	case current == nil:
		return ClaimDecision{Outcome: Granted, Claim: fresh}
	case current.Agent == agent:
		return renew(task, *current, now, ttl)
	case !current.Live(now):
		prev := *current
		return ClaimDecision{Outcome: Takeover, Claim: fresh, Previous: &prev}
	}
	return refuse(&HeldError{Task: task, Holder: *current, Agent: agent, Now: now}, current)
}

// DecideHeartbeat decides agent's heartbeat on task: Renewed when agent
// holds the claim (an expired one is revived, since nobody took it over),
// Refused when the task is not claimed or another agent holds it.
func DecideHeartbeat(task domain.TaskID, current *Claim, agent string, now time.Time, ttl time.Duration) ClaimDecision {
	switch {
	case agent == "":
		return refuse(ErrNoAgent, current)
	case current == nil:
		return refuse(fmt.Errorf("task %d: %w: claim it first", task, ErrNotClaimed), nil)
	case current.Agent != agent:
		return refuse(&HeldError{Task: task, Holder: *current, Agent: agent, Now: now}, current)
	}
	return renew(task, *current, now, ttl)
}

// DecideRelease decides agent's release of task: only the holder may
// release, its lease live or expired; anyone else, or an unclaimed task,
// is Refused.
func DecideRelease(task domain.TaskID, current *Claim, agent string, now time.Time) ClaimDecision {
	switch {
	case agent == "":
		return refuse(ErrNoAgent, current)
	case current == nil:
		return refuse(fmt.Errorf("task %d: %w", task, ErrNotClaimed), nil)
	case current.Agent != agent:
		return refuse(&HeldError{Task: task, Holder: *current, Agent: agent, Now: now}, current)
	}
	return ClaimDecision{Outcome: Released, Claim: *current}
}

func lease(task domain.TaskID, agent string, now time.Time, ttl time.Duration) Claim {
	if ttl <= 0 {
		ttl = domain.DefaultLeaseTTL
	}
	ttl = min(ttl, MaxLeaseTTL)
	return Claim{Task: task, Agent: agent, Acquired: now, Expires: now.Add(ttl), Heartbeat: now}
}

func renew(task domain.TaskID, c Claim, now time.Time, ttl time.Duration) ClaimDecision {
	revived := !c.Live(now)
	fresh := lease(task, c.Agent, now, ttl)
	fresh.Acquired = c.Acquired
	fresh.Token, fresh.Place = c.Token, c.Place
	return ClaimDecision{Outcome: Renewed, Claim: fresh, Revived: revived}
}

func refuse(err error, current *Claim) ClaimDecision {
	d := ClaimDecision{Outcome: Refused, Err: err}
	if current != nil {
		prev := *current
		d.Previous = &prev
	}
	return d
}

// leases indexes claims by task; of two claims on one task (a store should
// never hold them) the one that expires last wins.
func leases(claims []Claim) map[domain.TaskID]Claim {
	m := make(map[domain.TaskID]Claim, len(claims))
	for _, c := range claims {
		if old, ok := m[c.Task]; !ok || c.Expires.After(old.Expires) {
			m[c.Task] = c
		}
	}
	return m
}
