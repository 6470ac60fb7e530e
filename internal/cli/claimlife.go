package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// Claims move the lifecycle (docs/parallel.md, "Claims move the
// lifecycle"): a claim assigns a pending task to its agent, a result
// complete sends it to review (or to committing when reviews are off), a
// result failed counts a failure, a release without a result returns an
// assigned task to pending. Every move is the machine's (internal/
// lifecycle), one commit of the plan with its events.

// lifeStep decides the lifecycle moves of one coordination command on a
// task's record: the record after and the effects, or an error the
// machine gives. A record the task does not have yet is created in
// pending first.
type lifeStep func(t lifecycle.Task, now time.Time) (lifecycle.Task, []lifecycle.Effect, error)

// lifeMove is a decided lifecycle change of a coordination command.
type lifeMove struct {
	task   domain.TaskID
	reason string
	step   lifeStep
	files  map[string][]byte // plan files written in the same commit (task-T-output.md)
	head   string            // the checkout whose HEAD a move into committing records ("": none)
}

// errNoState is a plan without state.json: its lifecycle has nowhere to
// live, so coordination commands move nothing (claims still work).
var errNoState = errors.New("no state.json")

// preview decides m on the record as read now, without the lock: a move
// the machine refuses is refused before anything is written.
func (cp *coordPlan) preview(m lifeMove) error {
	snap, err := cp.p.Snapshot()
	if err != nil {
		return err
	}
	// With a shared store, on the task's record every clone decides from
	// (the commit warns if the store cannot be read).
	if h := holdShared(io.Discard, cp.p, m.task, false); h.shared {
		defer h.close()
		view := *snap
		view.State = h.withShared(snap.State, m.task)
		snap = &view
	} else {
		h.close()
	}
	_, _, err = decideLife(snap, m, cp.p.Store.Now(), false)
	if errors.Is(err, errNoState) {
		return nil
	}
	return err
}

// decideLife decides m on a snapshot: the new state.json and the events.
// Without write it only says whether m is refused (a preview: the records
// are encoded under the lock, by the commit).
func decideLife(snap *store.Snapshot, m lifeMove, now time.Time, write bool) (store.Change, lifecycle.Task, error) {
	st := snap.State
	if st == nil {
		return store.Change{}, lifecycle.Task{}, errNoState
	}
	tasks, err := taskrec.Records(st)
	if err != nil {
		return store.Change{}, lifecycle.Task{}, fmt.Errorf("state.json's lifecycle records do not decode: %w", err)
	}
	t, ok := tasks[m.task]
	var effs []lifecycle.Effect
	if !ok {
		if t, effs, err = lifecycle.New(m.task, lifecycle.ActorAgent, now); err != nil {
			return store.Change{}, lifecycle.Task{}, err
		}
	}
	next, more, err := m.step(t, now)
	if err != nil {
		if lifecycle.Refused(err) {
			err = &refusal{err: err, task: t, actor: lifecycle.ActorAgent}
		}
		return store.Change{}, t, err
	}
	if len(more) == 0 {
		return store.Change{Files: m.files}, next, nil
	}
	if !write {
		return store.Change{}, next, nil
	}
	effs = append(effs, more...)
	tasks[m.task] = next
	if m.head != "" && lifecycle.EntersCommitting(effs) {
		// The task's commit is one made after HEAD now: the merge.
		if head, err := gitwt.Head(m.head); err == nil {
			lifecycle.StampHead(tasks, effs, head)
			next = tasks[m.task]
		}
	}
	n := st.Clone()
	n.Lifecycle = lifecycle.Encode(tasks)
	return store.Change{Actor: "cli", Reason: m.reason, Kind: events.LifecycleCommit, Task: m.task, State: n,
		Events: lifecycle.Events(effs), Files: m.files}, next, nil
}

// commitLife makes m in one commit of the plan, under its lock, and says
// on stderr what moved. A plan without state.json moves nothing.
func (cp *coordPlan) commitLife(s *Streams, m lifeMove) (lifecycle.Task, error) {
	if _, err := cp.p.State(); len(m.files) == 0 && errors.Is(err, state.ErrNotFound) {
		return lifecycle.Task{}, nil // nothing to move, nothing to write: no lock taken
	}
	var evs []events.Event
	var rec lifecycle.Task
	err := updateTask(s, cp.p, m.task, func(snap *store.Snapshot) (store.Change, error) {
		c, t, err := decideLife(snap, m, cp.p.Store.Now(), true)
		if errors.Is(err, errNoState) {
			return store.Change{Files: m.files}, nil
		}
		evs, rec = c.Events, t
		return c, err
	})
	if err != nil {
		return rec, err
	}
	for _, e := range evs {
		if e.Event != string(lifecycle.KindCreated) {
			fmt.Fprintf(s.Err, "%s\n", eventMessage(e))
		}
	}
	return rec, nil
}

