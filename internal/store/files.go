package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// Lock files beside state.json (git-ignored, allowed by validation). The
// lock is never state.json itself: the atomic rename swaps its inode.
const (
	LockName       = ".lock"
	ReviewLockName = ".review.lock"
)

// LockTimeout is how long a change waits for the plan lock.
var LockTimeout = 10 * time.Second

// tailSize is how much of events.jsonl is read to find the last commit.
const tailSize = 16 << 10

// Files is the file store: plans under .taskie/plans of one repository.
type Files struct {
	Repo *plan.Repo
	root *fsafe.Root
	// Clock stamps the events that come without a time: the caller's
	// (Open); tests replace it.
	Clock clock.Clock
	// Mirror, when set, gets every event appended to a plan's log (under
	// the plan lock), to share it beyond the clone (SetMirror).
	Mirror Mirror

	// peeked holds state.json bytes read by PeekState, so that the next
	// Load of that plan does not read the file a second time.
	peeked map[string][]byte
	// decoded holds each plan's last decoded state.json with its bytes:
	// a read that finds the same bytes (plan choice's peek, the snapshot,
	// the re-read under the plan lock) clones it instead of decoding again.
	decoded map[string]decodedState
	// parsed holds each plan's last parsed tasks.md with its bytes: the
	// snapshot read before the plan lock and the one read under it share
	// one parse (tasks.md is never changed in place: a change parses its
	// own copy).
	parsed map[string]parsedTasks
	// dirs caches the plan directories checked to resolve inside the
	// repository: a command checks each once (symlinks resolved, a few
	// syscalls), not at every read.
	dirs map[string]string
	// plansDir is .taskie/plans, opened by the first PeekState.
	plansDir *fsafe.Dir
	mu       sync.Mutex // guards peeked, decoded, parsed and dirs: a Files may serve goroutines at once

	// failWrite, set by tests, fails the write of a path (relative to the
	// repository root) as a full disk would: nil lets every write through.
	failWrite func(rel string) error
}

// PlanDir is Repo.PlanDir, checked once per plan and Files.
func (f *Files) PlanDir(id string) (string, error) { return f.planDir(id) }

func (f *Files) planDir(id string) (string, error) {
	f.mu.Lock()
	dir, ok := f.dirs[id]
	f.mu.Unlock()
	if ok {
		return dir, nil
	}
	dir, err := f.Repo.PlanDir(id)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	if f.dirs == nil {
		f.dirs = map[string]string{}
	}
	f.dirs[id] = dir
	f.mu.Unlock()
	return dir, nil
}

var _ Store = (*Files)(nil)

// Now is the time of the store's clock.
func (f *Files) Now() time.Time { return f.Clock.Now() }

// Open opens the file store of a repository; now stamps the events that
// come without a time (the caller's clock: TASKIE_NOW when set).
func Open(r *plan.Repo, now clock.Clock) (*Files, error) {
	root, err := fsafe.Open(r.Root)
	if err != nil {
		return nil, err
	}
	f := &Files{Repo: r, root: root, Clock: now, Mirror: mirrorFor(r)}
	if m, ok := f.Mirror.(interface{ readsFrom(*Files) }); ok {
		m.readsFrom(f) // to import the clone's log on first use
	}
	return f, nil
}

// Root is the repository root through which every file is opened.
func (f *Files) Root() *fsafe.Root { return f.root }

// Close releases the store.
func (f *Files) Close() error {
	if f.Mirror != nil {
		f.Mirror.Close()
	}
	if f.plansDir != nil {
		f.plansDir.Close()
	}
	return f.root.Close()
}

// Rel returns a plan file's path relative to the repository root.
func Rel(id, name string) string { return path.Join(".taskie", "plans", id, name) }

