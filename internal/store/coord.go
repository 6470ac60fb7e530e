package store

import (
	"context"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/parallel"
)

// Coordination is the data the agents working on one plan share live:
// claims with leases, and the plan's events. Plan content (plan.md,
// tasks.md, task files, reviews) travels through git; this does not. The
// file implementation keeps it where every worktree of a clone sees it
// (the git common directory); a PostgreSQL one shares it across clones and
// machines. Claim policy is decided by package parallel; an implementation
// only makes it atomic.
type Coordination interface {
	// Claim gives task to agent for ttl unless another agent holds a live
	// lease; an expired lease is taken over (the result says whose).
	Claim(ctx context.Context, plan PlanKey, task domain.TaskID, agent string, ttl time.Duration) (parallel.ClaimDecision, error)
	// ClaimNext claims the first of ready (in order) that no other agent
	// holds; ok is false when every one is held.
	ClaimNext(ctx context.Context, plan PlanKey, ready []domain.TaskID, agent string, ttl time.Duration) (d parallel.ClaimDecision, ok bool, err error)
	// Heartbeat renews agent's lease on task.
	Heartbeat(ctx context.Context, plan PlanKey, task domain.TaskID, agent string, ttl time.Duration) (parallel.ClaimDecision, error)
	// Release lets agent's claim on task go.
	Release(ctx context.Context, plan PlanKey, task domain.TaskID, agent string) (parallel.ClaimDecision, error)
	// Claims lists the plan's claims, live and expired, by task.
	Claims(ctx context.Context, plan PlanKey) ([]parallel.Claim, error)
	// Now is the coordination clock: leases expire by it (the database's
	// clock for PostgreSQL; TASKIE_NOW or the local clock for files).
	Now(ctx context.Context) (time.Time, error)
	// AppendEvents and ScanEvents share the plan's coordination events
	// (claims, takeovers, releases).
	AppendEvents(ctx context.Context, plan PlanKey, evs ...events.Event) error
	ScanEvents(ctx context.Context, plan PlanKey, fn func(events.Event)) error
	Close() error
}

// Coordination event kinds, the same for every implementation. A renewal
// (heartbeat, or a claim by the holder) is not logged: it moves an expiry
// and nothing else.
const (
	EventClaim         = events.Claim     // a task was free and is now claimed
	EventClaimTakeover = "CLAIM_TAKEOVER" // an expired lease was taken over (From: its holder)
	EventRelease       = "RELEASE"        // the holder let its claim go
	EventTaskResult    = "TASK_RESULT"    // a subagent's result (meta: status, commit, attempt)
)

// PlanKey names a plan across clones: the repository's identity (its
// origin URL normalised, or `project` in config) and the plan id.
type PlanKey struct {
	Project string
	Plan    string
}
