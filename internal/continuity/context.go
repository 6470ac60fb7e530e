package continuity

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Context gathers what a fresh session needs for task (an id as
// store.Plan.TaskID returns it, or 0 for the current task, else the
// first in-progress task, else the next pending one). It only reads: a
// repair that `taskie continue` would record is reported, not written.
// A state.json that cannot be read is an error (state's SyntaxError or
// FieldError); a missing one is not.
func Context(p *store.Plan, task domain.TaskID) (*Brief, error) {
	st, err := p.State()
	if errors.Is(err, state.ErrNotFound) {
		st, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	ts, _, err := p.Tasks()
	if err != nil {
		return nil, err
	}
	b := &Brief{Plan: p.ID, HasState: st != nil, Task: task, TaskSource: "argument"}
	if st != nil {
		b.Phase, b.NextPhase, b.Paused = st.Phase, st.Next(), !st.IsEnabled()
	}
	// Each task's one status: the rendering of its lifecycle record.
	recs := implied.View(p, nil, taskrec.Input{})
	if ts != nil {
		b.Tasks = len(ts.Tasks)
		for _, r := range recs {
			if r.Row && r.Display == plan.StatusDone {
				b.TasksDone++
			}
		}
	}
	if task == 0 {
		b.Task, b.TaskSource = defaultTask(st, recs)
	}
	r := workflow.Continue(implied.PlanRouteFacts(p, st), implied.Models(p))
	b.RepairPending, r.Repair = r.Repair != nil, nil
	b.Next = r
	if b.Task != 0 {
		if err := fillTask(b, p, ts, recs); err != nil {
			return nil, err
		}
	}
	b.Links = links(p, b.Task)
	return b, nil
}

// defaultTask picks the task a context is about.
func defaultTask(st *state.State, recs []taskrec.Record) (domain.TaskID, string) {
	if st != nil && st.Task() != 0 {
		return st.Task(), "current_task"
	}
	for _, r := range recs {
		if r.Row && r.Display == plan.StatusInProgress {
			return r.ID, "in progress"
		}
	}
	for _, r := range recs {
		if r.Row && r.Display == plan.StatusPending {
			return r.ID, "next pending"
		}
	}
	return 0, ""
}

// fillTask reads the task's row, its file and its dependencies' outputs.
func fillTask(b *Brief, p *store.Plan, ts *plan.Tasks, recs []taskrec.Record) error {
	id := int(b.Task)
	var row *plan.Task
	if ts != nil {
		row, _ = ts.Find(id)
	}
	if r, ok := taskrec.Find(recs, b.Task); ok && row != nil {
		b.Title, b.Status = r.Title, r.Display
	}
	b.TaskFile = display(p, p.Path(plan.TaskFile(id)))
	data, err := readTaskBytes(p, b.Task)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		b.FileProblem = unreadable(err)
	default:
		b.HasFile = true
		fillFromFile(b, data)
	}
	if row != nil {
		b.Inputs = chainInputs(p, recs, row.DependsOn)
	}
	return nil
}

// readTaskBytes reads a task file through the repository's safe file layer:
// a file committed as a link out of the repository, a FIFO or a device is
// refused at once, and one over the task file limit is not read whole. The
// context goes into an agent's session, so nothing from outside the
// repository may reach it.
func readTaskBytes(p *store.Plan, task domain.TaskID) ([]byte, error) {
	return p.Store.Root().ReadFile(store.Rel(p.ID, plan.TaskFile(int(task))))
}

// unreadable says briefly why a task file cannot be used; the context
// names the file, and `taskie validate` the details.
func unreadable(err error) string {
	switch {
	case errors.Is(err, fsafe.ErrOutsideRepo):
		return "it links outside the repository"
	case errors.Is(err, fsafe.ErrNotRegular):
		return "it is not a regular file"
	case errors.Is(err, fsafe.ErrTooLarge):
		return fmt.Sprintf("it is over the %d MiB limit for a task file", fsafe.LimitTaskFile>>20)
	}
	return "it cannot be read"
}

// fillFromFile takes the description, subtasks, criteria and last
// sessions from a task file.
func fillFromFile(b *Brief, data []byte) {
	f := Parse(data)
	if b.Title == "" {
		b.Title = f.Title()
	}
	b.Reqs = f.Description()
	for _, st := range plan.ParseSubtasks(data) {
		b.Subtasks = append(b.Subtasks, SubtaskRef{ID: st.ID, Title: st.Title, Status: st.Status})
	}
	b.Criteria = f.Criteria()
	ss := f.Sessions()
	if len(ss) > 0 {
		b.Sessions = ss[len(ss)-1].N
	}
	for i := len(ss) - 1; i >= 0 && len(b.Recent) < RecentSessions; i-- {
		if !ss[i].Archived {
			b.Recent = append([]Session{ss[i]}, b.Recent...)
		}
	}
}

// chainInputs reads the chain outputs of the dependencies.
func chainInputs(p *store.Plan, recs []taskrec.Record, deps []int) []ChainInput {
	out := make([]ChainInput, 0, len(deps))
	for _, d := range deps {
		in := ChainInput{Task: domain.TaskID(d), Path: display(p, p.Path(plan.TaskFile(d)))}
		if r, ok := taskrec.Find(recs, domain.TaskID(d)); ok && r.Row {
			in.Title, in.Status = r.Title, r.Display
		}
		data, err := readTaskBytes(p, domain.TaskID(d))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			in.Problem = unreadable(err)
		default:
			if c, ok := Parse(data).ChainOutput(); ok {
				in.Output = &c
			}
		}
		out = append(out, in)
	}
	return out
}

// links lists the documents a session may need, by path.
func links(p *store.Plan, task domain.TaskID) []Link {
	var out []Link
	for _, name := range []string{"plan.md", "design.md", "tasks.md"} {
		if p.Exists(name) {
			out = append(out, Link{Name: name, Path: display(p, p.Path(name))})
		}
	}
	if task != 0 {
		if fi, err := p.Store.Root().Stat(ArchiveRel(p.ID, task)); err == nil && fi.Mode().IsRegular() {
			out = append(out, Link{Name: "archived progress", Path: display(p, ArchivePath(p, task))})
		}
	}
	return out
}

// ArchivePath is where a task's old progress entries go:
// .taskie/archive/{plan}/task-{T}.md, outside the plan directory because
// validation forbids nested .md files there.
func ArchivePath(p *store.Plan, task domain.TaskID) string {
	return filepath.Join(p.Repo.Root, filepath.FromSlash(ArchiveRel(p.ID, task)))
}

// ArchiveRel is ArchivePath relative to the repository root.
func ArchiveRel(planID string, task domain.TaskID) string {
	return ".taskie/archive/" + planID + "/" + plan.TaskFile(int(task))
}

// display returns path relative to the project root, with forward slashes.
func display(p *store.Plan, path string) string {
	rel, err := filepath.Rel(p.Repo.Root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}
