package store

import (
	"context"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
)

// Coordination is the data the agents working on one plan share live:
// claims with leases, and the plan's events. Plan content (plan.md,
// tasks.md, task files, reviews) travels through git; this does not. The
// file implementation keeps it where every worktree of a clone sees it
// (the git common directory); a PostgreSQL one shares it across clones and
// machines. Claim policy is decided by package parallel (ClaimRules); an implementation
// only makes it atomic.
type Coordination interface {
	// Claim gives task to agent for ttl unless another agent holds a live
	// lease; an expired lease is taken over (the result says whose). A
	// claim granted or taken over gets a fencing token higher than every
	// token the task had; f says where agent runs (at most one).
	Claim(ctx context.Context, plan PlanKey, task domain.TaskID, agent string, ttl time.Duration, f ...domain.Fence) (domain.ClaimDecision, error)
	// ClaimNext claims the first of ready (in order) that no other agent
	// holds; ok is false when every one is held.
	ClaimNext(ctx context.Context, plan PlanKey, ready []domain.TaskID, agent string, ttl time.Duration, f ...domain.Fence) (d domain.ClaimDecision, ok bool, err error)
	// Heartbeat renews agent's lease on task; a stale token in f, or a
	// live claim of agent's made from another place, is refused.
	Heartbeat(ctx context.Context, plan PlanKey, task domain.TaskID, agent string, ttl time.Duration, f ...domain.Fence) (domain.ClaimDecision, error)
	// Release lets agent's claim on task go, fenced as Heartbeat.
	Release(ctx context.Context, plan PlanKey, task domain.TaskID, agent string, f ...domain.Fence) (domain.ClaimDecision, error)
	// AppendFenced appends evs only while agent's claim on task is the one
	// f names (ClaimRules.Fence), atomically with that check; no events
	// only checks. A refusal is the rules' error.
	AppendFenced(ctx context.Context, plan PlanKey, task domain.TaskID, agent string, f domain.Fence, evs ...events.Event) error
	// Claims lists the plan's claims, live and expired, by task.
	Claims(ctx context.Context, plan PlanKey) ([]domain.Claim, error)
	// Now is the coordination clock: leases expire by it (the database's
	// clock for PostgreSQL; TASKIE_NOW or the local clock for files).
	Now(ctx context.Context) (time.Time, error)
	// AppendEvents and ScanEvents share the plan's coordination events
	// (claims, takeovers, releases).
	AppendEvents(ctx context.Context, plan PlanKey, evs ...events.Event) error
	ScanEvents(ctx context.Context, plan PlanKey, fn func(events.Event)) error
	Close() error
}

// FenceOf is the fence of a variadic argument: the first, or none.
func FenceOf(f []domain.Fence) domain.Fence {
	if len(f) > 0 {
		return f[0]
	}
	return domain.Fence{}
}

// Coordination event kinds, the same for every implementation. A renewal
// (heartbeat, or a claim by the holder) is not logged: it moves an expiry
// and nothing else.
const (
	EventClaim         = events.Claim         // a task was free and is now claimed
	EventClaimTakeover = events.ClaimTakeover // an expired lease was taken over (From: its holder)
	EventRelease       = events.Release       // the holder let its claim go
	EventTaskResult    = events.TaskResult    // a subagent's result (events.TaskResultMeta)
)

// PlanKey names a plan across clones: the repository's identity (its
// origin URL normalised, or `project` in config) and the plan id.
type PlanKey struct {
	Project string
	Plan    string
}

// ClaimRules are the claims policy the coordination stores apply: under
// their lock they read a task's lease, ask the rules, and write what they
// decide; the store decides nothing. The rules are package parallel's
// (DecideClaimAt, DecideHeartbeatAt, DecideReleaseAt, DecideFence), handed over by the shell
// that makes claims with SetClaimRules, as a store package registers
// itself with RegisterCoordination: the store imports no decider.
type ClaimRules struct {
	Claim     func(task domain.TaskID, current *domain.Claim, agent string, f domain.Fence, now time.Time, ttl time.Duration) domain.ClaimDecision
	Heartbeat func(task domain.TaskID, current *domain.Claim, agent string, f domain.Fence, now time.Time, ttl time.Duration) domain.ClaimDecision
	Release   func(task domain.TaskID, current *domain.Claim, agent string, f domain.Fence, now time.Time) domain.ClaimDecision
	// Fence decides whether agent, presenting f, may still write for its
	// claim on task (a stale token, another place: an error).
	Fence func(task domain.TaskID, current *domain.Claim, agent string, f domain.Fence, now time.Time) error
}

var (
	rulesMu sync.Mutex
	rules   *ClaimRules
)

// SetClaimRules hands the claims policy to every coordination store.
func SetClaimRules(r ClaimRules) {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	rules = &r
}

// Rules returns the claims policy handed over; a program that claims
// without one is wrong, and stops.
func Rules() ClaimRules {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	if rules == nil {
		panic("store: no claims policy: call store.SetClaimRules with package parallel's rules first")
	}
	return *rules
}
