package store

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// Snapshot is one plan as read at one moment.
type Snapshot struct {
	Plan string
	Dir  string // absolute plan directory
	Root string // absolute repository root

	// State is nil when state.json is missing (StateErr wraps
	// state.ErrNotFound) or cannot be used (StateErr says why).
	State    *state.State
	StateErr error
	StateRaw []byte

	// Tasks is nil when tasks.md is missing or unreadable.
	Tasks        *plan.Tasks
	TaskProblems []plan.Problem
	TasksRaw     []byte
	TasksErr     error

	// Entries is the plan directory listing, by name.
	Entries []Entry

	Version Version

	files  []plan.FileName // parsed names of the regular .md files
	reader func(name string) ([]byte, error)
	// readAll, when set, reads many files through one open directory.
	readAll func(names []string, fn func(name string, data []byte, err error))
	// last is the log's last commit event when it is among its last lines
	// (lastIsLast: the very last), read with the snapshot.
	last       *events.Event
	lastIsLast bool
}

// LoggedSHA is state.json's fingerprint after the log's last commit, ""
// when the log's last lines hold none: a file whose Version differs was
// changed outside taskie since.
func (s *Snapshot) LoggedSHA() string {
	if s.last == nil {
		return ""
	}
	return s.last.SHA
}

// Entry is one name in the plan directory.
type Entry struct {
	Name string
	Mode fs.FileMode // type bits only
}

// Regular reports whether the entry is a plain file.
func (e Entry) Regular() bool { return e.Mode.IsRegular() }

// Path joins a file name to the plan directory.
func (s *Snapshot) Path(name string) string { return s.Dir + "/" + name }

// Exists reports whether a regular file of that name is in the plan.
func (s *Snapshot) Exists(name string) bool {
	i := sort.Search(len(s.Entries), func(i int) bool { return s.Entries[i].Name >= name })
	return i < len(s.Entries) && s.Entries[i].Name == name && s.Entries[i].Regular()
}

// ReadFile reads another file of the plan (a task file) on demand.
func (s *Snapshot) ReadFile(name string) ([]byte, error) {
	if s.reader == nil {
		return nil, fs.ErrNotExist
	}
	return s.reader(name)
}

// ReadFiles reads files of the plan, calling fn for each, in order. Read
// in bulk (groups reads every task file), they cost one directory open,
// not a walk of the whole path each.
func (s *Snapshot) ReadFiles(names []string, fn func(name string, data []byte, err error)) {
	if s.readAll != nil {
		s.readAll(names, fn)
		return
	}
	for _, n := range names {
		data, err := s.ReadFile(n)
		fn(n, data, err)
	}
}

// ReviewExists reports whether review file n of a series exists (older
// names included).
func (s *Snapshot) ReviewExists(review domain.Phase, task domain.TaskID, n int) bool {
	return s.has(plan.KindReview, review, task, n)
}

// PostExists reports whether post-review file n of a series exists.
func (s *Snapshot) PostExists(review domain.Phase, task domain.TaskID, n int) bool {
	return s.has(plan.KindPostReview, review, task, n)
}

func (s *Snapshot) has(kind plan.FileKind, review domain.Phase, task domain.TaskID, n int) bool {
	t := seriesTask(review, task)
	for _, fn := range s.files {
		if fn.Kind == kind && fn.Base == BaseOf(review) && fn.Task == t && fn.N == n {
			return true
		}
	}
	return false
}

// Files are the plan's .md files, parsed (plan.ParseFileName): the
// snapshot's own, shared, not to be changed.
func (s *Snapshot) Files() []plan.FileName { return s.files }

// Latest returns the highest review iteration on disk for a series.
func (s *Snapshot) Latest(review domain.Phase, task domain.TaskID) int {
	t := seriesTask(review, task)
	best := 0
	for _, fn := range s.files {
		if fn.Kind == plan.KindReview && fn.Base == BaseOf(review) && fn.Task == t && fn.N > best {
			best = fn.N
		}
	}
	return best
}

// seriesTask is the task a review series belongs to, as plan.FileName
// numbers it: only code reviews are per task; the files of the other
// reviews carry none (0).
func seriesTask(review domain.Phase, task domain.TaskID) int {
	if review != domain.CodeReview {
		return 0
	}
	return int(task)
}

// SeriesFiles lists the review and post-review files of a review series
// (the review, and its task for a code review) in the plan directory,
// sorted by name.
func (s *Snapshot) SeriesFiles(review domain.Phase, task domain.TaskID) []string {
	t := seriesTask(review, task)
	var names []string
	for _, e := range s.Entries {
		fn := plan.ParseFileName(e.Name)
		if e.Regular() && (fn.Kind == plan.KindReview || fn.Kind == plan.KindPostReview) && fn.Base == BaseOf(review) && fn.Task == t {
			names = append(names, e.Name)
		}
	}
	return names
}

