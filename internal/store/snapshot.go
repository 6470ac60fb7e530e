package store

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
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

	Version Version

	// ls is the plan directory's listing, read on first use: a plan of
	// 10,000 tasks holds tens of thousands of review files, and the views
	// that show tasks need none of their names (nil: an empty listing).
	ls *listing
	// lstat, when set, is the type of one name of the plan directory, for
	// Exists before (or without) the listing: nil when it is missing.
	lstat  func(name string) (fs.FileMode, error)
	reader func(name string) ([]byte, error)
	// readAll, when set, reads many files through one open directory;
	// readRegular too, the regular files only (ReadRegularFiles).
	readAll, readRegular func(names []string, fn func(name string, data []byte, err error))
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

// listing is a snapshot's plan directory listing, read on first use and
// shared by the snapshot's copies: the parsed plan files alone (Files) or
// every name (Entries), each read once.
type listing struct {
	mu sync.Mutex
	// open opens the plan directory; nil: an empty listing.
	open func() (*fsafe.Dir, error)
	// gone are names a roll forward moved out (a commit's archive cut
	// short): the listing shows the directory as the commit left it.
	gone                   []string
	haveEntries, haveFiles bool
	// small is a plan of at most smallPlan tasks: its first question
	// about a name (Exists, Files) lists every name, kept for the next.
	small   bool
	sorted  bool            // entries are sorted by name
	entries []Entry         // in the order listed until sorted
	files   []plan.FileName // parsed names of the regular .md files
}

// Entries is the plan directory listing, sorted by name: read on first use
// (a plan of 10,000 tasks lists 60,000 names).
func (s *Snapshot) Entries() []Entry {
	l := s.ls
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readOnce()
	if !l.sorted {
		slices.SortFunc(l.entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
		l.sorted = true
	}
	return l.entries
}

// eachEntry calls fn with every entry in no set order (validation sorts
// what it reports: a plan of 10,000 tasks does not sort its 60,000 names).
func (s *Snapshot) eachEntry(fn func(Entry)) {
	l := s.ls
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readOnce()
	for _, e := range l.entries {
		fn(e)
	}
}

// readOnce reads the entries on first use; the caller holds mu.
func (l *listing) readOnce() {
	if l.haveEntries {
		return
	}
	l.haveEntries = true
	l.entries = l.readEntries()
	l.entries = slices.DeleteFunc(l.entries, func(e Entry) bool { return l.isGone(e.Name) })
}

// readEntries lists every name: one string holds them all, so that 60,000
// names cost a few allocations, not 60,000.
func (l *listing) readEntries() []Entry {
	if l.open == nil {
		return nil
	}
	d, err := l.open()
	if err != nil {
		return nil // the directory opened a moment ago: read as empty, as a plan removed since
	}
	defer d.Close()
	type span struct {
		from, to int
		mode     fs.FileMode
	}
	var buf []byte
	var spans []span
	err = d.EachName(func(name []byte, typ fs.FileMode) {
		from := len(buf)
		buf = append(buf, name...)
		spans = append(spans, span{from, len(buf), typ})
	})
	if err != nil {
		return nil
	}
	all := string(buf)
	out := make([]Entry, len(spans))
	for i, sp := range spans {
		out[i] = Entry{Name: all[sp.from:sp.to], Mode: sp.mode}
	}
	return out
}

// files returns the parsed names of the regular .md files: from the
// entries when listed, else from the names alone, none of them kept.
func (l *listing) getFiles() []plan.FileName {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.haveFiles {
		return l.files
	}
	l.haveFiles = true
	if l.small {
		// The Stop hook asks for the files, then validates: one listing.
		l.readOnce()
	}
	if l.haveEntries {
		l.files = make([]plan.FileName, 0, len(l.entries))
		for _, e := range l.entries {
			if e.Regular() {
				if fn := plan.ParseFileName(e.Name); fn.Kind != plan.KindUnknown {
					l.files = append(l.files, fn)
				}
			}
		}
		return l.files
	}
	if l.open == nil {
		return nil
	}
	d, err := l.open()
	if err != nil {
		return nil
	}
	defer d.Close()
	var files []plan.FileName
	err = d.EachName(func(name []byte, typ fs.FileMode) {
		if !typ.IsRegular() {
			return
		}
		if fn := plan.ParseFileName(string(name)); fn.Kind != plan.KindUnknown && !l.isGone(string(name)) {
			files = append(files, fn)
		}
	})
	if err == nil {
		l.files = files
	}
	return l.files
}

// drop takes names out of the listing, read or not.
func (l *listing) drop(names []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone = append(l.gone, names...)
	l.entries = slices.DeleteFunc(l.entries, func(e Entry) bool { return l.isGone(e.Name) })
	l.haveFiles, l.files = false, nil
}

// isGone reports a name a roll forward moved out; the caller holds mu.
func (l *listing) isGone(name string) bool { return slices.Contains(l.gone, name) }

// listed reports whether the entries were read already.
func (l *listing) listed() bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.haveEntries
}

