package continuity

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
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
func Note(p *store.Plan, id domain.TaskID, e Entry) (NoteResult, error) {
	var res NoteResult
	name := plan.TaskFile(int(id))
	res.Path = display(p, p.Path(name))
	err := p.Update(func(s *store.Snapshot) (store.Change, error) {
		res = NoteResult{Path: res.Path}
		f, err := readTaskFile(p, s, id, true)
		if err != nil {
			return store.Change{}, err
		}
		if res.Session, err = f.AddSession(p.Store.Now(), e); err != nil {
			return store.Change{}, err
		}
		c := store.Change{Actor: "cli", Reason: "progress note", Files: map[string][]byte{}}
		// Also archive when sessions already in the archive are still here:
		// a note killed between writing the archive and the task file.
		if f.Len() >= ArchiveSize || stillHere(p, id, f) {
			if err := archive(p, s, id, f, &res, &c); err != nil {
				return store.Change{}, err
			}
		}
		c.Files[name] = f.Bytes()
		res.Size = f.Len()
		archived := ""
		if a := res.Archived; a != nil {
			archived = fmt.Sprintf("%d–%d", a.From, a.To)
		}
		ev := progressEvent(p.ID, id, res.Session, e, archived)
		c.Events = []events.Event{ev}
		return c, nil
	})
	if err != nil {
		return NoteResult{}, err
	}
	// The agent running the note (its environment tells) reads the advice.
	res.Warnings = sizeWarnings(res, id, workflow.AgentFromEnv(os.Getenv))
	return res, nil
}

// archive moves old sessions of f to the archive file. The archive is
// written before the task file, and sessions already in it are not added
// again, so a crash in between neither loses nor duplicates an entry.
func archive(p *store.Plan, s *store.Snapshot, id domain.TaskID, f *File, res *NoteResult, c *store.Change) error {
	rel := ArchiveRel(p.ID, id)
	apath := p.Store.Root().Path(rel)
	a, ok := f.Archive(KeepSessions, display(p, apath))
	if !ok {
		return nil
	}
	old, err := p.Store.Root().ReadFile(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("archive progress of task %d: %w", id, err)
	}
	if len(old) == 0 {
		old = []byte(fmt.Sprintf("# Task %d — archived progress (plan %s)%s%s", id, p.ID, f.eol, f.eol))
	}
	c.Outside = map[string][]byte{rel: mergeArchive(old, a.Text)}
	res.Archived, res.Archive = &a, display(p, apath)
	return nil
}

// stillHere reports whether a session of the task's archive is also
// still in its task file.
func stillHere(p *store.Plan, id domain.TaskID, f *File) bool {
	old, err := p.Store.Root().ReadFile(ArchiveRel(p.ID, id))
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, m := range sessionHeading().FindAllSubmatch(old, -1) {
		have[string(m[1])] = true
	}
	for _, m := range sessionHeading().FindAllSubmatch(f.Bytes(), -1) {
		if have[string(m[1])] {
			return true
		}
	}
	return false
}

// sessionHeading finds the "### Session N" headings of a progress log.
// Compiled on first use: every taskie process, the hook included, would
// pay for it at start-up.
var sessionHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^### Session (\d+)\b`) })

// mergeArchive appends to old the sessions of add it does not hold yet.
func mergeArchive(old, add []byte) []byte {
	have := map[string]bool{}
	for _, m := range sessionHeading().FindAllSubmatch(old, -1) {
		have[string(m[1])] = true
	}
	locs := sessionHeading().FindAllSubmatchIndex(add, -1)
	if len(locs) == 0 {
		return append(old, add...)
	}
	out := append([]byte{}, old...)
	out = append(out, add[:locs[0][0]]...)
	for i, l := range locs {
		end := len(add)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if !have[string(add[l[2]:l[3]])] {
			out = append(out, add[l[0]:end]...)
		}
	}
	return out
}

// progressEvent is the event of one progress entry.
func progressEvent(planID string, task domain.TaskID, n int, e Entry, archived string) events.Event {
	did, _, _ := strings.Cut(normalize(e.Did), "\n")
	meta := events.ProgressMeta{Session: n, Did: normalize(e.Did), Issues: normalize(e.Issues), Next: normalize(e.Next), Archived: archived}
	return events.Event{Plan: planID, Task: task.String(), Event: events.Progress, Actor: "cli",
		Reason: fmt.Sprintf("session %d: %s", n, clipText(did, 200, "…")), Meta: events.Meta(meta)}
}

// sizeWarnings is the advice after a note: a big file, one that could not
// be shrunk, a task that takes too many sessions.
func sizeWarnings(res NoteResult, task domain.TaskID, agent workflow.Agent) []string {
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
		out = append(out, fmt.Sprintf("task %s has taken %d sessions (more than %d): consider splitting it into smaller tasks (%s)",
			task, res.Session, SplitSessions, agent.Ref(workflow.AddTask)))
	}
	return out
}

// Check checks (done) or unchecks acceptance criterion n of task and
// rewrites the file only when the box changes. A *RangeError lists the
// criteria when n does not exist.
func Check(p *store.Plan, id domain.TaskID, n int, done bool) (Criterion, bool, error) {
	var c Criterion
	var changed bool
	err := p.Update(func(s *store.Snapshot) (store.Change, error) {
		f, err := readTaskFile(p, s, id, false)
		if err != nil {
			return store.Change{}, err
		}
		if c, changed, err = f.SetCriterion(n, done); err != nil || !changed {
			return store.Change{}, err
		}
		return store.Change{Actor: "cli", Files: map[string][]byte{plan.TaskFile(int(id)): f.Bytes()}}, nil
	})
	return c, changed, err
}

// SetOutput replaces task's Chain Output section (adding it when
// missing, creating a missing task file).
func SetOutput(p *store.Plan, id domain.TaskID, c ChainOutput) error {
	return p.Update(func(s *store.Snapshot) (store.Change, error) {
		f, err := readTaskFile(p, s, id, true)
		if err != nil {
			return store.Change{}, err
		}
		if err := f.SetChainOutput(c); err != nil {
			return store.Change{}, err
		}
		return store.Change{Actor: "cli", Files: map[string][]byte{plan.TaskFile(int(id)): f.Bytes()}}, nil
	})
}

// Criteria returns task's acceptance criteria and whether the file has an
// Acceptance Criteria section (otherwise every checkbox counts).
func Criteria(p *store.Plan, id domain.TaskID) ([]Criterion, bool, error) {
	s, err := p.Snapshot()
	if err != nil {
		return nil, false, err
	}
	f, err := readTaskFile(p, s, id, false)
	if err != nil {
		return nil, false, err
	}
	return f.Criteria(), f.HasCriteriaSection(), nil
}

// ErrNoTaskFile is wrapped by errors about a task file that does not exist.
var ErrNoTaskFile = errors.New("task file does not exist")

// readTaskFile parses task-{id}.md; a missing file is an error unless
// create, then it starts as a title heading taken from tasks.md.
func readTaskFile(p *store.Plan, s *store.Snapshot, id domain.TaskID, create bool) (*File, error) {
	path := p.Path(plan.TaskFile(int(id)))
	data, err := s.ReadFile(plan.TaskFile(int(id)))
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
func newTaskFile(p *store.Plan, id domain.TaskID) string {
	title := ""
	if ts, _, err := p.Tasks(); err == nil && ts != nil {
		if t, ok := ts.Find(int(id)); ok {
			title = t.Title()
		}
	}
	if title == "" {
		return fmt.Sprintf("# Task %d\n", id)
	}
	return fmt.Sprintf("# Task %d: %s\n", id, oneLine(title))
}
