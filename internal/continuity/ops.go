package continuity

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/state"
)

// NoteResult says what Note did.
type NoteResult struct {
	Session  int       // number of the new entry
	Path     string    // the task file, as displayed
	Size     int       // bytes of the task file afterwards
	Archived *Archived // sessions moved to the archive, nil when none
	Archive  string    // the archive file, as displayed, when Archived
	Warnings []string  // size and session-count advice
}

// Note appends a progress entry to task's Progress Log and a PROGRESS
// event to events.jsonl, both under the plan lock. A task file missing
// altogether is created. When the file reaches ArchiveSize, all but the
// last KeepSessions entries are appended to the archive first, then
// replaced by a summary entry.
func Note(p *project.Plan, task string, e Entry) (NoteResult, error) {
	var res NoteResult
	id, err := strconv.Atoi(task)
	if err != nil {
		return res, fmt.Errorf("task id %q is not a number", task)
	}
	path := p.Path(plan.TaskFile(id))
	res.Path = display(p, path)
	err = state.WithLock(p.Dir, func() error {
		f, err := readTaskFile(p, id, true)
		if err != nil {
			return err
		}
		if res.Session, err = f.AddSession(events.Now(), e); err != nil {
			return err
		}
		if f.Len() >= ArchiveSize {
			if err := archive(p, id, f, &res); err != nil {
				return err
			}
		}
		if err := state.WriteFileAtomic(path, f.Bytes()); err != nil {
			return err
		}
		res.Size = f.Len()
		ev := progressEvent(p.ID, task, res.Session, e)
		if a := res.Archived; a != nil {
			ev.Meta["archived"] = fmt.Sprintf("%d–%d", a.From, a.To)
		}
		return events.Append(p.Dir, ev)
	})
	if err != nil {
		return NoteResult{}, err
	}
	res.Warnings = sizeWarnings(res, task)
	return res, nil
}

// archive moves old sessions of f to the archive file: the archive is
// appended to (and synced) before the task file is rewritten, so a crash
// in between duplicates entries rather than losing them.
func archive(p *project.Plan, id int, f *File, res *NoteResult) error {
	apath := ArchivePath(p, id)
	a, ok := f.Archive(KeepSessions, display(p, apath))
	if !ok {
		return nil
	}
	header := fmt.Sprintf("# Task %d — archived progress (plan %s)%s%s", id, p.ID, f.eol, f.eol)
	if err := appendFile(apath, header, a.Text); err != nil {
		return fmt.Errorf("archive progress of task %d: %w", id, err)
	}
	res.Archived, res.Archive = &a, display(p, apath)
	return nil
}

// appendFile appends data to path (header first when the file is new) and
// syncs it. It never truncates.
func appendFile(path, header string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	st, err := fh.Stat()
	if err == nil && st.Size() == 0 {
		data = append([]byte(header), data...)
	}
	if err == nil {
		_, err = fh.Write(data)
	}
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

// progressEvent is the event of one progress entry.
func progressEvent(planID, task string, n int, e Entry) events.Event {
	did, _, _ := strings.Cut(normalize(e.Did), "\n")
	meta := map[string]any{"session": n, "did": normalize(e.Did)}
	if v := normalize(e.Issues); v != "" {
		meta["issues"] = v
	}
	if v := normalize(e.Next); v != "" {
		meta["next"] = v
	}
	return events.Event{Plan: planID, Task: task, Event: events.Progress, Actor: "cli",
		Reason: fmt.Sprintf("session %d: %s", n, clipText(did, 200, "…")), Meta: meta}
}

// sizeWarnings is the advice after a note: a big file, one that could not
// be shrunk, a task that takes too many sessions.
func sizeWarnings(res NoteResult, task string) []string {
	var out []string
	if res.Archived != nil {
		out = append(out, fmt.Sprintf("%s reached %d KB: sessions %d–%d moved to %s",
			res.Path, ArchiveSize/1024, res.Archived.From, res.Archived.To, res.Archive))
	}
	switch {
	case res.Size >= ArchiveSize:
		out = append(out, fmt.Sprintf("%s is %d KB even with only the last %d sessions kept: move long text out of it and link it by path",
			res.Path, res.Size/1024, KeepSessions))
	case res.Size > WarnSize:
		out = append(out, fmt.Sprintf("%s is %d KB (over %d KB): keep entries short and link long documents by path; at %d KB old sessions move to the archive",
			res.Path, res.Size/1024, WarnSize/1024, ArchiveSize/1024))
	}
	if res.Session > SplitSessions {
		out = append(out, fmt.Sprintf("task %s has taken %d sessions (more than %d): consider splitting it into smaller tasks (/taskie:add-task)",
			task, res.Session, SplitSessions))
	}
	return out
}

// Check checks (done) or unchecks acceptance criterion n of task and
// rewrites the file only when the box changes. A *RangeError lists the
// criteria when n does not exist.
func Check(p *project.Plan, task string, n int, done bool) (Criterion, bool, error) {
	id, err := strconv.Atoi(task)
	if err != nil {
		return Criterion{}, false, fmt.Errorf("task id %q is not a number", task)
	}
	var c Criterion
	var changed bool
	err = state.WithLock(p.Dir, func() error {
		f, err := readTaskFile(p, id, false)
		if err != nil {
			return err
		}
		if c, changed, err = f.SetCriterion(n, done); err != nil || !changed {
			return err
		}
		return state.WriteFileAtomic(p.Path(plan.TaskFile(id)), f.Bytes())
	})
	return c, changed, err
}

// SetOutput replaces task's Chain Output section (adding it when
// missing, creating a missing task file).
func SetOutput(p *project.Plan, task string, c ChainOutput) error {
	id, err := strconv.Atoi(task)
	if err != nil {
		return fmt.Errorf("task id %q is not a number", task)
	}
	return state.WithLock(p.Dir, func() error {
		f, err := readTaskFile(p, id, true)
		if err != nil {
			return err
		}
		if err := f.SetChainOutput(c); err != nil {
			return err
		}
		return state.WriteFileAtomic(p.Path(plan.TaskFile(id)), f.Bytes())
	})
}

// Criteria returns task's acceptance criteria and whether the file has an
// Acceptance Criteria section (otherwise every checkbox counts).
func Criteria(p *project.Plan, task string) ([]Criterion, bool, error) {
	id, err := strconv.Atoi(task)
	if err != nil {
		return nil, false, fmt.Errorf("task id %q is not a number", task)
	}
	f, err := readTaskFile(p, id, false)
	if err != nil {
		return nil, false, err
	}
	return f.Criteria(), f.HasCriteriaSection(), nil
}

// ErrNoTaskFile is wrapped by errors about a task file that does not exist.
var ErrNoTaskFile = errors.New("task file does not exist")

// readTaskFile parses task-{id}.md; a missing file is an error unless
// create, then it starts as a title heading taken from tasks.md.
func readTaskFile(p *project.Plan, id int, create bool) (*File, error) {
	path := p.Path(plan.TaskFile(id))
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, fmt.Errorf("%s: %w", display(p, path), ErrNoTaskFile)
		}
		return Parse([]byte(newTaskFile(p, id))), nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data), nil
}

// newTaskFile is the start of a task file taskie has to create.
func newTaskFile(p *project.Plan, id int) string {
	title := ""
	if ts, _, err := p.Tasks(); err == nil && ts != nil {
		if t, ok := ts.Find(id); ok {
			title = t.Title()
		}
	}
	if title == "" {
		return fmt.Sprintf("# Task %d\n", id)
	}
	return fmt.Sprintf("# Task %d: %s\n", id, oneLine(title))
}
