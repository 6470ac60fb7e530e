package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
)

// EventClaimOverride records a write made with --force to a task another
// agent holds live: Actor overrode From.
const EventClaimOverride = events.ClaimOverride

// claimGuard is a decided write to a task: done records it once the write
// has been made (an override is an event of the coordination log).
type claimGuard struct {
	s       *Streams
	c       store.Coordination
	key     store.PlanKey
	ctx     context.Context
	task    domain.TaskID
	actor   string
	command string
	fence   domain.Fence // what the actor presented
	force   bool
	d       parallel.WriteDecision
}

// guardWrite decides whether actor may write to task given its claim
// (docs/parallel.md, "Claims protect their tasks"): a live claim of
// another agent refuses the write (exit 1) unless force.
func (cp *coordPlan) guardWrite(s *Streams, task domain.TaskID, actor string, token int64, force bool, command string) (*claimGuard, error) {
	return guardWrite(s, cp.ctx, cp.c, cp.files, cp.key, cp.p.Repo.Root, task, actor, token, force, command)
}

// guardWrite decides a write to task by actor, presenting its place and
// token (docs/parallel.md, "Identity and fencing"). A command given no
// name writes as this runner's identity when that holds the claim.
func guardWrite(s *Streams, ctx context.Context, c store.Coordination, files *store.FileCoord, key store.PlanKey, root string, task domain.TaskID, actor string, token int64, force bool, command string) (*claimGuard, error) {
	g := &claimGuard{s: s, c: c, key: key, ctx: ctx, task: task, actor: actor, command: command, force: force}
	claims, err := c.Claims(ctx, key)
	if err != nil {
		return nil, claimsUnread(err, task)
	}
	now, err := c.Now(ctx)
	if err != nil {
		return nil, usageErr(err, "unset it, or give a time like 2026-05-01T12:00:00Z")
	}
	cur := parallel.ClaimOf(claims, task)
	if g.actor == "" && cur != nil && cur.Agent == defaultAgent(root) {
		g.actor = cur.Agent
	}
	g.fence = domain.Fence{Place: placeOf(root)}
	if g.fence.Token, err = presentedToken(token); err != nil {
		return nil, err
	}
	if g.fence.Token == 0 && g.actor != "" && files != nil {
		if t, ok, err := files.HeldToken(key, task, g.actor, g.fence.Place); err == nil && ok {
			g.fence.Token = t
		}
	}
	g.d = parallel.DecideWriteAt(task, cur, g.actor, g.fence, force, now)
	if g.d.Outcome == parallel.WriteRefused {
		return nil, refusedWrite(command, task, g.actor, g.d)
	}
	return g, nil
}

// refusedWrite is the error of a write the rules refuse.
func refusedWrite(command string, task domain.TaskID, actor string, d parallel.WriteDecision) error {
	if h := fenceHint(d.Err, task, actor); h != "" {
		return &exitError{code: ExitProblems, err: fmt.Errorf("%s: %w", command, d.Err), hint: h}
	}
	return &exitError{code: ExitProblems, err: fmt.Errorf("%s: %w", command, d.Err),
		hint: fmt.Sprintf("only its holder writes to it (--as %s, or TASKIE_AGENT=%s); to override it deliberately, add --force (recorded); or wait for `taskie release %d --as %s`",
			d.Holder.Agent, d.Holder.Agent, task, d.Holder.Agent)}
}

// fenced makes write while the task's claim is held still in the store,
// after deciding again, on the claim as found under the store's lock,
// that the actor may write: a takeover or release that comes after the
// guard's decision can never let a stale holder's write through. A write
// that presents no claim (the task was free, no token) is made as is.
func (g *claimGuard) fenced(write func() error) error {
	if g == nil || (g.d.Outcome != parallel.WriteHolder && g.fence.Token == 0) {
		return write()
	}
	fl, ok := g.c.(store.FenceLocker)
	if !ok {
		return write()
	}
	return fl.Fenced(g.ctx, g.key, g.task, func(cur *domain.Claim, now time.Time) error {
		if d := parallel.DecideWriteAt(g.task, cur, g.actor, g.fence, g.force, now); d.Outcome == parallel.WriteRefused {
			return refusedWrite(g.command, g.task, g.actor, d)
		}
		return nil
	}, write)
}

func who(actor string) string {
	if actor == "" {
		return "an unnamed agent"
	}
	return actor
}

// claimsUnreadError is a guard that could not read the claims.
type claimsUnreadError struct{ err error }