// lifeAfterClaim assigns a newly claimed task to its agent: pending →
// assigned. A task assigned to another agent (its lease expired and was
// taken over, or it was moved by hand) is released and assigned again, so
// the record names the agent at work; a task further on keeps its state
// (its work goes on under the new claim).
func (cp *coordPlan) lifeAfterClaim(s *Streams, task domain.TaskID, agent string) {
	m := lifeMove{task: task, reason: "task " + task.String() + " claimed by " + agent, step: claimStep(agent)}
	if _, err := cp.commitLife(s, m); err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: task %d is claimed by %s, but its lifecycle did not move to assigned: %v\n", task, agent, err)
	}
}

// claimStep assigns a pending task to agent; one assigned to another agent
// returns to pending first.
func claimStep(agent string) lifeStep {
	return func(t lifecycle.Task, now time.Time) (lifecycle.Task, []lifecycle.Effect, error) {
		var effs []lifecycle.Effect
		if t.State == lifecycle.Assigned && t.Agent != agent {
			var err error
			if t, effs, err = lifecycle.Move(t, lifecycle.Pending, lifecycle.ActorAgent, "claim taken over by "+agent, now); err != nil {
				return t, nil, err
			}
		}
		if t.State != lifecycle.Pending {
			return t, effs, nil
		}
		next, more, err := lifecycle.Assign(t, agent, lifecycle.ActorAgent, "claimed by "+agent, now)
		return next, append(effs, more...), err
	}
}

// lifeAfterRelease returns an assigned task to pending when its claim was
// released without a result; a task whose work went further keeps its
// state.
func (cp *coordPlan) lifeAfterRelease(s *Streams, task domain.TaskID, agent string) {
	if res, err := cp.results(); err == nil && res.completed(task) {
		return // released after its result: the work waits to be merged
	}
	m := lifeMove{task: task, reason: "task " + task.String() + " released by " + agent, step: releaseStep(agent)}
	if _, err := cp.commitLife(s, m); err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: task %d is released, but its lifecycle did not return to pending: %v\n", task, err)
	}
}

// releaseStep returns an assigned task to pending.
func releaseStep(agent string) lifeStep {
	return func(t lifecycle.Task, now time.Time) (lifecycle.Task, []lifecycle.Effect, error) {
		if t.State != lifecycle.Assigned {
			return t, nil, nil
		}
		return lifecycle.Move(t, lifecycle.Pending, lifecycle.ActorAgent, "claim of "+agent+" released without a result", now)
	}
}

// completeStep moves a task whose result is complete to quality_review,
// or past review to committing when the plan runs no reviews
// (max_reviews 0), along the chain as the plan phases do. A task still
// pending (its result stored without a claim) is assigned to the agent
// reporting first.
func completeStep(reviewsOff bool, agent string) lifeStep {
	ev, why := lifecycle.ReviewStarted, "result complete, review requested"
	if reviewsOff {
		ev, why = lifecycle.ReviewPassed, "result complete, reviews off (max_reviews 0)"
	}
	return func(t lifecycle.Task, now time.Time) (lifecycle.Task, []lifecycle.Effect, error) {
		var effs []lifecycle.Effect
		if t.State == lifecycle.Pending && agent != "" {
			var err error
			if t, effs, err = lifecycle.Assign(t, agent, lifecycle.ActorAgent, why, now); err != nil {
				return t, nil, err
			}
		}
		next, more, err := lifecycle.FromPhase(t, ev, lifecycle.ActorAgent, now)
		if err != nil {
			return t, nil, err
		}
		effs = append(effs, more...)
		for i := range effs {
			effs[i].Reason = why // a reason is the log's, not the record's
		}
		return next, effs, nil
	}
}

// failStep counts a failure in the task's state (the third escalates to
// cto_intervention, as the machine says); when the agent's claim was
// released and the task is still assigned, it returns to pending, ready
// for the next attempt.
func failStep(released bool, agent string) lifeStep {
	return func(t lifecycle.Task, now time.Time) (lifecycle.Task, []lifecycle.Effect, error) {
		why := "result failed"
		if agent != "" {
			why += " (" + agent + ")"
		}
		next, effs, err := lifecycle.Fail(t, lifecycle.ActorAgent, why, now)
		if err != nil || !released || next.State != lifecycle.Assigned {
			return next, effs, err
		}
		back, more, err := lifecycle.Move(next, lifecycle.Pending, lifecycle.ActorAgent, "claim released after a failed attempt", now)
		if err != nil {
			return next, effs, nil
		}
		return back, append(effs, more...), nil
	}
}
