package implied

import (
	"bytes"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// progress adds to a change the progress-log events it causes
// (parallel.Progress): GROUP_START when the first task of one of the
// plan's waves leaves pending, TASK_COMPLETE when a task completes (or is
// marked done), GROUP_COMPLETE when the last open task of a started wave
// closes. Only plans run with claims log them (a lifecycle record names
// an agent), and only a change that moves a task out of pending, closes
// one or sets a Status cell costs the waves' computation; every other
// commit pays a scan of its own events.
func progress(p *store.Plan, s *store.Snapshot, c store.Change) store.Change {
	if c.Replace || s.Tasks == nil || !progressCue(c) {
		return c
	}
	after := s.State
	if c.State != nil {
		after = c.State
	}
	if after == nil || !bytes.Contains(after.Lifecycle, []byte(`"agent":`)) {
		return c
	}
	tasks := schedTasks(s)
	if len(tasks) == 0 {
		return c
	}
	before, _ := taskrec.Records(s.State)
	now, _ := taskrec.Records(after)
	evs := parallel.ChangeProgress(tasks, groupSize(p), before, now, c.Statuses)
	if len(evs) == 0 {
		return c
	}
	at := p.Store.Now().UTC()
	out := make([]events.Event, 0, len(c.Events)+len(evs))
	out = append(out, c.Events...)
	for _, e := range evs {
		ev := events.Event{TS: at, Event: e.Kind, Reason: e.Reason()}
		m := events.WaveMeta{Wave: e.Wave, Waves: e.Waves}
		if e.Task > 0 {
			ev.Task = e.Task.String()
		} else {
			m.Tasks = make([]string, len(e.Tasks))
			for i, id := range e.Tasks {
				m.Tasks[i] = id.String()
			}
		}
		ev.Meta = events.Meta(m)
		out = append(out, ev)
	}
	c.Events = out
	return c
}

// progressCue reports whether a change may start or close a task: it sets
// a Status cell, or one of its lifecycle events leaves pending or ends a
// task.
func progressCue(c store.Change) bool {
	if len(c.Statuses) > 0 {
		return true
	}
	for _, e := range c.Events {
		if e.From == string(lifecycle.Pending) && e.To != "" && e.To != string(lifecycle.Pending) ||
			e.To == string(lifecycle.Completed) || e.To == string(lifecycle.Abandoned) {
			return true
		}
	}
	return false
}

// schedTasks reads the snapshot's tasks for scheduling: tasks.md and, for
// the tasks whose Files cell is empty, the paths their task files name.
func schedTasks(s *store.Snapshot) []parallel.Task {
	filesCol := ""
	for _, h := range s.Tasks.Header {
		if strings.EqualFold(strings.TrimSpace(h), "files") {
			filesCol = h
		}
	}
	var names []string
	var ids []domain.TaskID
	for _, t := range s.Tasks.Tasks {
		if filesCol != "" && strings.TrimSpace(t.Cell(filesCol)) != "" {
			continue
		}
		if name := plan.TaskFile(t.ID); s.Exists(name) {
			names, ids = append(names, name), append(ids, domain.TaskID(t.ID))
		}
	}
	files := map[domain.TaskID][]byte{}
	k := 0 // ReadFiles calls back in order
	s.ReadFiles(names, func(_ string, data []byte, err error) {
		if err == nil {
			files[ids[k]] = data
		}
		k++
	})
	tasks, _ := parallel.FromTable(s.Tasks, files)
	return tasks
}

// Wave says where a plan run with claims stands in its waves
// (parallel.PlanWaves): the current wave — the lowest with a task not
// closed, 0 when all are — and how many there are. ok is false for a
// plan no claim has moved (no lifecycle record names an agent), or whose
// tasks cannot be scheduled.
func Wave(p *store.Plan) (current, total int, ok bool) {
	s, err := p.Snapshot()
	if err != nil || s.State == nil || s.Tasks == nil || !bytes.Contains(s.State.Lifecycle, []byte(`"agent":`)) {
		return 0, 0, false
	}
	tasks := schedTasks(s)
	waves, err := parallel.PlanWaves(tasks, groupSize(p))
	if err != nil || len(waves) == 0 {
		return 0, 0, false
	}
	// Each task's one record: a task whose commit is there is done, as
	// status counts it.
	recs := taskrec.ByID(View(p, s, taskrec.Input{Untimed: true}))
	for i := range tasks {
		if r, ok := recs[tasks[i].ID]; ok {
			tasks[i].Status = r.Display
			if r.Recorded {
				tasks[i].Life = r.State
			}
		}
	}
	return parallel.CurrentWave(waves, tasks), len(waves), true
}

// groupSize is the configured wave size, the default when the
// configuration does not read.
func groupSize(p *store.Plan) int {
	if cfg, err := Config(p); err == nil && cfg.GroupSize > 0 {
		return cfg.GroupSize
	}
	return domain.DefaultGroupSize
}
