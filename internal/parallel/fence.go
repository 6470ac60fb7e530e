package parallel

import (
	"fmt"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Fence is what a caller presents with a claim write: its place and the
// token of the claim it holds (docs/parallel.md, "Identity and fencing").
type Fence = domain.Fence

// StaleTokenError refuses a write that presents the token of a claim that
// is no longer the task's: it was released, or taken over by a claim with
// a higher token. Its holder can never write for that claim again.
type StaleTokenError struct {
	Task    domain.TaskID
	Token   int64  // the token presented
	Current *Claim // the task's claim now, nil when none
}

func (e *StaleTokenError) Error() string {
	if e.Current == nil {
		return fmt.Sprintf("task %d: not claimed any more: fencing token %d is stale (its claim was released or taken over)", e.Task, e.Token)
	}
	return fmt.Sprintf("task %d: fencing token %d is stale: the task is claimed by %s with token %d now", e.Task, e.Token, e.Current.Agent, e.Current.Token)
}

// PlaceError refuses a name used from another place while the claim made
// under it elsewhere is live: two runners given the same name must not
// share a claim.
type PlaceError struct {
	Task  domain.TaskID
	Agent string
	Held  string // the place of the live claim
	Here  string // the place of the refused command
}

func (e *PlaceError) Error() string {
	return fmt.Sprintf("task %d: %s holds it from %s; this command runs as %s from %s, another place",
		e.Task, e.Agent, e.Held, e.Agent, e.Here)
}

// DecideFence decides whether agent, presenting f, may write for its
// claim on task (current: the stored claim, nil when none). A token
// presented (> 0) must be the current claim's; a place presented must be
// the live claim's when agent holds it. nil when the write may go on.
func DecideFence(task domain.TaskID, current *Claim, agent string, f Fence, now time.Time) error {
	if f.Token > 0 && (current == nil || current.Token != f.Token || current.Agent != agent) {
		var cur *Claim
		if current != nil {
			c := *current
			cur = &c
		}
		return &StaleTokenError{Task: task, Token: f.Token, Current: cur}
	}
	if current != nil && current.Agent == agent && elsewhere(current.Place, f.Place) && current.Live(now) {
		return &PlaceError{Task: task, Agent: agent, Held: current.Place, Here: f.Place}
	}
	return nil
}

// elsewhere reports whether two places are known and differ.
func elsewhere(held, here string) bool { return held != "" && here != "" && held != here }

// DecideClaimAt is DecideClaim for an agent at a place: the same name from
// another place is refused while its claim is live; a claim granted,
// taken over or renewed records the place (the store issues its token).
func DecideClaimAt(task domain.TaskID, current *Claim, agent string, f Fence, now time.Time, ttl time.Duration) ClaimDecision {
	if err := DecideFence(task, current, agent, Fence{Place: f.Place}, now); err != nil {
		return refuse(err, current)
	}
	d := DecideClaim(task, current, agent, now, ttl)
	if d.Outcome == Renewed && elsewhere(current.Place, f.Place) {
		// Its expired claim, from another place: a new claim with a new
		// token, so that the runner there can no longer write for it.
		prev := *current
		d = ClaimDecision{Outcome: Takeover, Claim: lease(task, agent, now, ttl), Previous: &prev}
	}
	if d.Outcome != Refused && f.Place != "" {
		d.Claim.Place = f.Place
	}
	return d
}

// DecideHeartbeatAt is DecideHeartbeat with the fence checked first.
func DecideHeartbeatAt(task domain.TaskID, current *Claim, agent string, f Fence, now time.Time, ttl time.Duration) ClaimDecision {
	// Another agent's claim is refused by name, the plainer reason.
	if agent != "" && (current == nil || current.Agent == agent) {
		if err := DecideFence(task, current, agent, f, now); err != nil {
			return refuse(err, current)
		}
	}
	d := DecideHeartbeat(task, current, agent, now, ttl)
	if d.Outcome == Renewed && f.Place != "" {
		d.Claim.Place = f.Place
	}
	return d
}

// DecideReleaseAt is DecideRelease with the fence checked first.
func DecideReleaseAt(task domain.TaskID, current *Claim, agent string, f Fence, now time.Time) ClaimDecision {
	// Another agent's claim is refused by name, the plainer reason.
	if agent != "" && (current == nil || current.Agent == agent) {
		if err := DecideFence(task, current, agent, f, now); err != nil {
			return refuse(err, current)
		}
	}
	return DecideRelease(task, current, agent, now)
}

// DecideWriteAt is DecideWrite with the fence: a stale token is refused
// even with force (its holder lost the claim; a deliberate override is
// made without a token), and the holder's name from another place is
// refused unless force.
func DecideWriteAt(task domain.TaskID, current *Claim, actor string, f Fence, force bool, now time.Time) WriteDecision {
	if actor != "" {
		err := DecideFence(task, current, actor, f, now)
		if _, stale := err.(*StaleTokenError); stale || (err != nil && !force) {
			d := WriteDecision{Outcome: WriteRefused, Err: err}
			if current != nil {
				h := *current
				d.Holder = &h
			}
			return d
		}
		if err != nil { // another place, forced
			h := *current
			return WriteDecision{Outcome: WriteForced, Holder: &h}
		}
	}
	return DecideWrite(task, current, actor, force, now)
}

// PlaceOf is the readable place of a runner: machine, clone and worktree,
// joined by colons (docs/parallel.md, "Identity and fencing").
func PlaceOf(host, clone, worktree string) string {
	return clean(host, 40) + ":" + clean(clone, 40) + ":" + clean(worktree, 30)
}

// Identity is the agent name a runner gets when none is given: its place
// and, when the harness names one, its session (the first 8 characters).
func Identity(place, session string) string {
	session = clean(session, 8)
	if session == "" || session == "-" {
		return place
	}
	return place + ":" + session
}

// clean keeps a part of a name printable, without spaces or colons, and
// at most n characters long; "-" when empty.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r <= ' ' || r == ':' || r == 0x7f || r > 0x7e {
			return '-'
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > n {
		s = s[:n]
	}
	if s == "" {
		return "-"
	}
	return s
}
