package implied

import (
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
)

// Readiness is when each task of tasks.md became ready to be worked on
// (lifecycle.Readiness), from its rows and the lifecycle records: a queued
// task's pending time counts from then. Nil (every task counts from its
// state's start) when tasks.md is missing.
func Readiness(ts *plan.Tasks, records map[domain.TaskID]lifecycle.Task) lifecycle.ReadyAt {
	if ts == nil {
		return nil
	}
	rows := make([]lifecycle.Row, 0, len(ts.Tasks))
	for _, t := range ts.Tasks {
		if t.ID <= 0 {
			continue
		}
		r := lifecycle.Row{ID: domain.TaskID(t.ID)}
		for _, d := range t.DependsOn {
			r.Deps = append(r.Deps, domain.TaskID(d))
		}
		switch t.StatusNorm() {
		case plan.StatusDone, plan.StatusCancelled:
			r.Done = true
		case plan.StatusInProgress:
			r.Started = true
		}
		rows = append(rows, r)
	}
	return lifecycle.Readiness(rows, records)
}
