package implied

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
)

// releaseDeadline bounds the release of a commit's claims: a shared store
// that went silent must not hold a command or the hook up.
const releaseDeadline = 3 * time.Second

// Committed releases the claims of the tasks change c took out of the
// schedule — completed, abandoned or with a human — whoever holds them: no
// agent works on them any more (docs/parallel.md). Every write of the
// plan calls it, so a task completed by the Stop hook, by a commit seen or
// by a lifecycle command keeps no live claim. A release that fails is
// said on p.Notes; the plan is written either way.
func (Implier) Committed(p *store.Plan, c store.Change) {
	left := leftTasks(c)
	if len(left) == 0 {
		return
	}
	for _, r := range ReleaseClaims(p, left) {
		if p.Notes != nil {
			fmt.Fprintln(p.Notes, r)
		}
	}
}

// leftTasks are the tasks change c moves into a state that takes them out
// of the schedule, with the state, in the order of its events.
func leftTasks(c store.Change) map[domain.TaskID]lifecycle.State {
	var out map[domain.TaskID]lifecycle.State
	for _, e := range c.Events {
		st := lifecycle.State(e.To)
		switch parallel.StandingOf("", st) {
		case parallel.Finished, parallel.Dropped, parallel.WithHuman:
		default:
			continue
		}
		id, err := domain.ParseTaskID(e.Task)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[domain.TaskID]lifecycle.State{}
		}
		out[id] = st
	}
	return out
}

// ReleaseClaims releases the live claims on tasks (each with the state
// that took it out of the schedule) in the plan's coordination store, and
// returns one line per claim released or not released.
func ReleaseClaims(p *store.Plan, tasks map[domain.TaskID]lifecycle.State) []string {
	cfg, _ := Config(p)
	settings := store.CoordSettings{Store: cfg.Store, Project: cfg.Project, Clock: p.Store.Clock}
	if slices.Contains(cfg.Ignored, "store") {
		settings.Ignored = cfg.IgnoredMessage()
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseDeadline)
	defer cancel()
	ids := make([]domain.TaskID, 0, len(tasks))
	for id := range tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	c, project, err := store.OpenCoordination(ctx, p.Repo.Root, settings)
	if err != nil {
		return []string{fmt.Sprintf("taskie: warning: task %d is %s, but its claim was not released: %v", ids[0], tasks[ids[0]], err)}
	}
	defer c.Close()
	key := store.PlanKey{Project: project, Plan: p.ID}
	claims, err := c.Claims(ctx, key)
	if err != nil {
		return []string{fmt.Sprintf("taskie: warning: task %d is %s, but its claim was not released: %v", ids[0], tasks[ids[0]], err)}
	}
	var out []string
	for _, id := range ids {
		st := tasks[id]
		held := parallel.ClaimOf(claims, id)
		if held == nil {
			continue
		}
		d, err := c.Release(ctx, key, id, held.Agent)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("taskie: warning: task %d is %s, but the claim of %s was not released: %v (release it with `taskie release %d --as %s`)", id, st, held.Agent, err, id, held.Agent))
		case d.Outcome == parallel.Released:
			where := string(st)
			if st == lifecycle.HumanEscalation {
				where = "in " + where
			}
			out = append(out, fmt.Sprintf("task %d: claim of %s released (the task is %s)", id, held.Agent, where))
		}
	}
	return out
}
