package parallel

import (
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
)

// Ready returns the tasks that can start now, in scheduling order
// (inherited priority, own priority, id): every dependency done or
// cancelled, and either pending without a live lease or in progress with
// an expired one (or none, awaiting its retry); never a task whose
// lifecycle closed it or that waits on a CTO or a human (StandingOf).
func Ready(tasks []Task, claims []Claim, now time.Time) []Task {
	g := newGraph(tasks)
	r := newRanking(g)
	held := leases(claims)
	var idx []int
	for i, t := range tasks {
		if r.open[i] && startable(t, held, now) && depsClosed(g, i) {
			idx = append(idx, i)
		}
	}
	r.sort(idx)
	out := make([]Task, len(idx))
	for k, i := range idx {
		out[k] = tasks[i]
	}
	return out
}

// startable applies the standing, status and lease rules of Ready.
func startable(t Task, held map[domain.TaskID]Claim, now time.Time) bool {
	if t.standing() != Schedulable {
		return false
	}
	c, claimed := held[t.ID]
	switch t.Status {
	case plan.StatusPending:
		return !claimed || !c.Live(now)
	case plan.StatusInProgress:
		return (claimed || t.Retry) && !(claimed && c.Live(now))
	}
	return false
}

// depsClosed reports whether every dependency of task i is a known task
// that is done or cancelled.
func depsClosed(g *graph, i int) bool {
	for _, d := range g.tasks[i].Deps {
		j, ok := g.idx[d]
		if !ok || !closed(g.tasks[j]) {
			return false
		}
	}
	return true
}

// OwnLive returns the task "claim --next" gives back to agent: of the
// pending or in-progress tasks on which it holds a live lease and that
// skip does not exclude (nil: none), the first in scheduling order — the
// order Ready and Groups use, so a restarted agent resumes the task that
// matters most, not the lowest id. A postponed or blocked task is not
// given back: a person parked it.
func OwnLive(tasks []Task, claims []Claim, agent string, now time.Time, skip func(domain.TaskID) bool) (domain.TaskID, bool) {
	return ownLive(tasks, leases(claims), agent, now, skip)
}

func ownLive(tasks []Task, held map[domain.TaskID]Claim, agent string, now time.Time, skip func(domain.TaskID) bool) (domain.TaskID, bool) {
	if agent == "" {
		return 0, false
	}
	g := newGraph(tasks)
	r := newRanking(g)
	best := -1
	for i, t := range tasks {
		c, claimed := held[t.ID]
		if !r.open[i] || !claimed || c.Agent != agent || !c.Live(now) ||
			t.standing() != Schedulable || skip != nil && skip(t.ID) {
			continue
		}
		if best < 0 || r.compare(i, best) < 0 {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return tasks[best].ID, true
}