func (e *claimsUnreadError) Error() string { return e.err.Error() }
func (e *claimsUnreadError) Unwrap() error { return e.err }

// claimsUnread is the error of a guard that could not read the claims.
func claimsUnread(err error, task domain.TaskID) error {
	return &exitError{code: ExitProblems, err: &claimsUnreadError{fmt.Errorf("task %d: reading its claim: %w", task, err)},
		hint: "a task's claim is checked before it is written; fix the coordination store, then run the same command again"}
}

// appendEvents logs a write's events: while the actor writes as the
// holder, or presents a token, only while its claim is still the one it
// presented (checked by the store atomically with the append).
func (g *claimGuard) appendEvents(evs ...events.Event) error {
	if g.d.Outcome == parallel.WriteHolder || g.fence.Token > 0 {
		err := g.c.AppendFenced(g.ctx, g.key, g.task, g.actor, g.fence, evs...)
		if h := fenceHint(err, g.task, g.actor); h != "" {
			return &exitError{code: ExitProblems, err: fmt.Errorf("%s: %w", g.command, err), hint: h}
		}
		return err
	}
	return g.c.AppendEvents(g.ctx, g.key, evs...)
}

// done records an override after the write it allowed.
func (g *claimGuard) done() {
	if g == nil || g.d.Outcome != parallel.WriteForced {
		return
	}
	h := g.d.Holder
	fmt.Fprintf(g.s.Err, "taskie: warning: task %d: %s by %s over the claim of %s (--force)\n", g.task, g.command, who(g.actor), h.Agent)
	ev := events.Event{Task: g.task.String(), Event: EventClaimOverride, Actor: g.actor, From: h.Agent,
		Reason: g.command + " with --force over a live claim",
		Meta:   events.Meta(events.ClaimOverrideMeta{Command: g.command, Holder: h.Agent, Expires: h.Expires})}
	if err := g.c.AppendEvents(g.ctx, g.key, ev); err != nil {
		fmt.Fprintf(g.s.Err, "taskie: warning: task %d: recording the override: %v\n", g.task, err)
	}
}

// forced is who a write overrode, and who did, for its own event's meta;
// zero when the write forced nothing.
func (g *claimGuard) forced() events.Forced {
	if g == nil || g.d.Outcome != parallel.WriteForced {
		return events.Forced{}
	}
	return events.Forced{ForcedOver: g.d.Holder.Agent, Agent: g.actor}
}

// guardPlanWrite opens the plan's coordination store to decide a write
// to task by the agent --as or TASKIE_AGENT names; close it with
// (*claimGuard).close after done. A store that cannot be reached or read
// is a warning and the write goes on: plan files are the clone's, and its
// changes are kept while the shared store is down (docs/fleet.md).
func guardPlanWrite(s *Streams, p *store.Plan, task domain.TaskID, as string, force bool, command string) (*claimGuard, error) {
	actor, err := optionalAgent(as)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	settings := coordSettings(p.Repo.TaskieDir())
	settings.Clock = p.Store.Clock // file leases: the real clock unless TASKIE_TEST_CLOCK=1
	c, proj, err := store.OpenCoordination(ctx, p.Repo.Root, settings)
	if err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: task %d: its claim was not checked: %v\n", task, err)
		return nil, nil
	}
	files, _ := c.(*store.FileCoord)
	if files == nil {
		if files, err = store.OpenFileCoord(p.Repo.Root); err == nil {
			defer files.Close()
		}
	}
	g, err := guardWrite(s, ctx, c, files, store.PlanKey{Project: proj, Plan: p.ID}, p.Repo.Root, task, actor, 0, force, command)
	var unread *claimsUnreadError
	if errors.As(err, &unread) {
		c.Close()
		fmt.Fprintf(s.Err, "taskie: warning: task %d: its claim was not checked: %v\n", task, unread.err)
		return nil, nil
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return g, nil
}

// close closes the coordination store guardPlanWrite opened.
func (g *claimGuard) close() {
	if g != nil {
		g.c.Close()
	}
}

// addGuardFlags adds --as and --force to a command that writes to a task.
func addGuardFlags(c *cobra.Command, as *string, force *bool) {
	c.Flags().StringVar(as, "as", "", "the agent acting (default $TASKIE_AGENT): a task claimed live takes writes from its holder only")
	c.Flags().BoolVar(force, "force", false, "write although another agent holds the task's live claim (recorded as an override)")
}
