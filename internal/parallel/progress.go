package parallel

import (
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
)

// Progress-log events (the seed's progress log), written to the plan's
// events.jsonl by the commit that causes them.
const (
	// EventGroupStart: the first task of a wave left pending (claimed or
	// started).
	EventGroupStart = events.GroupStart
	// EventTaskComplete: a task finished (completed, or done in tasks.md).
	EventTaskComplete = events.TaskComplete
	// EventGroupComplete: the last open task of a started wave closed.
	EventGroupComplete = events.GroupComplete
)

// PlanWaves splits every task of the plan into waves, as Groups would if
// none had started: the plan's own waves, numbered once and stable while
// tasks.md does not change. Groups plans what is left and numbers it from
// 1 again; "wave 2 of 4" counts these.
func PlanWaves(tasks []Task, max int) ([]Wave, error) {
	all := make([]Task, len(tasks))
	for i, t := range tasks {
		t.Status, t.Life = plan.StatusPending, ""
		all[i] = t
	}
	return Groups(all, max)
}

// CurrentWave is the plan's current wave: the lowest of waves holding a
// task that is not closed (StandingOf) in tasks, which carries their
// statuses and lifecycle states; 0 when every task is closed.
func CurrentWave(waves []Wave, tasks []Task) int {
	closedBy := make(map[domain.TaskID]bool, len(tasks))
	for _, t := range tasks {
		closedBy[t.ID] = closed(t)
	}
	for _, w := range waves {
		for _, p := range w.Tasks {
			if !closedBy[p.Task.ID] {
				return w.Number
			}
		}
	}
	return 0
}

// Mark is what the progress log needs to know of a task at one moment.
type Mark struct {
	// Started: the task has left pending at least once (claimed, started,
	// or closed).
	Started bool
	// Finished: completed, or done in tasks.md (TASK_COMPLETE).
	Finished bool
	// Closed: finished, cancelled or abandoned (a wave is complete when
	// all its tasks are).
	Closed bool
}

// ProgressEvent is one progress-log event a change causes.
type ProgressEvent struct {
	Kind  string // EventGroupStart, EventTaskComplete, EventGroupComplete
	Wave  int
	Waves int
	Task  domain.TaskID   // TASK_COMPLETE
	Tasks []domain.TaskID // the wave's tasks (GROUP_*)
	Done  int             // GROUP_COMPLETE: tasks finished (the others were dropped)
}

// Reason renders the event as the log's reason, in the seed's words:
// "Group 2 of 4 (tasks 3, 4)", "Task 3 (wave 2)", "Group 2 - 2/2 tasks".
func (e ProgressEvent) Reason() string {
	switch e.Kind {
	case EventGroupStart:
		return "Group " + strconv.Itoa(e.Wave) + " of " + strconv.Itoa(e.Waves) + " (tasks " + idList(e.Tasks) + ")"
	case EventTaskComplete:
		return "Task " + e.Task.String() + " (wave " + strconv.Itoa(e.Wave) + " of " + strconv.Itoa(e.Waves) + ")"
	}
	return "Group " + strconv.Itoa(e.Wave) + " of " + strconv.Itoa(e.Waves) + " - " + strconv.Itoa(e.Done) + "/" + strconv.Itoa(len(e.Tasks)) + " tasks"
}

func idList(ids []domain.TaskID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return strings.Join(parts, ", ")
}

// Progress lists the progress-log events a change causes, given the
// plan's waves (PlanWaves) and each task's mark before and after it (a
// task missing from a map has the zero Mark): GROUP_START for each wave
// whose first task started, then TASK_COMPLETE for each task that
// finished, then GROUP_COMPLETE for each started wave whose last task
// closed; waves and tasks in plan order. A change that starts and ends a
// wave at once (a task marked done by hand) logs all three.
func Progress(waves []Wave, before, after map[domain.TaskID]Mark) []ProgressEvent {
	var starts, tasks, ends []ProgressEvent
	n := len(waves)
	for _, w := range waves {
		ids := w.IDs()
		wasClosed, isClosed, done := true, true, 0
		for _, id := range ids {
			b, a := before[id], after[id]
			wasClosed = wasClosed && b.Closed
			isClosed = isClosed && a.Closed
			if a.Finished {
				done++
			}
			if a.Finished && !b.Finished && !b.Closed {
				tasks = append(tasks, ProgressEvent{Kind: EventTaskComplete, Wave: w.Number, Waves: n, Task: id})
			}
		}
		if !anyStarted(ids, before) && anyStarted(ids, after) {
			starts = append(starts, ProgressEvent{Kind: EventGroupStart, Wave: w.Number, Waves: n, Tasks: ids})
		}
		if isClosed && !wasClosed && done > 0 {
			ends = append(ends, ProgressEvent{Kind: EventGroupComplete, Wave: w.Number, Waves: n, Tasks: ids, Done: done})
		}
	}
	return append(append(starts, tasks...), ends...)
}

// anyStarted reports whether a task of ids started or finished (a wave
// whose tasks were all dropped never started).
func anyStarted(ids []domain.TaskID, marks map[domain.TaskID]Mark) bool {
	for _, id := range ids {
		if m := marks[id]; m.Started || m.Finished {
			return true
		}
	}
	return false
}
