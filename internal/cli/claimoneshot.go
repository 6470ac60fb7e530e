package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

// A shared store claims in one round trip (docs/fleet.md, "One round
// trip"): the claim, its fencing token, its coordination event and its
// lifecycle move in one statement. The lifecycle machine decides the move
// beforehand for every state the task's shared record may be in
// (lifeMoves); the store records the one of the state it finds. The
// clone's own files are left alone: the database is the record every
// clone reads.

// lifeClaimer is a shared store that claims the next task in one round trip.
type lifeClaimer interface {
	ClaimNextLife(ctx context.Context, p store.PlanKey, ready, inProgress []domain.TaskID, agent string, ttl time.Duration, f domain.Fence, moves store.LifeMoves) (domain.ClaimDecision, bool, []string, error)
}

// oneHeartbeater renews a lease in one round trip.
type oneHeartbeater interface {
	HeartbeatOne(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, ttl time.Duration, f domain.Fence) (domain.ClaimDecision, error)
}

// lifeReleaser releases a claim in one round trip, with its lifecycle move.
type lifeReleaser interface {
	ReleaseLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, moves store.LifeMoves) (domain.ClaimDecision, []string, error)
}

// lifeWriter appends a fenced write's events in one round trip, with its
// lifecycle move.
type lifeWriter interface {
	AppendWriteLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, moves store.LifeMoves, evs ...events.Event) (store.Written, error)
	// AppendForcedLife is AppendWriteLife with --force, logging the override.
	AppendForcedLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, moves store.LifeMoves, ov store.Override, evs ...events.Event) (store.Written, error)
}

// lifeMoves decides step for every state a task's shared record may be
// in: none yet (created in pending first), each state held by another
// agent, and assigned to agent. A state step refuses or leaves alone has
// no lines.
func lifeMoves(plan string, step lifeStep, agent string) store.LifeMoves {
	return lifeMovesAt(plan, step, agent, "")
}

// lifeMovesAt is lifeMoves stamping head (the checkout whose HEAD a move
// into committing records, "" for none); the states whose move the
// machine refuses are Refuse.
func lifeMovesAt(plan string, step lifeStep, agent, head string) store.LifeMoves {
	m := store.LifeMoves{Lines: map[string][][]byte{}}
	at := store.TimeSentinel
	id := domain.TaskID(store.TaskSentinel)
	headSHA := ""
	add := func(key string, t lifecycle.Task, pre []lifecycle.Effect) {
		next, effs, err := step(t, at)
		if err != nil {
			m.Refuse = append(m.Refuse, key)
			return
		}
		if len(effs) == 0 {
			return
		}
		if head != "" && lifecycle.EntersCommitting(effs) {
			if headSHA == "" {
				headSHA, _ = gitwt.Head(head)
			}
			if headSHA != "" {
				lifecycle.StampHead(map[domain.TaskID]lifecycle.Task{id: next}, effs, headSHA)
			}
		}
		for _, e := range lifecycle.Events(append(pre, effs...)) {
			e.Plan = plan
			if line, err := json.Marshal(e); err == nil {
				m.Lines[key] = append(m.Lines[key], line)
			}
		}
	}
	if t, created, err := lifecycle.New(id, lifecycle.ActorAgent, at); err == nil {
		add(store.LifeKey("", false), t, created)
	}
	for _, s := range lifecycle.States() {
		t := syntheticRecord(id, s, at, "\x00another agent")
		add(store.LifeKey(string(s), false), t, nil)
		if s == lifecycle.Assigned {
			t.Agent = agent
			add(store.LifeKey(string(s), true), t, nil)
		}
	}
	return m
}

// sayLife says on stderr what the lifecycle lines a store recorded moved.
func sayLife(s *Streams, lines []string) {
	for _, l := range lines {
		var e events.Event
		if json.Unmarshal([]byte(l), &e) != nil || e.Event == string(lifecycle.KindCreated) {
			continue
		}
		fmt.Fprintf(s.Err, "%s\n", eventMessage(e))
	}
}

