package cli

import (
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
)

// readiness is when each task of the plan became ready (tasks.md and the
// records given, state.json's: the finished tasks' times are there), so a
// queued task's pending time counts from then (docs/lifecycle.md,
// "Timeouts"). Nil when tasks.md does not read: every task counts from its
// state's start.
func readiness(p *store.Plan, records map[domain.TaskID]lifecycle.Task) lifecycle.ReadyAt {
	ts, _, err := p.Tasks()
	if err != nil {
		return nil
	}
	return implied.Readiness(ts, records)
}
