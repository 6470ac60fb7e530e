package parallel

import (
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
)

// ChangeProgress lists the progress-log events (Progress) a change of a
// plan run with claims causes: tasks are the plan's tasks as scheduled
// (FromTable), size the wave size, before and after the lifecycle records
// around the change, and set the Status cells the change writes. None when the tasks
// cannot be scheduled (a cycle or an unknown id: validate reports it).
func ChangeProgress(tasks []Task, size int, before, after map[domain.TaskID]lifecycle.Task, set map[domain.TaskID]string) []ProgressEvent {
	waves, err := PlanWaves(tasks, size)
	if err != nil {
		return nil
	}
	return Progress(waves, marks(tasks, nil, before), marks(tasks, set, after))
}

// marks are the tasks' progress marks with the Status cells set (on top
// of tasks.md's) and the lifecycle records recs.
func marks(tasks []Task, set map[domain.TaskID]string, recs map[domain.TaskID]lifecycle.Task) map[domain.TaskID]Mark {
	out := make(map[domain.TaskID]Mark, len(tasks))
	for _, t := range tasks {
		status := t.Status
		if v, ok := set[t.ID]; ok {
			status = strings.ToLower(strings.TrimSpace(v))
		}
		r, has := recs[t.ID]
		life := lifecycle.State("")
		if has {
			life = r.State
		}
		standing := StandingOf(status, life)
		out[t.ID] = Mark{
			Started:  has && (r.State != lifecycle.Pending || len(r.Entered) > 0) || status == plan.StatusInProgress,
			Finished: standing == Finished,
			Closed:   standing.Closed(),
		}
	}
	return out
}
