package implied

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/events/eventstest"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

func newPlan(t *testing.T, files map[string]string) *store.Plan {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, ".taskie", "plans", "p", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := plan.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Get(r, "p", clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readFile returns a plan file's bytes ("" when absent).
func readFile(t *testing.T, p *store.Plan, name string) string {
	t.Helper()
	data, err := os.ReadFile(p.Path(name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

// planFiles snapshots the bytes of the files a commit may write.
func planFiles(t *testing.T, p *store.Plan) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range []string{"state.json", "tasks.md", events.FileName} {
		out[n] = readFile(t, p, n)
	}
	return out
}

func TestCommitRefusesAMovedState(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"new-plan","next_phase":"plan-review"}`})
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Someone else changes the plan while we "review".
	other, err := Get(p.Repo, "p", clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Change("other", "raise", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.MaxReviews = 12
		return n, nil
	}); err != nil {
		t.Fatal(err)
	}
	before := planFiles(t, p)
	next := snap.State.Clone()
	next.Phase, next.NextPhase = "plan-review", state.Opt[domain.Phase]("post-plan-review")
	err = p.Commit(snap, store.Change{Actor: "hook", Reason: "review", State: next})
	if !errors.Is(err, store.ErrMoved) {
		t.Fatalf("Commit over a moved state = %v, want store.ErrMoved", err)
	}
	if after := planFiles(t, p); !maps.Equal(before, after) {
		t.Errorf("a refused commit wrote something:\nbefore %q\nafter  %q", before, after)
	}
	// The plan's snapshot is still the one the command read.
	if cur, _ := p.Snapshot(); cur != snap {
		t.Error("a refused commit replaced the plan's snapshot")
	}
	p.Reload()
	cur, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if cur.State.MaxReviews != 12 || cur.State.Phase != "new-plan" {
		t.Errorf("the other update was lost or ours was written: %s", cur.StateRaw)
	}
	next = cur.State.Clone()
	next.Phase, next.NextPhase = "plan-review", state.Opt[domain.Phase]("post-plan-review")
	if err := p.Commit(cur, store.Change{Actor: "hook", Reason: "review", State: next}); err != nil {
		t.Fatalf("Commit over the current state: %v", err)
	}
	got, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != "plan-review" || got.MaxReviews != 12 {
		t.Errorf("after the commit the plan's state = %s", got.Encode())
	}
	if disk := readFile(t, p, "state.json"); disk != string(got.Encode()) {
		t.Errorf("the plan's snapshot after a commit is not the file written:\n%s\nvs\n%s", got.Encode(), disk)
	}
}

// A change of tasks.md alone moves the version too.
func TestCommitRefusesMovedTasks(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | pending |\n",
		"state.json": `{"phase":"create-tasks"}`})
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Path("tasks.md"), []byte("| Id | Status |\n|---|---|\n| 1 | pending |\n| 2 | pending |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := planFiles(t, p)
	err = p.Commit(snap, store.Change{Actor: "cli", Statuses: map[domain.TaskID]string{1: "in-progress"}})
	if !errors.Is(err, store.ErrMoved) {
		t.Fatalf("Commit over moved tasks = %v, want store.ErrMoved", err)
	}
	if after := planFiles(t, p); !maps.Equal(before, after) {
		t.Errorf("a refused commit wrote something:\nbefore %q\nafter  %q", before, after)
	}
}

func TestUpdate(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | pending |\n| 2 | pending |\n",
		"state.json": `{"phase":"create-tasks","next_phase":null}`})
	if _, err := p.Snapshot(); err != nil { // a stale snapshot must not matter
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Path("state.json"), []byte(`{"phase":"create-tasks","max_reviews":3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen *state.State
	err := p.Update(func(s *store.Snapshot) (store.Change, error) {
		seen = s.State
		n := s.State.Clone()
		n.Phase, n.CurrentTask, n.NextPhase, n.PhaseIteration = "next-task", state.Opt[domain.TaskID](1), state.Opt[domain.Phase]("code-review"), state.Int(0)
		return store.Change{Actor: "cli", Reason: "start 1", State: n, Statuses: map[domain.TaskID]string{1: "in-progress"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == nil || seen.MaxReviews != 3 {
		t.Errorf("Update's function saw %v, want the state on disk under the lock", seen)
	}
	s, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	if s.Phase != "next-task" || s.Task() != 1 || s.MaxReviews != 3 {
		t.Errorf("the plan's snapshot after Update = %s", s.Encode())
	}
	ts, _, err := p.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if t1, _ := ts.Find(1); t1 == nil || t1.StatusNorm() != "in-progress" {
		t.Errorf("tasks.md after Update: %s", readFile(t, p, "tasks.md"))
	}

	// A function that fails writes nothing, and leaves the snapshot.
	before := planFiles(t, p)
	snap, _ := p.Snapshot()
	boom := errors.New("boom")
	err = p.Update(func(s *store.Snapshot) (store.Change, error) {
		n := s.State.Clone()
		n.Phase = "code-review"
		return store.Change{State: n, Statuses: map[domain.TaskID]string{2: "done"}}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want the function's error", err)
	}
	if after := planFiles(t, p); !maps.Equal(before, after) {
		t.Errorf("a failed Update wrote something:\nbefore %q\nafter  %q", before, after)
	}
	if cur, _ := p.Snapshot(); cur != snap {
		t.Error("a failed Update replaced the plan's snapshot")
	}
}

func TestChange(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"new-plan","colour":"blue"}`})
	note := events.Event{Event: events.Progress, Reason: "note"}
	old, cur, err := p.Change("cli", "auto", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.NextPhase, n.PhaseIteration = state.Opt[domain.Phase]("plan-review"), state.Int(0)
		return n, nil
	}, note)
	if err != nil {
		t.Fatal(err)
	}
	if old.Next() != "" || cur.Next() != "plan-review" {
		t.Errorf("Change returned old %s cur %s", old.Encode(), cur.Encode())
	}
	disk, err := state.Decode("state.json", []byte(readFile(t, p, "state.json")))
	if err != nil {
		t.Fatal(err)
	}
	if disk.Next() != "plan-review" || string(disk.Extra["colour"]) != `"blue"` {
		t.Errorf("state.json after Change = %s, want next_phase set and the unknown field kept", disk.Encode())
	}
	evs, warns, err := eventstest.Read(p.Dir)
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	kinds := []string{}
	for _, e := range evs {
		kinds = append(kinds, e.Event)
	}
	// The extra event, then (state.json was written by hand) its whole
	// content as found, then the change itself.
	want := []string{events.Progress, events.Checkpoint, events.PhaseChange}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events = %v, want %v", kinds, want)
	}
	last := evs[len(evs)-1]
	if last.Actor != "cli" || last.Reason != "auto" || last.SHA != store.Hash([]byte(readFile(t, p, "state.json"))) {
		t.Errorf("the change's event = %+v", last)
	}

	// An error from fn writes nothing.
	before := planFiles(t, p)
	if _, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) { return nil, errors.New("refused") }); err == nil || err.Error() != "refused" {
		t.Fatalf("Change = %v, want fn's error", err)
	}
	if after := planFiles(t, p); !maps.Equal(before, after) {
		t.Errorf("a refused Change wrote something")
	}

	// A change to the same state writes nothing either.
	if _, _, err := p.Change("cli", "same", false, func(s *state.State) (*state.State, error) { return s.Clone(), nil }); err != nil {
		t.Fatal(err)
	}
	if after := planFiles(t, p); !maps.Equal(before, after) {
		t.Errorf("an empty Change wrote something:\nbefore %q\nafter  %q", before, after)
	}
}

func TestChangeCreatesOnlyWhenAsked(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n"})
	_, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) { return s, nil })
	if !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Change without state.json = %v, want state.ErrNotFound", err)
	}
	if _, err := os.Stat(p.Path("state.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state.json was created: %v", err)
	}
	old, cur, err := p.Change("cli", "plan created", true, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.NextPhase = state.Opt[domain.Phase]("plan-review")
		return n, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if old.Phase != "new-plan" || cur.Next() != "plan-review" {
		t.Errorf("Change(create) = old %s cur %s", old.Encode(), cur.Encode())
	}
	if got := readFile(t, p, "state.json"); got != string(cur.Encode()) {
		t.Errorf("state.json = %s, want %s", got, cur.Encode())
	}
}

func TestChangeRefusesUnknownPhase(t *testing.T) {
	const bad = `{"phase":"dancing"}`
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "state.json": bad})
	_, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) { return s, nil })
	var fe *state.FieldError
	if !errors.As(err, &fe) || fe.Field != "phase" {
		t.Fatalf("err = %v, want a field error on phase", err)
	}
	if data, _ := os.ReadFile(p.Path("state.json")); string(data) != bad {
		t.Errorf("state.json was rewritten: %s", data)
	}
}

func TestNewCycleArchivesTheSeries(t *testing.T) {
	p := newPlan(t, map[string]string{
		"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | done |\n", "task-1.md": "# 1\n",
		"task-1-review-1.md": "old", "task-1-post-review-1.md": "old post", "task-1-code-review-2.md": "legacy",
		"state.json": `{"phase":"code-review","current_task":"1","phase_iteration":2,"next_phase":"complete-task","consecutive_clean":2}`,
	})
	_, _, err := p.Change("cli", "reopen", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.Phase, n.NextPhase, n.PhaseIteration, n.ConsecutiveClean = "next-task", state.Opt[domain.Phase]("code-review"), state.Int(0), 0
		return n, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"task-1-review-1.md", "task-1-post-review-1.md", "task-1-code-review-2.md"} {
		if p.Exists(f) {
			t.Errorf("%s still in the plan directory", f)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(p.Repo.TaskieDir(), "archive", "p", "task-1-code-review-*", "task-1-review-1.md"))
	if len(matches) != 1 {
		t.Fatalf("archived review not found: %v", matches)
	}
	// The move is part of the commit: its event says which files went where.
	evs, _, _ := eventstest.Read(p.Dir)
	if len(evs) == 0 || evs[len(evs)-1].Archive == nil {
		t.Fatalf("events = %+v, want the commit event to record the archive", evs)
	}
	arch := evs[len(evs)-1].Archive
	if want := []string{"task-1-code-review-2.md", "task-1-post-review-1.md", "task-1-review-1.md"}; !slices.Equal(arch.Files, want) {
		t.Errorf("archived files = %v, want %v", arch.Files, want)
	}
	if filepath.Join(p.Repo.Root, arch.Dir) != filepath.Dir(matches[0]) {
		t.Errorf("archive dir = %s, files are in %s", arch.Dir, filepath.Dir(matches[0]))
	}
	// A change inside the cycle archives nothing.
	if err := os.WriteFile(p.Path("task-1-review-1.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) { n := s.Clone(); n.MaxReviews = 9; return n, nil }); err != nil {
		t.Fatal(err)
	}
	if !p.Exists("task-1-review-1.md") {
		t.Error("a change inside the cycle archived its review")
	}
}

// Events are appended before the files they describe: when the log
// cannot be written, nothing is.
func TestEventsFailureWritesNothing(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"new-plan"}`})
	if err := os.Mkdir(p.Path(events.FileName), 0o755); err != nil { // appending will fail
		t.Fatal(err)
	}
	_, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.NextPhase = state.Opt[domain.Phase]("plan-review")
		return n, nil
	})
	if err == nil || !strings.Contains(err.Error(), p.Path(events.FileName)) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v, want one naming events.jsonl and saying nothing was changed", err)
	}
	if got := readFile(t, p, "state.json"); got != `{"phase":"new-plan"}` {
		t.Errorf("state.json was changed without its event: %s", got)
	}
}

func TestTaskIDNamesKnownIDs(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | pending |\n| 4 | done |\n"})
	for in, want := range map[string]string{"x": `task id "x" is not a positive integer; known tasks: 1, 4`, "3": "unknown task 3 in plan p; known tasks: 1, 4"} {
		if _, err := p.TaskID(in); err == nil || err.Error() != want {
			t.Errorf("TaskID(%q) = %v, want %q", in, err, want)
		}
	}
	if got, err := p.TaskID(" 4 "); err != nil || got != 4 {
		t.Errorf("TaskID(4) = %d, %v", got, err)
	}
}