// gone reports a name a roll forward moved out.
func (l *listing) goneName(name string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.isGone(name)
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

// Exists reports whether a regular file of that name is in the plan: in
// the listing when it was read, else by a look at that one name.
func (s *Snapshot) Exists(name string) bool {
	if s.lstat != nil && !s.ls.listed() && !s.ls.small {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || s.ls.goneName(name) {
			return false // a listing holds no such name
		}
		mode, err := s.lstat(name)
		return err == nil && mode.IsRegular()
	}
	ents := s.Entries()
	i := sort.Search(len(ents), func(i int) bool { return ents[i].Name >= name })
	return i < len(ents) && ents[i].Name == name && ents[i].Regular()
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

// ReadRegularFiles reads the names that are regular files of the plan
// (Exists), calling fn for each, in order; a name that is not one is
// fs.ErrNotExist. It costs a look at each name, not a listing of the
// plan directory (a view that reads the open tasks' files of a plan of
// 10,000 tasks does not list its 60,000 names).
func (s *Snapshot) ReadRegularFiles(names []string, fn func(name string, data []byte, err error)) {
	if s.readRegular == nil || s.ls.listed() {
		for _, n := range names {
			if !s.Exists(n) {
				fn(n, nil, fmt.Errorf("%s: %w", s.Path(n), fs.ErrNotExist))
				continue
			}
			data, err := s.ReadFile(n)
			fn(n, data, err)
		}
		return
	}
	s.readRegular(names, func(n string, data []byte, err error) {
		if err == nil && s.ls.goneName(n) {
			data, err = nil, fmt.Errorf("%s: %w", s.Path(n), fs.ErrNotExist)
		}
		fn(n, data, err)
	})
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
	for _, fn := range s.Files() {
		if fn.Kind == kind && fn.Base == BaseOf(review) && fn.Task == t && fn.N == n {
			return true
		}
	}
	return false
}

// Files are the plan's .md files, parsed (plan.ParseFileName): the
// snapshot's own, shared, not to be changed.
func (s *Snapshot) Files() []plan.FileName { return s.ls.getFiles() }

// Series is one review series: a review phase, and its task for a code
// review (the other reviews have none).
type Series struct {
	Review domain.Phase
	Task   domain.TaskID
}

// ReviewFiles are the review and post-review files of the series, as
// Files holds them: a view that asks about a few series of a plan of
// 10,000 tasks parses those names only, not 60,000. A series that is no
// review has none.
func (s *Snapshot) ReviewFiles(series []Series) []plan.FileName {
	type want struct {
		prefix, base string
		task         int
	}
	var ws []want
	for _, sr := range series {
		if !domain.IsReview(sr.Review) {
			continue
		}
		w := want{base: BaseOf(sr.Review), task: seriesTask(sr.Review, sr.Task)}
		w.prefix = w.base + "-"
		if sr.Review == domain.CodeReview {
			w.prefix = "task-" + strconv.Itoa(w.task) + "-"
		}
		ws = append(ws, w)
	}
	keep := func(fn plan.FileName) bool {
		if fn.Kind != plan.KindReview && fn.Kind != plan.KindPostReview {
			return false
		}
		for _, w := range ws {
			if fn.Base == w.base && fn.Task == w.task {
				return true
			}
		}
		return false
	}
	var out []plan.FileName
	if len(ws) == 0 {
		return out
	}
	l := s.ls
	if l == nil || l.open == nil || l.small || l.listed() || l.filesRead() {
		for _, fn := range s.Files() {
			if keep(fn) {
				out = append(out, fn)
			}
		}
		return out
	}
	d, err := l.open()
	if err != nil {
		return out
	}
	defer d.Close()
	_ = d.EachName(func(name []byte, typ fs.FileMode) {
		if !typ.IsRegular() {
			return
		}
		for _, w := range ws {
			if len(name) > len(w.prefix) && string(name[:len(w.prefix)]) == w.prefix {
				if fn := plan.ParseFileName(string(name)); keep(fn) && !l.goneName(string(name)) {
					out = append(out, fn)
				}
				return
			}
		}
	})
	return out
}

// filesRead reports whether Files was read already.
func (l *listing) filesRead() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.haveFiles
}

// Latest returns the highest review iteration on disk for a series.
func (s *Snapshot) Latest(review domain.Phase, task domain.TaskID) int {
	t := seriesTask(review, task)
	best := 0
	for _, fn := range s.Files() {
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
	for _, e := range s.Entries() {
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
	if len(s.Tasks.Tasks) > 64 {
		s.Entries() // one listing costs less than a look at each name
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
	for i, t := range s.Tasks.Tasks {
		if i == 8 {
			s.Entries() // none of the first: one listing costs less than a look at each name
		}
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
	s.eachEntry(func(e Entry) { in.Entries = append(in.Entries, plan.ListEntry{Name: e.Name, Mode: e.Mode}) })
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
