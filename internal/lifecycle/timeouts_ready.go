package lifecycle

import (
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Row is a task of the plan as the ready rule sees it: its id, its
// dependencies, and what tasks.md says of it.
type Row struct {
	ID   domain.TaskID
	Deps []domain.TaskID
	// Done: tasks.md marks it done or cancelled (finished outside the
	// lifecycle, or before its record caught up).
	Done bool
	// Started: tasks.md marks it in progress: someone works on it, so it
	// is ready whatever comes before it.
	Started bool
}

// ReadyAt maps each task that is ready to be worked on to when it became
// ready (the zero time: since it was created). A task absent is not ready
// yet: it waits for its dependencies, or in a plan that runs its tasks one
// at a time, for the tasks before it. A nil ReadyAt knows nothing: every
// task counts as ready since it entered its state.
type ReadyAt map[domain.TaskID]time.Time

// Readiness decides when each task of the plan became ready, from its rows
// in table order and the lifecycle records (by id; a task may have none).
// A task is finished when tasks.md marks it done or cancelled or its record
// is completed or abandoned; it finished when its record entered that state
// (a task tasks.md alone marks done finished at the latest of its record's
// Since and nothing: the files say no more).
//
//   - A plan where some row declares a dependency runs by them: a task is
//     ready once every dependency is finished, since the last of them
//     finished; a task without dependencies is ready from the start. A
//     dependency on an unknown id is never finished.
//   - A plan where no row declares one runs its tasks one at a time, in
//     table order: a task is ready once every task before it is finished,
//     since the last of them finished — so a queued task is not "stuck"
//     while the tasks ahead of it are worked on.
//
// Either way a task tasks.md marks in progress is ready (someone started
// it). Finished tasks are left out: they no longer wait.
func Readiness(rows []Row, records map[domain.TaskID]Task) ReadyAt {
	finished := make(map[domain.TaskID]fin, len(rows))
	sequential := true
	for _, r := range rows {
		if len(r.Deps) > 0 {
			sequential = false
		}
		f := fin{done: r.Done}
		if t, ok := records[r.ID]; ok {
			if t.State == Completed || t.State == Abandoned {
				f.done = true
			}
			if f.done {
				f.at = t.Since
			}
		}
		if _, seen := finished[r.ID]; !seen {
			finished[r.ID] = f
		}
	}
	out := ReadyAt{}
	var before time.Time // the last finish of the rows before, sequentially
	blocked := false     // a row before is not finished
	for _, r := range rows {
		f := finished[r.ID]
		switch {
		case f.done:
		case r.Started:
			out[r.ID] = time.Time{}
		case sequential:
			if !blocked {
				out[r.ID] = before
			}
		default:
			if at, ok := depsFinished(r.Deps, finished); ok {
				out[r.ID] = at
			}
		}
		if sequential {
			if !f.done {
				blocked = true
			} else if f.at.After(before) {
				before = f.at
			}
		}
	}
	return out
}

// fin is whether a task is finished, and when (zero: unknown).
type fin struct {
	done bool
	at   time.Time
}

// depsFinished reports whether every dependency is finished, and the last
// time one finished.
func depsFinished(deps []domain.TaskID, finished map[domain.TaskID]fin) (time.Time, bool) {
	var last time.Time
	for _, d := range deps {
		f, ok := finished[d]
		if !ok || !f.done {
			return time.Time{}, false
		}
		if f.at.After(last) {
			last = f.at
		}
	}
	return last, true
}

// From is when t's time against its timeout counts from, and whether it
// counts at all: a task in pending counts from when it became ready (or
// from Since, whichever is later) and not at all while it is not ready;
// any other state from Since.
func (r ReadyAt) From(t Task) (time.Time, bool) {
	if r == nil || t.State != Pending {
		return t.Since, true
	}
	at, ok := r[t.ID]
	if !ok {
		return t.Since, false
	}
	if at.After(t.Since) {
		return at, true
	}
	return t.Since, true
}

// Status is Status with the pending time counted from readiness (From): a
// pending task not ready yet is Queued, at no level and with no limit.
func (r ReadyAt) Status(t Task, now time.Time, timeouts Timeouts) TimeoutStatus {
	from, ok := r.From(t)
	if !ok {
		return TimeoutStatus{State: t.State, Elapsed: max(now.Round(0).Sub(t.Since), 0), Queued: true}
	}
	u := t
	u.Since = from
	return Status(u, now, timeouts)
}

// TimeoutWarnings returns the task with a TIMEOUT_WARNING effect for each
// level it has crossed in its state at now and not yet logged since it
// entered the state (Task.Warned), the pending time counted from
// readiness (a queued task gets none). The warnings are taskie's.
func (r ReadyAt) TimeoutWarnings(t Task, now time.Time, timeouts Timeouts) (Task, []Effect, error) {
	return timeoutWarnings(t, r.Status(t, logTime(now), timeouts), now)
}
