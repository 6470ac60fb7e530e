package parallel

import (
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// ids converts ints to task ids, for fixtures.
func ids(ns ...int) []domain.TaskID {
	if len(ns) == 0 {
		return nil
	}
	out := make([]domain.TaskID, len(ns))
	for i, n := range ns {
		out[i] = domain.TaskID(n)
	}
	return out
}

// pending is a medium-priority pending task with dependencies.
func pending(id int, deps ...int) Task {
	return Task{ID: domain.TaskID(id), Status: "pending", Priority: PriorityMedium, Deps: ids(deps...)}
}

// with returns t with the given files.
func (t Task) with(files ...string) Task { t.Files = files; return t }

// prio returns t with priority p.
func (t Task) prio(p int) Task { t.Priority = p; return t }

// status returns t with status s.
func (t Task) status(s string) Task { t.Status = s; return t }

// waveIDs summarises waves as lists of ints.
func waveIDs(ws []Wave) [][]int {
	out := make([][]int, len(ws))
	for i, w := range ws {
		for _, id := range w.IDs() {
			out[i] = append(out[i], int(id))
		}
	}
	return out
}

// reasonsOf returns the reasons of task id in ws.
func reasonsOf(ws []Wave, id int) []string {
	for _, w := range ws {
		for _, p := range w.Tasks {
			if int(p.Task.ID) == id {
				return p.Reasons
			}
		}
	}
	return nil
}

// claim is a lease of agent on task that expires at t0+left.
func claim(task int, agent string, left time.Duration) Claim {
	return Claim{Task: domain.TaskID(task), Agent: agent, Acquired: t0.Add(-time.Hour),
		Expires: t0.Add(left), Heartbeat: t0.Add(left - domain.DefaultLeaseTTL)}
}