// BaseOf maps a review phase to the file base plan.ParseFileName reports.
func BaseOf(review domain.Phase) string {
	if review == domain.CodeReview {
		return "task"
	}
	return strings.TrimSuffix(string(review), "-review")
}

// TaskFiles lists the task files named in tasks.md that exist.
func (s *Snapshot) TaskFiles() []string {
	var out []string
	if s.Tasks == nil {
		return out
	}
	for _, t := range s.Tasks.Tasks {
		if name := plan.TaskFile(t.ID); s.Exists(name) {
			out = append(out, name)
		}
	}
	return out
}

// HasTaskFile reports whether any task of tasks.md has its file: TaskFiles
// without building the list (the hook asks at every stop).
func (s *Snapshot) HasTaskFile() bool {
	if s.Tasks == nil {
		return false
	}
	for _, t := range s.Tasks.Tasks {
		if s.Exists(plan.TaskFile(t.ID)) {
			return true
		}
	}
	return false
}

// PendingOther reports whether a pending task other than current remains.
func (s *Snapshot) PendingOther(current domain.TaskID) bool {
	if s.Tasks == nil {
		return false
	}
	_, ok := s.Tasks.NextPending(int(current))
	return ok
}

// Subtasks returns the lower-case subtask statuses of task-T.md.
func (s *Snapshot) Subtasks(task domain.TaskID) []string {
	if task <= 0 {
		return nil
	}
	data, err := s.ReadFile(plan.TaskFile(int(task)))
	if err != nil {
		return nil
	}
	var out []string
	for _, st := range plan.ParseSubtasks(data) {
		out = append(out, strings.ToLower(strings.TrimSpace(st.Status)))
	}
	return out
}

// TaskID parses a user-given task id and checks it against tasks.md; the
// error names the task and the known ids.
func (s *Snapshot) TaskID(arg string) (domain.TaskID, error) {
	var ids []string
	if s.Tasks != nil {
		for _, k := range s.Tasks.IDs() {
			ids = append(ids, strconv.Itoa(k))
		}
	}
	id, err := domain.ParseTaskID(arg)
	if err != nil {
		return 0, fmt.Errorf("%v; known tasks: %s", err, listOrNone(ids))
	}
	if s.Tasks == nil {
		return 0, fmt.Errorf("task %d: plan %s has no tasks.md yet", id, s.Plan)
	}
	if _, ok := s.Tasks.Find(int(id)); !ok {
		return 0, fmt.Errorf("unknown task %d in plan %s; known tasks: %s", id, s.Plan, listOrNone(ids))
	}
	return id, nil
}

// Validate runs every validation rule on the snapshot; lint is rule 8's
// check of a decoded state's values (workflow.Lint), handed in by the
// caller: what is legal is the workflow's to say, not the store's.
func (s *Snapshot) Validate(lint func(*state.State) []string) []plan.Violation {
	in := plan.Listing{Dir: s.Dir, Tasks: s.TasksRaw, HasTasks: s.TasksRaw != nil || s.TasksErr != nil && !errors.Is(s.TasksErr, fs.ErrNotExist),
		State: s.StateRaw, HasState: s.StateRaw != nil || unread(s.StateRaw, s.StateErr), TaskProblems: s.TaskProblems, TasksParsed: s.TasksRaw != nil, Table: s.Tasks}
	for _, e := range s.Entries {
		in.Entries = append(in.Entries, plan.ListEntry{Name: e.Name, Mode: e.Mode})
	}
	// Rule 8 from the state decoded once, not from the bytes again.
	return plan.ValidateListing(in, func([]byte) []string { return s.stateProblems(lint) })
}

// stateProblems is validation rule 8 on the snapshot's decoded state.
func (s *Snapshot) stateProblems(lint func(*state.State) []string) []string {
	var se *state.SyntaxError
	var fe *state.FieldError
	switch err := s.StateErr; {
	case err == nil && s.State != nil:
		if lint == nil {
			return nil
		}
		return lint(s.State)
	case errors.As(err, &se):
		return []string{fmt.Sprintf("malformed JSON at line %d, column %d: %s", se.Line, se.Col, se.Msg)}
	case errors.As(err, &fe):
		return []string{fmt.Sprintf("field %q: %s", fe.Field, fe.Msg)}
	case err != nil:
		return []string{err.Error()}
	}
	return nil
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}