// lifeRefusal is the machine's refusal of step for a task whose shared
// record is in the state of key, worded as a move refused on the record.
func lifeRefusal(task domain.TaskID, key string, step lifeStep, now time.Time) error {
	st, _, _ := strings.Cut(key, "/")
	now = now.Truncate(time.Second)
	t := syntheticRecord(task, lifecycle.State(st), now, "")
	_, _, err := step(t, now)
	if err == nil {
		return fmt.Errorf("task %d: its shared lifecycle record (%s) refused the move", task, st)
	}
	if lifecycle.Refused(err) {
		return &refusal{err: err, task: t, actor: lifecycle.ActorAgent}
	}
	return err
}

// syntheticRecord is a record in state since at, as a task that went
// along the chain gets there (every state before it entered).
func syntheticRecord(id domain.TaskID, s lifecycle.State, at time.Time, agent string) lifecycle.Task {
	t := lifecycle.Task{ID: id, State: s, Since: at, Created: at, Failures: map[lifecycle.State]int{},
		Entered: map[lifecycle.State]time.Duration{}, Agent: agent}
	for _, x := range lifecycle.States() {
		if x == s {
			break
		}
		t.Entered[x] = 0
	}
	return t
}

// lifeTaskClaimer is a shared store that claims a named task in one
// round trip, with its lifecycle move.
type lifeTaskClaimer interface {
	ClaimLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, ttl time.Duration, f domain.Fence, moves store.LifeMoves) (store.Claimed, error)
}

// closedStates are the lifecycle states in which no agent claims a task
// (unclaimable).
var closedStates = []lifecycle.State{lifecycle.CTOIntervention, lifecycle.HumanEscalation, lifecycle.Completed, lifecycle.Abandoned}

// claimTaskOne claims a named task in one round trip of a shared store:
// tasks.md and failed_tasks are checked here, the task's shared record
// and its latest result by the statement, which refuses a task closed by
// either (as claimTask refuses it).
func claimTaskOne(s *Streams, cp *coordPlan, arg, agent string, ttl time.Duration, here domain.Fence, lc lifeTaskClaimer) (parallel.ClaimDecision, []string, error) {
	task, err := cp.p.TaskID(arg)
	if err != nil {
		return parallel.ClaimDecision{}, nil, usageErr(err, "")
	}
	tasks, _, err := cp.schedTasksOf(false, false)
	if err != nil {
		return parallel.ClaimDecision{}, nil, err
	}
	for _, t := range tasks {
		if t.ID != task {
			continue
		}
		t.Life = "" // the shared record decides, in the statement
		if err := unclaimable(t); err != nil {
			return parallel.ClaimDecision{}, nil, err
		}
		if open := openDeps(tasks, t); len(open) > 0 {
			fmt.Fprintf(s.Err, "taskie: warning: task %d depends on %s, not done yet\n", task, joinIDs(open))
		}
	}
	if err := refuseFinished(task, agent, slices.Contains(cp.failedTasks(), task), "", false); err != nil {
		return parallel.ClaimDecision{}, nil, err
	}
	var moves store.LifeMoves
	if snap, err := cp.p.Snapshot(); err == nil && snap.State != nil {
		moves = lifeMoves(cp.p.ID, claimStep(agent), agent)
	} // else no lifecycle, as commitLife moves none without state.json
	for _, st := range closedStates {
		moves.Refuse = append(moves.Refuse, store.LifeKey(string(st), false))
	}
	c, err := lc.ClaimLife(cp.ctx, cp.key, task, agent, ttl, here, moves)
	switch {
	case err != nil:
		return parallel.ClaimDecision{}, nil, err
	case c.Closed && c.Complete != "":
		return parallel.ClaimDecision{}, nil, refuseFinished(task, agent, false, c.Complete, false)
	case c.Closed:
		st, _, _ := strings.Cut(c.LifeKey, "/")
		err := unclaimable(parallel.Task{ID: task, Status: plan.StatusPending, Life: lifecycle.State(st)})
		if err == nil {
			err = fmt.Errorf("task %d: its shared lifecycle record (%s) refused the claim", task, st)
		}
		return parallel.ClaimDecision{}, nil, err
	}
	return c.Decision, c.Lines, nil
}