// Hash fingerprints file content for versions and the log ("" = absent).
func Hash(data []byte) string {
	if data == nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Load reads one snapshot of plan id, and writes nothing: reads never
// write. A commit that a crash cut short (its events are in the log, its
// files were not all replaced) is rolled forward in the snapshot only; the
// next change completes it on disk, under the plan lock, as a database
// replays its journal. Temp files of killed writers are left to it too.
func (f *Files) Load(id string) (*Snapshot, error) {
	s, err := f.read(id)
	if err != nil {
		return nil, err
	}
	if f.behind(s) {
		s.rollForward(f.redoOf(s))
	}
	return s, nil
}

// read builds a snapshot without taking any lock.
func (f *Files) read(id string) (*Snapshot, error) {
	dir, err := f.planDir(id)
	if err != nil {
		return nil, err
	}
	d, err := f.root.OpenDir(Rel(id, ""))
	if errors.Is(err, fs.ErrNotExist) {
		ids, _ := f.Repo.Plans()
		return nil, fmt.Errorf("plan %q not found; plans: %s", id, listOrNone(ids))
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	s := f.blank(id, dir)
	s.readState(f, d, id)
	s.readTasks(f, d, id)
	s.ls.small = s.Tasks == nil || len(s.Tasks.Tasks) <= smallPlan
	if tail, _, err := d.ReadTail(events.FileName, tailSize); err == nil {
		s.last, s.lastIsLast = lastCommitIn(tail)
	}
	s.Version = Version{State: Hash(s.StateRaw), Tasks: Hash(s.TasksRaw)}
	return s, nil
}

// blank is a snapshot of plan id with its readers and an unread listing,
// and none of its files.
func (f *Files) blank(id, dir string) *Snapshot {
	s := &Snapshot{Plan: id, Dir: dir, Root: f.Repo.Root}
	s.reader = func(name string) ([]byte, error) { return f.root.ReadFile(Rel(id, name)) }
	s.readAll = func(names []string, fn func(string, []byte, error)) {
		f.readNames(id, names, (*fsafe.Dir).ReadFile, fn)
	}
	s.readRegular = func(names []string, fn func(string, []byte, error)) {
		f.readNames(id, names, (*fsafe.Dir).ReadRegular, fn)
	}
	s.lstat = func(name string) (fs.FileMode, error) {
		fi, err := f.root.Lstat(Rel(id, name))
		if err != nil {
			return 0, err
		}
		return fi.Mode().Type(), nil
	}
	// The listing is read when first asked for: the views that show
	// tasks (status, ready, groups) need none of its names.
	s.ls = &listing{open: func() (*fsafe.Dir, error) { return f.root.OpenDir(Rel(id, "")) }}
	return s
}

// smallPlan is the most tasks of a plan whose snapshot lists every name
// at the first question about any (the Stop hook's plans: one listing
// answers Exists, Files and Validate); a bigger plan's snapshot reads only
// what it is asked for.
var smallPlan = 256

// readNames reads files of plan id through one open directory, with read.
func (f *Files) readNames(id string, names []string, read func(*fsafe.Dir, string) ([]byte, error), fn func(string, []byte, error)) {
	d, err := f.root.OpenDir(Rel(id, ""))
	if err != nil {
		for _, n := range names {
			fn(n, nil, err)
		}
		return
	}
	defer d.Close()
	if len(names) < parallelRead {
		for _, n := range names {
			data, err := read(d, n)
			fn(n, data, err)
		}
		return
	}
	// Two readers, each through its own open directory: the second half is
	// read while the first is read and handed to fn (groups reads the
	// files of every open task: 5,000 in a plan of 10,000 tasks).
	half := len(names) / 2
	type result struct {
		data []byte
		err  error
	}
	second := make([]result, len(names)-half)
	done := make(chan bool, 1)
	go func() {
		d2, err := f.root.OpenDir(Rel(id, ""))
		if err != nil {
			done <- false
			return
		}
		defer d2.Close()
		for i, n := range names[half:] {
			second[i].data, second[i].err = read(d2, n)
		}
		done <- true
	}()
	for _, n := range names[:half] {
		data, err := read(d, n)
		fn(n, data, err)
	}
	ok := <-done
	for i, n := range names[half:] {
		if !ok {
			second[i].data, second[i].err = read(d, n)
		}
		fn(n, second[i].data, second[i].err)
	}
}

// parallelRead is the fewest files readNames reads with two readers.
var parallelRead = 64

// PeekState reads and decodes a plan's state.json alone (plan choice looks
// at every plan); the next Load of the plan reuses the bytes.
func (f *Files) PeekState(id string) (*state.State, error) {
	if _, err := f.planDir(id); err != nil {
		return nil, err
	}
	raw, err := f.peekRaw(id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.peeked == nil {
		f.peeked = map[string][]byte{}
	}
	f.peeked[id] = raw
	f.mu.Unlock()
	if st, ok := f.cachedState(id, raw); ok {
		return st, nil
	}
	st, err := state.Decode(state.FileName, raw)
	if err == nil {
		f.keepState(id, raw, st)
	}
	return st, err
}

type decodedState struct {
	raw []byte
	st  *state.State
}

// cachedState returns a copy of the state decoded from exactly raw, if
// the plan's last decode was of these bytes.
func (f *Files) cachedState(id string, raw []byte) (*state.State, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.decoded[id]
	if !ok || !bytes.Equal(d.raw, raw) {
		return nil, false
	}
	return d.st.Clone(), true
}

// keepState remembers st as the decoding of raw (a copy: callers may
// change theirs).
func (f *Files) keepState(id string, raw []byte, st *state.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.decoded == nil {
		f.decoded = map[string]decodedState{}
	}
	f.decoded[id] = decodedState{raw: raw, st: st.Clone()}
}

// peekRaw reads a plan's state.json through the plans directory, opened
// once per Files: a plain plan directory and file then cost one lookup
// each instead of a walk from the repository root per plan.
func (f *Files) peekRaw(id string) ([]byte, error) {
	f.mu.Lock()
	if f.plansDir == nil {
		f.plansDir, _ = f.root.OpenDir(path.Join(".taskie", "plans"))
	}
	plans := f.plansDir
	f.mu.Unlock()
	if plans == nil {
		return f.root.ReadFile(Rel(id, state.FileName))
	}
	d, err := plans.Sub(id)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(state.FileName)
}

func (f *Files) readStateRaw(d *fsafe.Dir, id string) ([]byte, error) {
	f.mu.Lock()
	raw, ok := f.peeked[id]
	delete(f.peeked, id)
	f.mu.Unlock()
	if ok {
		return raw, nil
	}
	return d.ReadFile(state.FileName)
}

func (s *Snapshot) readState(f *Files, d *fsafe.Dir, id string) {
	p := s.Path(state.FileName)
	raw, err := f.readStateRaw(d, id)
	if errors.Is(err, fs.ErrNotExist) {
		s.StateErr = fmt.Errorf("%s: %w", p, state.ErrNotFound)
		return
	}
	if err != nil {
		s.StateErr = err
		return
	}
	if st, ok := f.cachedState(id, raw); ok {
		s.StateRaw = raw
		if s.StateErr = checkPhases(p, st); s.StateErr == nil {
			s.State = st
		}
		return
	}
	s.decodeState(raw)
	if s.State != nil {
		f.keepState(id, raw, s.State)
	}
}

// decodeState sets the snapshot's state.json to raw.
func (s *Snapshot) decodeState(raw []byte) {
	p := s.Path(state.FileName)
	s.State, s.StateErr = nil, nil
	s.StateRaw = raw
	st, err := state.Decode(p, raw)
	if err == nil {
		err = checkPhases(p, st)
	}
	if err != nil {
		s.StateErr = err
		return
	}
	s.State = st
}

// checkPhases refuses a state taskie does not understand, so that it is
// never rewritten. (A current_task that is no task id is refused by
// state.Decode already.)
func checkPhases(p string, s *state.State) error {
	if !domain.IsPhase(s.Phase) {
		return &state.FieldError{Path: p, Field: "phase", Msg: fmt.Sprintf("unknown phase %q; phases are %s", s.Phase, joinPhases(domain.Phases))}
	}
	if n := s.Next(); n != "" && !domain.IsNextPhase(n) {
		return &state.FieldError{Path: p, Field: "next_phase", Msg: fmt.Sprintf("unknown next_phase %q", n)}
	}
	return nil
}

func joinPhases(ps []domain.Phase) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return strings.Join(out, ", ")
}

func (s *Snapshot) readTasks(f *Files, d *fsafe.Dir, id string) {
	raw, err := d.ReadFile("tasks.md")
	if err != nil {
		s.TasksErr = err
		return
	}
	s.TasksRaw = raw
	s.Tasks, s.TaskProblems = f.parseTasks(id, raw)
}

type parsedTasks struct {
	raw      []byte
	tasks    *plan.Tasks
	problems []plan.Problem
}

// parseTasks parses plan id's tasks.md raw, or returns the last parse of
// the same bytes.
func (f *Files) parseTasks(id string, raw []byte) (*plan.Tasks, []plan.Problem) {
	f.mu.Lock()
	p, ok := f.parsed[id]
	f.mu.Unlock()
	if ok && bytes.Equal(p.raw, raw) {
		return p.tasks, p.problems
	}
	ts, problems := plan.ParseTasks(raw)
	f.mu.Lock()
	if f.parsed == nil {
		f.parsed = map[string]parsedTasks{}
	}
	f.parsed[id] = parsedTasks{raw: raw, tasks: ts, problems: problems}
	f.mu.Unlock()
	return ts, problems
}

func (s *Snapshot) hasTemps() bool {
	for _, e := range s.Entries() {
		if isTemp(e.Name) {
			return true
		}
	}
	return false
}

// isTemp matches the temp files of atomic writes, ".<name>.tmp<digits>".
func isTemp(name string) bool {
	i := strings.LastIndex(name, ".tmp")
	if !strings.HasPrefix(name, ".") || i <= 1 {
		return false
	}
	return strings.Trim(name[i+4:], "0123456789") == ""
}

// Commit applies c if the plan is still at version v.
func (f *Files) Commit(id string, v Version, c Change) (*Snapshot, error) {
	return f.locked(id, func(s *Snapshot) (*Snapshot, error) {
		if s.Version != v {
			return nil, ErrMoved
		}
		return f.apply(s, c)
	})
}

// Update runs fn on a snapshot taken under the plan lock and commits its
// change.
func (f *Files) Update(id string, fn func(*Snapshot) (Change, error)) (*Snapshot, error) {
	return f.locked(id, func(s *Snapshot) (*Snapshot, error) {
		c, err := fn(s)
		if err != nil {
			return nil, err
		}
		return f.apply(s, c)
	})
}

func (f *Files) locked(id string, fn func(*Snapshot) (*Snapshot, error)) (*Snapshot, error) {
	if _, err := f.planDir(id); err != nil {
		return nil, err
	}
	l, err := f.root.Lock(Rel(id, LockName), LockTimeout)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	f.mu.Lock()
	delete(f.peeked, id)
	f.mu.Unlock()
	s, err := f.read(id)
	if err != nil {
		return nil, err
	}
	if err := f.repair(s); err != nil {
		return nil, err
	}
	if s.hasTemps() || f.behind(s) {
		if s, err = f.read(id); err != nil {
			return nil, err
		}
	}
	return fn(s)
}

// Append adds events that change no file, under the plan lock.
func (f *Files) Append(id string, evs ...events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	l, err := f.root.Lock(Rel(id, LockName), LockTimeout)
	if err != nil {
		return err
	}
	defer l.Unlock()
	now := f.Now()
	for i := range evs {
		evs[i].Plan = id
		if evs[i].TS.IsZero() {
			evs[i].TS = now
		}
	}
	return f.appendEvents(id, evs)
}

// Scan streams the events of a plan to fn; lines that do not parse (a torn
// last line after a crash) go to warn, never fatal.
func (f *Files) Scan(id string, fn func(events.Event), warn func(string)) error {
	r, err := f.root.OpenRead(Rel(id, events.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	return events.ScanReader(r, f.root.Path(Rel(id, events.FileName)), fn, warn)
}

// apply commits a change on a snapshot taken under the lock: record works
// out the whole commit, then write carries it out.
func (f *Files) apply(s *Snapshot, c Change) (*Snapshot, error) {
	if c.Empty() {
		return s, nil
	}
	cm, err := record(s, c, f.find(s, c), f.Now())
	if err != nil {
		return nil, err
	}
	logged, err := f.write(cm)
	if err != nil {
		return nil, err
	}
	if n := f.written(s, cm, logged); n != nil {
		return n, nil
	}
	return f.read(s.Plan)
}

// written is the snapshot after commit c on s, built from what c wrote
// rather than read back (a claim's commit would parse tasks.md and the
// log's tail again); nil when only a read tells (files c replaced beyond
// state.json and tasks.md, review files moved, a log tail that a read
// could not find whole).
func (f *Files) written(s *Snapshot, c commit, logged int) *Snapshot {
	if c.Archive != nil || len(c.Events) == 0 || logged >= tailSize {
		return nil
	}
	ev := c.Events[len(c.Events)-1]
	if !ev.IsCommit() {
		return nil
	}
	n := f.blank(s.Plan, s.Dir)
	n.StateRaw, n.StateErr, n.State = s.StateRaw, s.StateErr, s.State
	if c.State != nil {
		n.StateRaw, n.State = c.StateRaw, nil
		if n.StateErr = checkPhases(n.Path(state.FileName), c.State); n.StateErr == nil {
			n.State = c.State.Clone()
		}
	} else if st, ok := f.cachedState(s.Plan, s.StateRaw); ok && s.State != nil {
		// The snapshot's own copy may have been changed by its reader.
		n.State = st
	}
	n.TasksRaw, n.TasksErr, n.Tasks, n.TaskProblems = s.TasksRaw, s.TasksErr, s.Tasks, s.TaskProblems
	for _, w := range c.Writes {
		switch w.Rel {
		case Rel(s.Plan, state.FileName):
			return nil
		case Rel(s.Plan, "tasks.md"):
			n.TasksRaw, n.TasksErr = w.Data, nil
			n.Tasks, n.TaskProblems = f.parseTasks(s.Plan, w.Data)
		}
	}
	n.ls.small = n.Tasks == nil || len(n.Tasks.Tasks) <= smallPlan
	n.last, n.lastIsLast = &ev, true
	n.Version = Version{State: Hash(n.StateRaw), Tasks: Hash(n.TasksRaw)}
	return n
}

// write carries out a commit: events first, then the archive moves, the
// files in order and state.json, so that a crash leaves at most a logged
// commit that the next change completes. A write that fails takes back
// what it wrote (abort).
// write carries out commit c; it returns how many bytes it added to the
// log.
func (f *Files) write(c commit) (int, error) {
	mark, err := f.appendPlanLog(c.Plan, c.Events)
	if err != nil {
		return 0, fmt.Errorf("%s: %w; nothing was changed", f.root.Path(Rel(c.Plan, events.FileName)), err)
	}
	logged := 0
	if mark != nil {
		logged = mark.added
	}
	var u undo
	if err := f.writeFiles(c, &u); err != nil {
		return 0, f.abort(c.Plan, mark, u, err)
	}
	// Shared only once made: a change that failed is no event anywhere.
	if f.Mirror != nil && len(c.Events) > 0 {
		f.Mirror.Events(c.Plan, c.Events)
	}
	if c.State != nil {
		// The bytes just written decode to State (Encode's round trip, see
		// state's tests): the next read needs no decode of its own.
		f.keepState(c.Plan, c.StateRaw, c.State)
	}
	return logged, nil
}

// writeFiles writes a commit's files after its events; u gets how to put
// back each file written.
func (f *Files) writeFiles(c commit, u *undo) error {
	if c.Archive != nil {
		if err := f.moveArchive(c.Plan, c.Archive, u); err != nil {
			return err
		}
	}
	for _, w := range c.Writes {
		if w.MakeDir {
			if err := f.root.MkdirAll(path.Dir(w.Rel), 0o755); err != nil {
				return err
			}
			if _, err := f.root.CleanTemps(path.Dir(w.Rel), 0); err != nil {
				return err
			}
		}
		if err := f.replace(w.Rel, w.Data, w.Old, u); err != nil {
			return err
		}
	}
	if c.State != nil {
		// The last write: nothing after it can fail, so nothing to put back.
		return f.writeFile(Rel(c.Plan, state.FileName), c.StateRaw)
	}
	return nil
}

// undo puts back, newest first, what a change wrote before it failed.
type undo []func() error

// replace writes rel, first noting in u how to put back what it holds now
// (old, when the caller read it already).
func (f *Files) replace(rel string, data, old []byte, u *undo) error {
	if old == nil {
		var err error
		old, err = f.root.ReadFile(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			old = nil
		case err != nil:
			return err
		}
	}
	if err := f.writeFile(rel, data); err != nil {
		return err
	}
	if old == nil {
		*u = append(*u, func() error { return f.root.Remove(rel) })
	} else {
		*u = append(*u, func() error { return f.root.WriteFile(rel, old, true) })
	}
	return nil
}

// writeFile writes rel atomically (failWrite may fail it first).
func (f *Files) writeFile(rel string, data []byte) error {
	if f.failWrite != nil {
		if err := f.failWrite(rel); err != nil {
			return fmt.Errorf("%s: %w", f.root.Path(rel), err)
		}
	}
	return f.root.WriteFile(rel, data, true)
}

// abort takes back a change whose files could not all be written (a full
// disk): the files written are put back, then the log is cut back to its
// length before the change's events, so that no later command, read or
// redo, applies a change its command reported as failed. A change that
// cannot be put back whole stays logged: the next command completes it,
// and the error says so.
func (f *Files) abort(id string, m *logMark, u undo, cause error) error {
	for i := len(u) - 1; i >= 0; i-- {
		if err := u[i](); err != nil {
			return fmt.Errorf("%w; the change was written in part and could not be taken back (%v): the next taskie command completes it", cause, err)
		}
	}
	if m != nil {
		if err := f.truncateLog(id, m); err != nil {
			return fmt.Errorf("%w; its events could not be taken out of %s (%v): the next taskie command completes the change", cause, f.root.Path(Rel(id, events.FileName)), err)
		}
	}
	return fmt.Errorf("%w; nothing was changed", cause)
}

// appendEvents writes the events at the end of the plan's log.
func (f *Files) appendEvents(id string, evs []events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := appendLog(f.root, Rel(id, events.FileName), evs, true); err != nil {
		return err
	}
	if f.Mirror != nil {
		f.Mirror.Events(id, evs)
	}
	return nil
}

// appendLog writes events at the end of the JSON-lines log rel in one
// write; a torn last line left by a killed writer is ended first, so that
// the new lines parse. The caller holds the log's lock.
func appendLog(root *fsafe.Root, rel string, evs []events.Event, durable bool) error {
	data, _, err := logLines(root, rel, evs)
	if err != nil {
		return err
	}
	return root.AppendFile(rel, data, 0o644, durable)
}

// logMark is where a log ended before an append: the length to cut it
// back to, or that it did not exist.
type logMark struct {
	size    int64
	existed bool
	added   int // bytes appended since
}

// logLines renders events as the lines appended to log rel (a torn last
// line ended first), and where the log ends now.
func logLines(root *fsafe.Root, rel string, evs []events.Event) ([]byte, logMark, error) {
	var buf bytes.Buffer
	tail, size, err := root.ReadTail(rel, 1)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, logMark{}, err
	}
	if len(tail) == 1 && tail[0] != '\n' {
		buf.WriteByte('\n')
	}
	for _, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			return nil, logMark{}, err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), logMark{size: size, existed: err == nil}, nil
}

// appendPlanLog appends a change's events to the plan's log in one write
// and returns where the log ended before them (nil when there were none),
// so that a change failing afterwards is cut back out. A write that
// fails midway (a full disk) is cut back at once: no line of a failed
// change stays, not even a torn one.
func (f *Files) appendPlanLog(id string, evs []events.Event) (*logMark, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	rel := Rel(id, events.FileName)
	data, mark, err := logLines(f.root, rel, evs)
	if err != nil {
		return nil, err
	}
	if f.failWrite != nil {
		if err := f.failWrite(rel); err != nil {
			return nil, err
		}
	}
	w, err := f.root.OpenAppend(rel)
	if err != nil {
		return nil, err
	}
	_, err = w.Write(data)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if terr := f.truncateLog(id, &mark); terr != nil {
			return nil, fmt.Errorf("%w (and cutting the log back failed: %v)", err, terr)
		}
		return nil, err
	}
	mark.added = len(data)
	return &mark, nil
}

// truncateLog cuts the plan's log back to where m says it ended. Cutting
// needs no free space, unlike appending a line that cancels the change.
func (f *Files) truncateLog(id string, m *logMark) error {
	rel := Rel(id, events.FileName)
	if !m.existed {
		return f.root.Remove(rel)
	}
	w, err := f.root.OpenAppend(rel)
	if err != nil {
		return err
	}
	err = w.Truncate(m.size)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// lastCommitIn returns the last commit event among the log's last lines
// (tail), and whether it is the very last; nil when none is there.
func lastCommitIn(tail []byte) (*events.Event, bool) {
	if len(tail) == 0 {
		return nil, false
	}
	torn := tail[len(tail)-1] != '\n'
	lines := bytes.Split(bytes.TrimRight(tail, "\n"), []byte{'\n'})
	if torn && len(lines) > 0 {
		lines = lines[:len(lines)-1]
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if !bytes.Contains(lines[i], []byte(`"sha":`)) {
			continue
		}
		var e events.Event
		if json.Unmarshal(lines[i], &e) == nil && e.IsCommit() {
			return &e, i == len(lines)-1
		}
	}
	return nil, false
}

// behind reports a commit whose events are the last lines of the log but
// whose files were not all replaced: the process was killed in between.
func (f *Files) behind(s *Snapshot) bool {
	last, isLast := s.last, s.lastIsLast
	if last == nil || !isLast {
		return false
	}
	return stateBehind(s, last) || tasksBehind(s, last)
}

func stateBehind(s *Snapshot, e *events.Event) bool {
	return e.SHA != "-" && e.SHA != e.Prev && s.Version.State == e.Prev && s.Version.State != e.SHA && !unread(s.StateRaw, s.StateErr)
}

func tasksBehind(s *Snapshot, e *events.Event) bool {
	return e.TSHA != "" && e.TSHA != e.TPrev && s.Version.Tasks == e.TPrev && !unread(s.TasksRaw, s.TasksErr)
}

// unread reports a file that exists but was not read (too large, a FIFO):
// its hash is that of a missing file, but it must never be replaced.
func unread(raw []byte, err error) bool {
	return raw == nil && err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, state.ErrNotFound)
}

// repair, under the plan lock, removes temp files left by killed writers
// and completes a commit cut short.
func (f *Files) repair(s *Snapshot) error {
	if s.hasTemps() {
		if _, err := f.root.CleanTemps(Rel(s.Plan, ""), 0); err != nil {
			return err
		}
	}
	if !f.behind(s) {
		return nil
	}
	r := f.redoOf(s)
	if r.archive != nil {
		if err := f.moveArchive(s.Plan, r.archive, nil); err != nil {
			return err
		}
	}
	if r.tasks != nil {
		if err := f.root.WriteFile(Rel(s.Plan, "tasks.md"), r.tasks, true); err != nil {
			return err
		}
	}
	if r.state != nil {
		return f.root.WriteFile(Rel(s.Plan, state.FileName), r.state, true)
	}
	return nil
}

// redo is what completing the log's last commit writes: tasks.md and
// state.json as the commit left them (nil: left as they are), and the
// review files it moved.
type redo struct {
	archive      *events.Archive
	tasks, state []byte
}

// redoOf works out the redo of the log's last commit. A file is redone
// only when it still holds the content the commit found (its prev) and is
// still the very file the commit found (its inode and change time, when
// the log records them): a crash leaves the file alone, while a restore
// of the earlier content — by hand, `git checkout`, `git stash` — puts
// another file there, which is kept as a change made outside taskie.
func (f *Files) redoOf(s *Snapshot) redo {
	var r redo
	last := s.last
	if last == nil || !s.lastIsLast {
		return r
	}
	if tasksBehind(s, last) && f.sameFile(s.Plan, "tasks.md", last.TPrevFile) {
		ts, _ := plan.ParseTasks(s.TasksRaw)
		if ts != nil && redoStatuses(ts, last.Tasks) && Hash(ts.Bytes()) == last.TSHA {
			r.tasks = ts.Bytes()
		}
	}
	if stateBehind(s, last) && f.sameFile(s.Plan, state.FileName, last.PrevFile) {
		base := s.State
		if last.Replaces() {
			base = nil
		}
		next, err := state.Apply(base, state.Delta{Set: last.Set, Unset: last.Unset, Lifecycle: last.Lifecycle})
		if err == nil {
			if b := next.Encode(); Hash(b) == last.SHA {
				r.state = b
			}
		}
	}
	if r.tasks != nil || r.state != nil {
		r.archive = last.Archive
	}
	return r
}

// rollForward makes the snapshot show a commit cut short as completed,
// without writing: what a read sees, the next change writes.
func (s *Snapshot) rollForward(r redo) {
	if r.tasks != nil {
		s.TasksRaw, s.TasksErr = r.tasks, nil
		s.Tasks, s.TaskProblems = plan.ParseTasks(r.tasks)
	}
	if r.state != nil {
		s.decodeState(r.state)
	}
	if r.archive != nil && s.ls != nil {
		s.ls.drop(r.archive.Files)
	}
	s.Version = Version{State: Hash(s.StateRaw), Tasks: Hash(s.TasksRaw)}
}

// redoStatuses sets the statuses a logged commit recorded; false when the
// log names something that is no task id or no task of tasks.md, and so
// cannot be redone.
func redoStatuses(ts *plan.Tasks, statuses map[string]string) bool {
	for k, st := range statuses {
		id, err := domain.ParseTaskID(k)
		if err != nil || ts.SetStatus(int(id), st) != nil {
			return false
		}
	}
	return true
}

// moveArchive moves the files still in the plan directory; files already
// moved are skipped, so it can be repeated after a crash. u, when not
// nil, gets how to move each back.
func (f *Files) moveArchive(id string, a *events.Archive, u *undo) error {
	if err := f.root.MkdirAll(a.Dir, 0o755); err != nil {
		return err
	}
	for _, n := range a.Files {
		src := Rel(id, n)
		if _, err := f.root.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		dst := path.Join(a.Dir, n)
		if _, err := f.root.Lstat(dst); err == nil {
			return fmt.Errorf("archiving %s: %s already exists", n, f.root.Path(dst))
		}
		if f.failWrite != nil {
			if err := f.failWrite(dst); err != nil {
				return fmt.Errorf("%s: %w", f.root.Path(dst), err)
			}
		}
		if err := f.root.Rename(src, dst); err != nil {
			return err
		}
		if u != nil {
			*u = append(*u, func() error { return f.root.Rename(dst, src) })
		}
	}
	return nil
}

// Tail returns the events among the last lines of the log (at most 16 KiB),
// oldest first: enough to tell what the latest review did.
func (f *Files) Tail(id string) []events.Event {
	tail, _, err := f.root.ReadTail(Rel(id, events.FileName), tailSize)
	if err != nil || len(tail) == 0 {
		return nil
	}
	var out []events.Event
	for _, line := range bytes.Split(tail, []byte{'\n'}) {
		var e events.Event
		if len(line) > 0 && json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}
