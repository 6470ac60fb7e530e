package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	tclock "github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/events/eventstest"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

const (
	id       = "p"
	tasks3   = "| Id | Status | Description |\n|---|---|---|\n| 1 | done | one |\n| 2 | pending | two \\| more |\n| 3 | pending | three |\n"
	reviewSt = `{"max_reviews":8,"current_task":"1","phase":"code-review","phase_iteration":2,"next_phase":"post-code-review","review_model":"opus","consecutive_clean":1,"tdd":false}`
)

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// repo writes files (paths relative to the plan directory, or to the
// repository root when they start with "/") and opens the store.
func repo(t *testing.T, files map[string]string) (*store.Files, string) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".taskie", "plans", id), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		p := filepath.Join(root, ".taskie", "plans", id, name)
		if rest, ok := strings.CutPrefix(name, "/"); ok {
			p = filepath.Join(root, rest)
		}
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
	st, err := store.Open(r, tclock.Real())
	if err != nil {
		t.Fatal(err)
	}
	st.Clock = tclock.At(t0)
	t.Cleanup(func() { st.Close() })
	return st, root
}

func planPath(root, name string) string { return filepath.Join(root, ".taskie", "plans", id, name) }

func read(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(planPath(root, name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

// files returns the bytes of the files a commit may write ("" = absent).
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range []string{state.FileName, "tasks.md", events.FileName} {
		out[n] = read(t, root, n)
	}
	return out
}

func sameFiles(t *testing.T, what string, before map[string]string, root string) {
	t.Helper()
	if after := files(t, root); !maps.Equal(before, after) {
		t.Errorf("%s wrote something (-before +after):\n%s", what, cmp.Diff(before, after))
	}
}

func logOf(t *testing.T, root string) []events.Event {
	t.Helper()
	evs, warns, err := eventstest.Read(filepath.Join(root, ".taskie", "plans", id))
	if err != nil || len(warns) > 0 {
		t.Fatalf("reading the log: %v %v", err, warns)
	}
	return evs
}

func kinds(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Event
	}
	return out
}

func load(t *testing.T, st *store.Files) *store.Snapshot {
	t.Helper()
	s, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withState returns s changed by fn.
func withState(s *state.State, fn func(*state.State)) *state.State {
	c := s.Clone()
	fn(c)
	return c
}

// startTask2 is `taskie start 2 --auto`: a new code-review cycle.
func startTask2(s *state.State) *state.State {
	return withState(s, func(n *state.State) {
		n.Phase, n.CurrentTask, n.NextPhase, n.PhaseIteration = "next-task", state.Opt[domain.TaskID](2), state.Opt[domain.Phase]("code-review"), state.Int(0)
		n.ConsecutiveClean, n.ReviewModel = 0, "opus"
	})
}

// newCycle hands a change the review cycle task 2's code review opens, as
// the shell works it out (workflow.StartsCycle, workflow.CycleArchive):
// the earlier cycle's files of the series, moved under the archive.
func newCycle(s *store.Snapshot, c store.Change) store.Change {
	c.NewCycle = true
	if names := s.SeriesFiles(domain.CodeReview, 2); len(names) > 0 {
		c.Archive = &events.Archive{Dir: ".taskie/archive/p/task-2-code-review-20260101T000000.000000000Z", Files: names}
	}
	return c
}

func TestLoadSnapshot(t *testing.T) {
	type want struct {
		state     string // state.json as re-encoded; "" = no state
		stateErr  string // substring of StateErr; "" = none
		errIs     error
		tasks     []int // task ids; nil = no tasks.md
		entries   []string
		regular   []string // entries Exists reports
		taskFiles []string
		pending   bool // PendingOther(current_task)
	}
	tests := []struct {
		name  string
		files map[string]string
		want  want
	}{
		{
			name: "a plan in review",
			files: map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "task-1.md": "# 1\n", "task-2.md": "# 2\n",
				"task-1-review-1.md": "r", "task-1-post-review-1.md": "pr", "task-1-code-review-2.md": "legacy", "state.json": reviewSt},
			want: want{state: reviewSt, tasks: []int{1, 2, 3},
				entries:   []string{"plan.md", "state.json", "task-1-code-review-2.md", "task-1-post-review-1.md", "task-1-review-1.md", "task-1.md", "task-2.md", "tasks.md"},
				regular:   []string{"plan.md", "state.json", "task-1.md", "tasks.md"},
				taskFiles: []string{"task-1.md", "task-2.md"}, pending: true},
		},
		{
			name:  "no state.json",
			files: map[string]string{"plan.md": "# p\n"},
			want:  want{stateErr: "state.json", errIs: state.ErrNotFound, entries: []string{"plan.md"}},
		},
		{
			name:  "malformed state.json",
			files: map[string]string{"plan.md": "# p\n", "state.json": "{\n \"phase\": \n"},
			want:  want{stateErr: "state.json:3:1: malformed JSON", entries: []string{"plan.md", "state.json"}},
		},
		{
			name:  "unknown phase",
			files: map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"dancing"}`},
			want:  want{stateErr: `unknown phase "dancing"`, entries: []string{"plan.md", "state.json"}},
		},
		{
			name:  "unknown next_phase",
			files: map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"new-plan","next_phase":"lunch"}`},
			want:  want{stateErr: `unknown next_phase "lunch"`, entries: []string{"plan.md", "state.json"}},
		},
		{
			name:  "current_task not a task id",
			files: map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"next-task","current_task":"0"}`},
			want:  want{stateErr: "current_task", entries: []string{"plan.md", "state.json"}},
		},
		{
			name:  "no pending task but the current one",
			files: map[string]string{"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | done |\n| 2 | pending |\n", "state.json": `{"phase":"next-task","current_task":2}`},
			want: want{state: `{"max_reviews":8,"current_task":"2","phase":"next-task","phase_iteration":null,"next_phase":null,"review_model":"opus","consecutive_clean":0,"tdd":false}`,
				tasks: []int{1, 2}, entries: []string{"plan.md", "state.json", "tasks.md"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, root := repo(t, tc.files)
			s := load(t, st)
			w := tc.want
			if s.Plan != id || s.Dir != planPath(root, "") || s.Root != root {
				t.Errorf("Plan %q Dir %q Root %q", s.Plan, s.Dir, s.Root)
			}
			if raw := tc.files["state.json"]; string(s.StateRaw) != raw {
				t.Errorf("StateRaw = %q, want the bytes on disk %q", s.StateRaw, raw)
			}
			if s.Version.State != store.Hash(s.StateRaw) || s.Version.Tasks != store.Hash(s.TasksRaw) {
				t.Errorf("Version %+v does not fingerprint the bytes read", s.Version)
			}
			if _, ok := tc.files["state.json"]; ok == (s.Version.State == "") {
				t.Errorf("Version.State %q with state.json present %v", s.Version.State, ok)
			}
			if w.state == "" {
				if s.State != nil {
					t.Errorf("State = %s, want none", s.State.Encode())
				}
			} else if s.State == nil {
				t.Errorf("State = nil (%v)", s.StateErr)
			} else {
				var got, want map[string]any
				_ = json.Unmarshal(s.State.Encode(), &got)
				_ = json.Unmarshal([]byte(w.state), &want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("State (-want +got):\n%s", diff)
				}
			}
			switch {
			case w.stateErr == "" && s.StateErr != nil:
				t.Errorf("StateErr = %v", s.StateErr)
			case w.stateErr != "" && (s.StateErr == nil || !strings.Contains(s.StateErr.Error(), w.stateErr)):
				t.Errorf("StateErr = %v, want it to contain %q", s.StateErr, w.stateErr)
			case w.errIs != nil && !errors.Is(s.StateErr, w.errIs):
				t.Errorf("StateErr = %v, want %v", s.StateErr, w.errIs)
			}
			if w.stateErr != "" && w.errIs == nil && !strings.Contains(s.StateErr.Error(), planPath(root, "state.json")) {
				t.Errorf("StateErr %q does not name the file", s.StateErr)
			}
			var ids []int
			if s.Tasks != nil {
				ids = s.Tasks.IDs()
			}
			if !slices.Equal(ids, w.tasks) {
				t.Errorf("task ids = %v, want %v", ids, w.tasks)
			}
			if (s.Tasks == nil) != (s.TasksRaw == nil) || (s.Tasks == nil) != (s.Version.Tasks == "") {
				t.Errorf("Tasks %v, TasksRaw %q, Version.Tasks %q disagree", s.Tasks != nil, s.TasksRaw, s.Version.Tasks)
			}
			var names []string
			for _, e := range s.Entries() {
				names = append(names, e.Name)
			}
			if !slices.Equal(names, w.entries) {
				t.Errorf("entries = %v, want %v", names, w.entries)
			}
			for _, n := range w.regular {
				if !s.Exists(n) {
					t.Errorf("Exists(%s) = false", n)
				}
			}
			if s.Exists("nothing.md") {
				t.Error("Exists(nothing.md) = true")
			}
			if got := s.TaskFiles(); !slices.Equal(got, w.taskFiles) && len(got)+len(w.taskFiles) > 0 {
				t.Errorf("TaskFiles = %v, want %v", got, w.taskFiles)
			}
			if s.State != nil {
				if got := s.PendingOther(s.State.Task()); got != w.pending {
					t.Errorf("PendingOther = %v, want %v", got, w.pending)
				}
			}
		})
	}
}

func TestSnapshotReviewFiles(t *testing.T) {
	st, _ := repo(t, map[string]string{"plan.md": "# p\n", "plan-review-1.md": "r", "plan-post-review-1.md": "p", "plan-review-2.md": "r",
		"task-3-review-1.md": "r", "task-3-code-review-2.md": "legacy", "task-3-code-post-review-2.md": "legacy post",
		"all-code-review-1.md": "r", "all-code-post-review-1.md": "p"})
	s := load(t, st)
	tests := []struct {
		what          string
		got, want     bool
		latest, wantL int
	}{
		{what: "plan-review 1", got: s.ReviewExists("plan-review", 0, 1), want: true},
		{what: "plan post-review 1", got: s.PostExists("plan-review", 0, 1), want: true},
		{what: "plan post-review 2", got: s.PostExists("plan-review", 0, 2), want: false},
		{what: "task 3 review 1", got: s.ReviewExists("code-review", 3, 1), want: true},
		{what: "task 3 legacy review 2", got: s.ReviewExists("code-review", 3, 2), want: true},
		{what: "task 3 legacy post-review 2", got: s.PostExists("code-review", 3, 2), want: true},
		{what: "task 4 review 1", got: s.ReviewExists("code-review", 4, 1), want: false},
		{what: "all-code review 1", got: s.ReviewExists("all-code-review", 0, 1), want: true},
		{what: "tasks review 1", got: s.ReviewExists("tasks-review", 0, 1), want: false},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	if got := s.Latest("plan-review", 0); got != 2 {
		t.Errorf("Latest(plan-review) = %d, want 2", got)
	}
	if got := s.Latest("code-review", 3); got != 2 {
		t.Errorf("Latest(code-review, 3) = %d, want 2", got)
	}
}

// Known defect (reported): the review files of plan-, tasks- and
// all-code-review carry no task number, but Snapshot.ReviewExists,
// PostExists and Latest compare the task given (the plan's current_task,
// still set during all-code-review) with the file's 0. So the hook never
// auto-detects an all-code post-review written without `taskie done`, and
// `taskie continue` cannot see those files. Remove the Skip once fixed.
func TestSnapshotReviewFilesIgnoreTheTaskOfPlanWideReviews(t *testing.T) {
	st, _ := repo(t, map[string]string{"plan.md": "# p\n", "all-code-review-1.md": "r", "all-code-post-review-1.md": "p"})
	s := load(t, st)
	if !s.ReviewExists("all-code-review", 4, 1) || !s.PostExists("all-code-review", 4, 1) || s.Latest("all-code-review", 4) != 1 {
		t.Errorf("all-code-review files with current_task 4: review %v post %v latest %d", s.ReviewExists("all-code-review", 4, 1),
			s.PostExists("all-code-review", 4, 1), s.Latest("all-code-review", 4))
	}
}

func TestLoadUnknownPlan(t *testing.T) {
	st, _ := repo(t, map[string]string{"plan.md": "# p\n"})
	for _, bad := range []string{"nope", "../p", "a/b", ""} {
		_, err := st.Load(bad)
		if err == nil {
			t.Errorf("Load(%q) succeeded", bad)
		}
	}
	if _, err := st.Load("nope"); err == nil || !strings.Contains(err.Error(), `plan "nope" not found; plans: p`) {
		t.Errorf("Load(nope) = %v", err)
	}
}

// Commit appends the change's events, the last being the commit event
// that fingerprints state.json before and after, and then writes the file
// it describes.
func TestCommitLogsTheChange(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "task-1.md": "# 1\n", "state.json": reviewSt})
	s := load(t, st)
	next := withState(s.State, func(n *state.State) {
		n.Phase, n.NextPhase = "post-code-review", state.Opt[domain.Phase]("code-review")
	})
	note := events.Event{Event: events.Progress, Reason: "did things"}
	got, err := st.Commit(id, s.Version, store.Change{Actor: "cli", Reason: "post-code-review done", State: next, Events: []events.Event{note}})
	if err != nil {
		t.Fatal(err)
	}
	evs := logOf(t, root)
	// state.json was never written by taskie: its content as found is
	// logged first, so a replay from the log is exact.
	if want := []string{events.Progress, events.Checkpoint, events.PhaseChange}; !slices.Equal(kinds(evs), want) {
		t.Fatalf("events = %v, want %v", kinds(evs), want)
	}
	last := evs[len(evs)-1]
	disk := read(t, root, "state.json")
	if last.SHA != store.Hash([]byte(disk)) || last.Prev != s.Version.State || last.Prev == "" {
		t.Errorf("commit event sha %q prev %q; state.json hash %q, before %q", last.SHA, last.Prev, store.Hash([]byte(disk)), s.Version.State)
	}
	if !last.IsCommit() || last.From != "code-review" || last.To != "post-code-review" || last.Task != "1" || last.Actor != "cli" || last.Reason != "post-code-review done" {
		t.Errorf("commit event = %+v", last)
	}
	if !last.TS.Equal(t0) || evs[0].Plan != id || evs[1].Plan != id || last.Plan != id {
		t.Errorf("events not stamped with the plan and the store's clock: %+v", evs)
	}
	if disk != string(next.Encode()) {
		t.Errorf("state.json = %s, want %s", disk, next.Encode())
	}
	if cp := evs[1]; cp.SHA != s.Version.State || cp.Prev != "" {
		t.Errorf("checkpoint sha %q prev %q, want the state as found", cp.SHA, cp.Prev)
	} else if rebuilt, err := state.Apply(nil, state.Delta{Set: cp.Set}); err != nil || !bytes.Equal(rebuilt.Encode(), s.State.Encode()) {
		t.Errorf("checkpoint rebuilds %s (%v), want %s", rebuilt.Encode(), err, s.State.Encode())
	}
	// The delta holds only what changed.
	if keys := slices.Sorted(maps.Keys(last.Set)); !slices.Equal(keys, []string{"next_phase", "phase"}) || len(last.Unset) > 0 {
		t.Errorf("commit delta set %v unset %v", keys, last.Unset)
	}
	// The returned snapshot is the plan as written.
	fresh := load(t, st)
	if got.Version != fresh.Version || !bytes.Equal(got.StateRaw, fresh.StateRaw) {
		t.Errorf("Commit returned version %+v, the plan is at %+v", got.Version, fresh.Version)
	}

	// The next commit chains on this one: no checkpoint.
	next2 := withState(next, func(n *state.State) { n.MaxReviews = 12 })
	if _, err := st.Commit(id, got.Version, store.Change{Actor: "cli", Reason: "set max_reviews", State: next2}); err != nil {
		t.Fatal(err)
	}
	evs = logOf(t, root)
	if want := []string{events.Progress, events.Checkpoint, events.PhaseChange, events.FieldSet}; !slices.Equal(kinds(evs), want) {
		t.Fatalf("events = %v, want %v", kinds(evs), want)
	}
	if l := evs[3]; l.Prev != last.SHA || l.SHA != store.Hash([]byte(read(t, root, "state.json"))) {
		t.Errorf("second commit prev %q sha %q, want prev %q", l.Prev, l.SHA, last.SHA)
	}
}

func TestFailedChangeWritesNothing(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		state string
		fn    func(*store.Snapshot) (store.Change, error)
		err   error  // errors.Is
		msg   string // substring
	}{
		{
			name:  "fn fails after building a change",
			state: reviewSt,
			fn: func(s *store.Snapshot) (store.Change, error) {
				return store.Change{State: startTask2(s.State), Statuses: map[domain.TaskID]string{2: "in-progress"}, Events: []events.Event{{Event: events.Progress}}}, boom
			},
			err: boom,
		},
		{
			name:  "an unknown status",
			state: reviewSt,
			fn: func(s *store.Snapshot) (store.Change, error) {
				return store.Change{State: startTask2(s.State), Statuses: map[domain.TaskID]string{2: "later"}}, nil
			},
			msg: `unknown status "later"`,
		},
		{
			name:  "a state change on a malformed state.json",
			state: `{"phase": `,
			fn: func(s *store.Snapshot) (store.Change, error) {
				return store.Change{State: state.New(), Statuses: map[domain.TaskID]string{2: "in-progress"}}, nil
			},
			msg: "state.json",
		},
		{
			name:  "a state change on a missing state.json without Create",
			state: "",
			fn: func(s *store.Snapshot) (store.Change, error) {
				return store.Change{State: state.New()}, nil
			},
			err: state.ErrNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsOf := map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "events.jsonl": `{"ts":"2026-11-26T09:00:00Z","plan":"p","event":"PROGRESS"}` + "\n"}
			if tc.state != "" {
				fsOf["state.json"] = tc.state
			}
			st, root := repo(t, fsOf)
			before := files(t, root)
			_, err := st.Update(id, tc.fn)
			if err == nil {
				t.Fatal("the change was accepted")
			}
			if tc.err != nil && !errors.Is(err, tc.err) || tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v / %q", err, tc.err, tc.msg)
			}
			sameFiles(t, "a failed Update", before, root)
		})
	}
}

func TestCommitStaleVersion(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(t *testing.T, st *store.Files, root string)
		stale func(v store.Version) store.Version
	}{
		{name: "state.json edited by hand", edit: func(t *testing.T, _ *store.Files, root string) {
			if err := os.WriteFile(planPath(root, "state.json"), []byte(strings.Replace(reviewSt, `"max_reviews":8`, `"max_reviews":9`, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "tasks.md edited by hand", edit: func(t *testing.T, _ *store.Files, root string) {
			if err := os.WriteFile(planPath(root, "tasks.md"), []byte(tasks3+"| 4 | pending | four |\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "another commit", edit: func(t *testing.T, st *store.Files, _ string) {
			if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "other", State: withState(s.State, func(n *state.State) { n.ReviewModel = "sonnet" })}, nil
			}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a version from nowhere", stale: func(store.Version) store.Version { return store.Version{} }},
		{name: "state.json removed", edit: func(t *testing.T, _ *store.Files, root string) {
			if err := os.Remove(planPath(root, "state.json")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt})
			s := load(t, st)
			v := s.Version
			if tc.edit != nil {
				tc.edit(t, st, root)
			}
			if tc.stale != nil {
				v = tc.stale(v)
			}
			before := files(t, root)
			_, err := st.Commit(id, v, store.Change{Actor: "hook", State: withState(s.State, func(n *state.State) { n.ConsecutiveClean = 2 }),
				Statuses: map[domain.TaskID]string{1: "in-progress"}, Events: []events.Event{{Event: events.ReviewFinished}}})
			if !errors.Is(err, store.ErrMoved) {
				t.Fatalf("Commit on a stale version = %v, want ErrMoved", err)
			}
			sameFiles(t, "a refused Commit", before, root)
		})
	}
}

// One commit writes tasks.md and state.json together, and a change that
// starts a new review cycle is refused, whole, while a review runs (the
// old defect: `taskie start 2 --auto` during a review set task 2
// in-progress in tasks.md and then failed on state.json).
func TestStatusesAndStateInOneCommit(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "task-1.md": "# 1\n", "task-2.md": "# 2\n",
		"task-2-review-1.md": "old cycle", "state.json": reviewSt})
	s := load(t, st)
	start := newCycle(s, store.Change{Actor: "cli", Reason: "start 2", State: startTask2(s.State), Statuses: map[domain.TaskID]string{1: "done", 2: "in-progress"}})

	l, ok, err := st.Root().TryLock(store.Rel(id, store.ReviewLockName))
	if err != nil || !ok {
		t.Fatalf("taking the review lock: %v %v", ok, err)
	}
	before := files(t, root)
	_, err = st.Commit(id, s.Version, start)
	if !errors.Is(err, store.ErrReviewRunning) || !strings.Contains(err.Error(), "plan p") {
		t.Fatalf("a new cycle while the review lock is held = %v, want ErrReviewRunning naming the plan", err)
	}
	sameFiles(t, "a refused new cycle", before, root)
	if _, err := os.Stat(planPath(root, "task-2-review-1.md")); err != nil {
		t.Errorf("the old cycle's review was moved although the change was refused: %v", err)
	}
	// A change inside the running cycle is fine.
	inside := store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.MaxReviews = 10 })}
	if _, err := st.Commit(id, s.Version, inside); err != nil {
		t.Fatalf("a change inside the cycle while a review runs: %v", err)
	}
	// The hook's own change, made under the review lock, may start a cycle.
	s = load(t, st)
	start.State = startTask2(s.State)
	start = newCycle(s, start)
	start.DuringReview = true
	if _, err := st.Commit(id, s.Version, start); err != nil {
		t.Fatalf("the reviewing hook's own new cycle: %v", err)
	}
	l.Unlock()

	evs := logOf(t, root)
	last := evs[len(evs)-1]
	wantTasks := strings.Replace(tasks3, "| 2 | pending |", "| 2 | in-progress |", 1)
	if got := read(t, root, "tasks.md"); got != wantTasks {
		t.Errorf("tasks.md:\n%s\nwant\n%s", got, wantTasks)
	}
	if last.Event != events.PhaseChange || !maps.Equal(last.Tasks, map[string]string{"2": "in-progress"}) {
		t.Errorf("commit event %s tasks %v, want one PHASE_CHANGE with only the status that changed", last.Event, last.Tasks)
	}
	if last.TSHA != store.Hash([]byte(wantTasks)) || last.TPrev != store.Hash([]byte(tasks3)) || last.SHA != store.Hash([]byte(read(t, root, "state.json"))) {
		t.Errorf("commit event tsha %q tprev %q sha %q do not fingerprint the files", last.TSHA, last.TPrev, last.SHA)
	}
	// The new cycle moved the previous cycle's review of task 2 aside.
	if last.Archive == nil || !slices.Equal(last.Archive.Files, []string{"task-2-review-1.md"}) {
		t.Fatalf("archive = %+v", last.Archive)
	}
	if _, err := os.Stat(filepath.Join(root, last.Archive.Dir, "task-2-review-1.md")); err != nil {
		t.Errorf("archived review: %v", err)
	}
	if _, err := os.Stat(planPath(root, "task-2-review-1.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old review is still in the plan: %v", err)
	}

	// The lock released, a plain `taskie start` works too.
	s = load(t, st)
	n := withState(s.State, func(n *state.State) {
		n.Phase, n.CurrentTask, n.NextPhase, n.PhaseIteration = "next-task", state.Opt[domain.TaskID](3), state.Opt[domain.Phase]("code-review"), state.Int(0)
	})
	if _, err := st.Commit(id, s.Version, store.Change{Actor: "cli", State: n, Statuses: map[domain.TaskID]string{3: "in-progress"}}); err != nil {
		t.Fatal(err)
	}
}

// A process killed after appending its commit, before replacing the files:
// the next Load (or commit) completes the commit.
func TestCrashRedo(t *testing.T) {
	tests := []struct {
		name string
		// change builds the commit on the snapshot.
		change func(s *store.Snapshot) store.Change
		// after runs after the files are put back (the "crash").
		after func(t *testing.T, root string)
		// redo: the files must equal the commit's result after Load.
		redo bool
	}{
		{name: "state change", redo: true, change: func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "hook", State: withState(s.State, func(n *state.State) {
				n.Phase, n.NextPhase = "post-code-review", state.Opt[domain.Phase]("code-review")
			})}
		}},
		{name: "state and tasks change", redo: true, change: func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "hook", State: withState(s.State, func(n *state.State) { n.ConsecutiveClean = 2; n.NextPhase = state.Opt[domain.Phase]("complete-task") }),
				Statuses: map[domain.TaskID]string{1: "done", 3: "blocked"}}
		}},
		{name: "an unknown field removed", redo: true, change: func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { delete(n.Extra, "colour") })}
		}},
		{name: "recover replaces the whole file", redo: true, change: func(s *store.Snapshot) store.Change {
			n := state.New()
			n.Phase = "create-tasks"
			return store.Change{Actor: "cli", Kind: events.Recovered, State: n, Replace: true}
		}},
		{name: "a torn line after the commit", redo: true,
			change: func(s *store.Snapshot) store.Change {
				return store.Change{Actor: "hook", State: withState(s.State, func(n *state.State) { n.MaxReviews = 3 })}
			},
			after: func(t *testing.T, root string) {
				appendRaw(t, root, `{"ts":"2026-11-26T10:00:01Z","plan":"p","ev`)
			}},
		{name: "state.json edited after the crash: the edit wins", redo: false,
			change: func(s *store.Snapshot) store.Change {
				return store.Change{Actor: "hook", State: withState(s.State, func(n *state.State) { n.MaxReviews = 3 })}
			},
			after: func(t *testing.T, root string) {
				if err := os.WriteFile(planPath(root, "state.json"), []byte(`{"phase":"code-review","max_reviews":5}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "an event after the commit: the commit is not the last thing that happened", redo: false,
			change: func(s *store.Snapshot) store.Change {
				return store.Change{Actor: "hook", State: withState(s.State, func(n *state.State) { n.MaxReviews = 3 })}
			},
			after: func(t *testing.T, root string) {
				appendRaw(t, root, `{"ts":"2026-11-26T10:00:01Z","plan":"p","event":"REVIEW_STARTED"}`+"\n")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3,
				"state.json": strings.Replace(reviewSt, `"tdd":false`, `"tdd":false,"colour":"blue"`, 1)})
			// Start from a state.json taskie wrote, so the crash is the
			// only thing between the log and the files.
			if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.ReviewModel = "sonnet" })}, nil
			}); err != nil {
				t.Fatal(err)
			}
			s := load(t, st)
			change := tc.change(s)
			done := completed(t, st, s, change)
			// The kill: the log has the commit, the files are untouched.
			crash(t, st, s, change)
			if tc.after != nil {
				tc.after(t, root)
			}
			edited := files(t, root)
			want := edited
			if tc.redo {
				want = done
			}
			// A read sees the commit completed, and writes nothing.
			s = load(t, st)
			if got := map[string]string{"state.json": string(s.StateRaw), "tasks.md": string(s.TasksRaw)}; got["state.json"] != want["state.json"] || got["tasks.md"] != want["tasks.md"] {
				t.Errorf("Load shows (-want +got):\n%s", cmp.Diff(map[string]string{"state.json": want["state.json"], "tasks.md": want["tasks.md"]}, got))
			}
			if s.Version.State != store.Hash([]byte(want["state.json"])) {
				t.Errorf("the snapshot's version is not of the files it shows")
			}
			sameFiles(t, "Load", edited, root)
			// The next change completes it on disk.
			if _, err := st.Update(id, func(*store.Snapshot) (store.Change, error) { return store.Change{}, nil }); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"state.json", "tasks.md"} {
				if got := read(t, root, n); got != want[n] {
					t.Errorf("%s after the next change:\n%s\nwant\n%s", n, got, want[n])
				}
			}
			// Loading again changes nothing more.
			again := files(t, root)
			load(t, st)
			sameFiles(t, "a second Load", again, root)
		})
	}
}

func appendRaw(t *testing.T, root, line string) {
	t.Helper()
	f, err := os.OpenFile(planPath(root, events.FileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

// A state.json changed by hand since the last commit: the next commit logs
// it whole (STATE_CHECKPOINT) before its own event, so replay stays exact.
func TestHandEditCheckpointed(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "state.json": reviewSt})
	if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
		return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.ReviewModel = "sonnet" })}, nil
	}); err != nil {
		t.Fatal(err)
	}
	n0 := len(logOf(t, root))
	hand := `{"phase":"code-review","current_task":"1","phase_iteration":2,"next_phase":"post-code-review","max_reviews":20,"note":{"by":"hand"}}`
	if err := os.WriteFile(planPath(root, "state.json"), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	s := load(t, st)
	if string(s.StateRaw) != hand {
		t.Fatalf("Load rewrote a hand edit: %s", s.StateRaw)
	}
	if _, err := st.Commit(id, s.Version, store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.TDD = true })}); err != nil {
		t.Fatal(err)
	}
	evs := logOf(t, root)[n0:]
	if want := []string{events.Checkpoint, events.FieldSet}; !slices.Equal(kinds(evs), want) {
		t.Fatalf("events after the hand edit = %v, want %v", kinds(evs), want)
	}
	cp := evs[0]
	if cp.SHA != store.Hash([]byte(hand)) || !cp.Replaces() {
		t.Errorf("checkpoint sha %q, want the hand-edited file's %q", cp.SHA, store.Hash([]byte(hand)))
	}
	got, err := state.Apply(nil, state.Delta{Set: cp.Set})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Encode(), s.State.Encode()) {
		t.Errorf("checkpoint rebuilds %s, want %s", got.Encode(), s.State.Encode())
	}
	if evs[1].Prev != cp.SHA {
		t.Errorf("the commit after the checkpoint has prev %q, want %q", evs[1].Prev, cp.SHA)
	}
	// No second checkpoint once the log is in step.
	s = load(t, st)
	if _, err := st.Commit(id, s.Version, store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.TDD = false })}); err != nil {
		t.Fatal(err)
	}
	if k := kinds(logOf(t, root)[n0:]); !slices.Equal(k, []string{events.Checkpoint, events.FieldSet, events.FieldSet}) {
		t.Errorf("events = %v", k)
	}
}

func TestTempFilesRemoved(t *testing.T) {
	temps := []string{".state.json.tmp123", ".tasks.md.tmp4", ".task-1.md.tmp99"}
	for _, how := range []string{"load", "commit"} {
		t.Run(how, func(t *testing.T) {
			fsOf := map[string]string{"plan.md": "# p\n", "state.json": reviewSt, ".notes.tmpl": "not a temp file"}
			for _, n := range temps {
				fsOf[n] = "half written"
			}
			st, root := repo(t, fsOf)
			if how == "load" {
				// A read writes nothing: the next change removes them.
				load(t, st)
				for _, n := range temps {
					if _, err := os.Stat(planPath(root, n)); err != nil {
						t.Errorf("a read removed %s: %v", n, err)
					}
				}
				return
			} else if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.MaxReviews = 9 })}, nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, n := range temps {
				if _, err := os.Stat(planPath(root, n)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s left behind after %s: %v", n, how, err)
				}
			}
			if _, err := os.Stat(planPath(root, ".notes.tmpl")); err != nil {
				t.Errorf(".notes.tmpl is no temp file but was removed: %v", err)
			}
		})
	}
}

func TestCommitKeepsPermissions(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt})
	if err := os.Chmod(planPath(root, "state.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(planPath(root, "tasks.md"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
		return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.MaxReviews = 9 }), Statuses: map[domain.TaskID]string{2: "in-progress"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"state.json": 0o600, "tasks.md": 0o640} {
		fi, err := os.Stat(planPath(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode after a commit = %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	if !strings.Contains(read(t, root, "state.json"), `"max_reviews":9`) && !strings.Contains(read(t, root, "state.json"), `"max_reviews": 9`) {
		t.Errorf("the commit was not written: %s", read(t, root, "state.json"))
	}
}

func TestSymlinkedLogOutsideTheRepository(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "state.json": reviewSt})
	outside := filepath.Join(t.TempDir(), "events.jsonl")
	const was = "precious\n"
	if err := os.WriteFile(outside, []byte(was), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, planPath(root, events.FileName)); err != nil {
		t.Fatal(err)
	}
	s := load(t, st)
	_, err := st.Commit(id, s.Version, store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.MaxReviews = 9 })})
	if err == nil {
		t.Fatal("Commit through a symlink out of the repository succeeded")
	}
	if !strings.Contains(err.Error(), planPath(root, events.FileName)) || !errors.Is(err, fsafe.ErrOutsideRepo) {
		t.Errorf("err = %v, want one naming %s and wrapping ErrOutsideRepo", err, planPath(root, events.FileName))
	}
	if data, _ := os.ReadFile(outside); string(data) != was {
		t.Errorf("the file outside the repository was changed: %q", data)
	}
	if got := read(t, root, "state.json"); got != reviewSt {
		t.Errorf("state.json changed without its event: %s", got)
	}
	// Appending events alone is refused the same way.
	if err := st.Append(id, events.Event{Event: events.Progress}); err == nil || !errors.Is(err, fsafe.ErrOutsideRepo) {
		t.Errorf("Append = %v", err)
	}
}

// A FIFO (or a directory) where a plan file should be is an error naming
// the path, returned at once: never a hang.
func TestSpecialFilesNeverHang(t *testing.T) {
	tests := []struct {
		name string
		file string
		run  func(st *store.Files) (string, error) // an error, or a StateErr-like message
	}{
		{name: "FIFO state.json: Load", file: "state.json", run: func(st *store.Files) (string, error) {
			s, err := st.Load(id)
			if err != nil {
				return err.Error(), err
			}
			if s.StateErr == nil {
				return "", nil
			}
			return s.StateErr.Error(), s.StateErr
		}},
		{name: "FIFO state.json: Update", file: "state.json", run: func(st *store.Files) (string, error) {
			_, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{State: state.New()}, nil
			})
			if err == nil {
				return "", nil
			}
			return err.Error(), err
		}},
		{name: "FIFO tasks.md: Load", file: "tasks.md", run: func(st *store.Files) (string, error) {
			s, err := st.Load(id)
			if err != nil {
				return err.Error(), err
			}
			if s.TasksErr == nil {
				return "", nil
			}
			return s.TasksErr.Error(), s.TasksErr
		}},
		{name: "FIFO events.jsonl: Commit", file: events.FileName, run: func(st *store.Files) (string, error) {
			s, err := st.Load(id)
			if err != nil {
				return err.Error(), err
			}
			_, err = st.Commit(id, s.Version, store.Change{State: withState(s.State, func(n *state.State) { n.MaxReviews = 9 })})
			if err == nil {
				return "", nil
			}
			return err.Error(), err
		}},
		{name: "FIFO task-1.md: ReadFile", file: "task-1.md", run: func(st *store.Files) (string, error) {
			s, err := st.Load(id)
			if err != nil {
				return err.Error(), err
			}
			_, err = s.ReadFile("task-1.md")
			if err == nil {
				return "", nil
			}
			return err.Error(), err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsOf := map[string]string{"plan.md": "# p\n", "state.json": reviewSt, "tasks.md": tasks3}
			delete(fsOf, tc.file)
			st, root := repo(t, fsOf)
			if err := syscall.Mkfifo(planPath(root, tc.file), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			type res struct {
				msg string
				err error
			}
			ch := make(chan res, 1)
			go func() { m, err := tc.run(st); ch <- res{m, err} }()
			select {
			case r := <-ch:
				if r.err == nil {
					t.Fatal("no error for a FIFO")
				}
				if !strings.Contains(r.msg, planPath(root, tc.file)) || !errors.Is(r.err, fsafe.ErrNotRegular) {
					t.Errorf("error %q does not name %s as not a regular file", r.msg, planPath(root, tc.file))
				}
			case <-time.After(5 * time.Second):
				// Unblock the goroutine so the test binary can exit.
				if w, err := os.OpenFile(planPath(root, tc.file), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				t.Fatal("hung on a FIFO")
			}
			if fi, err := os.Lstat(planPath(root, tc.file)); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced: %v %v", fi, err)
			}
		})
	}
}

func TestDirectoryInPlaceOfAFile(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | pending |\n", "state.json": reviewSt,
		"task-1.md/notes.txt": "x"})
	s := load(t, st)
	if s.Exists("task-1.md") || len(s.TaskFiles()) != 0 {
		t.Errorf("a directory named task-1.md counts as a task file: %v", s.TaskFiles())
	}
	found := false
	for _, v := range s.Validate(nil) {
		if v.File == "task-1.md" && v.Severity == plan.SeverityError && strings.Contains(v.Msg, "directory") {
			found = true
		}
	}
	if !found {
		t.Errorf("Validate does not report the directory task-1.md: %v", s.Validate(nil))
	}
	if _, err := s.ReadFile("task-1.md"); err == nil || !strings.Contains(err.Error(), planPath(root, "task-1.md")) {
		t.Errorf("ReadFile of a directory = %v, want an error naming it", err)
	}
}

// Concurrent updates through the plan lock never lose one another
// (docs/architecture.md#the-plan-store: the lock is a sidecar, never state.json itself).
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"new-plan","max_reviews":0}`})
	const workers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		r, err := plan.Find(root)
		if err != nil {
			t.Fatal(err)
		}
		other, err := store.Open(r, tclock.Real()) // one store per "process"
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := other.Update(id, func(s *store.Snapshot) (store.Change, error) {
					return store.Change{Actor: "t", State: withState(s.State, func(n *state.State) { n.MaxReviews++ })}, nil
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := load(t, st)
	if s.State.MaxReviews != workers*each {
		t.Errorf("max_reviews = %d after %d increments", s.State.MaxReviews, workers*each)
	}
	evs := logOf(t, root)
	commits := 0
	for _, e := range evs {
		if e.IsCommit() && e.Event != events.Checkpoint {
			commits++
		}
	}
	if commits != workers*each {
		t.Errorf("%d commit events for %d updates", commits, workers*each)
	}
}

// Change.Empty writes nothing; a state equal to the current one logs no
// commit; extra events alone are appended.
func TestEmptyChanges(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt})
	before := files(t, root)
	s := load(t, st)
	for _, c := range []store.Change{{}, {Actor: "cli", State: s.State.Clone()}, {Actor: "cli", Statuses: map[domain.TaskID]string{1: "done"}}} {
		if _, err := st.Commit(id, s.Version, c); err != nil {
			t.Fatal(err)
		}
	}
	sameFiles(t, "empty changes", before, root)
	if _, err := st.Commit(id, s.Version, store.Change{Events: []events.Event{{Event: events.Progress, Reason: "note"}}}); err != nil {
		t.Fatal(err)
	}
	evs := logOf(t, root)
	if len(evs) != 1 || evs[0].Event != events.Progress || evs[0].IsCommit() {
		t.Errorf("events = %+v, want the one note", evs)
	}
	if read(t, root, "state.json") != reviewSt {
		t.Error("state.json changed")
	}
}

// A state decoded once is handed out as a copy: a caller changing its
// snapshot's state changes no other snapshot, and a file changed since is
// decoded afresh.
func TestDecodedStateIsACopy(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# P\n", "state.json": reviewSt})
	peeked, err := st.PeekState(id)
	if err != nil {
		t.Fatal(err)
	}
	peeked.Phase = "complete"
	a := load(t, st)
	a.State.Phase = "complete"
	if b := load(t, st); b.State.Phase != "code-review" {
		t.Errorf("second load sees phase %q, want the file's code-review", b.State.Phase)
	}
	if err := os.WriteFile(planPath(root, "state.json"), []byte(strings.Replace(reviewSt, `"code-review"`, `"post-code-review"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := load(t, st); c.State.Phase != "post-code-review" {
		t.Errorf("load after the file changed sees phase %q, want post-code-review", c.State.Phase)
	}
}

// A commit's snapshot is built from what it wrote, not read back: it must
// show exactly what a fresh read of the files shows.
func TestCommitSnapshotIsWhatARereadSees(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *store.Snapshot) store.Change
	}{
		{"state only", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.MaxReviews = 10 })}
		}},
		{"state and a status already set", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", State: startTask2(s.State), Statuses: map[domain.TaskID]string{1: "done"}}
		}},
		{"state and a status moved", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", State: startTask2(s.State), Statuses: map[domain.TaskID]string{1: "done", 2: "in-progress"}}
		}},
		{"a status alone", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", Statuses: map[domain.TaskID]string{3: "blocked"}}
		}},
		{"a plan file and state", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", State: startTask2(s.State), Files: map[string][]byte{"task-2-output.md": []byte("# out\n")}}
		}},
		{"tasks.md as a file", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", State: startTask2(s.State), Files: map[string][]byte{"tasks.md": []byte(tasks3 + "| 4 | pending | four |\n")}}
		}},
		{"events alone", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", Events: []events.Event{{Event: events.Progress}}}
		}},
		{"state with an unknown phase", func(s *store.Snapshot) store.Change {
			return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.Phase = "no-such-phase" })}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _ := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt})
			got, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) { return tt.change(s), nil })
			if err != nil {
				t.Fatal(err)
			}
			want := load(t, st)
			view := func(s *store.Snapshot) map[string]string {
				m := map[string]string{"state raw": string(s.StateRaw), "tasks raw": string(s.TasksRaw),
					"version": fmt.Sprint(s.Version), "logged sha": s.LoggedSHA(), "state err": fmt.Sprint(s.StateErr), "tasks err": fmt.Sprint(s.TasksErr)}
				if s.State != nil {
					m["state"] = string(s.State.Encode())
				}
				if s.Tasks != nil {
					m["tasks"] = string(s.Tasks.Bytes())
				}
				var names []string
				for _, e := range s.Entries() {
					names = append(names, e.Name)
				}
				m["entries"] = strings.Join(names, " ")
				return m
			}
			if d := cmp.Diff(view(want), view(got)); d != "" {
				t.Errorf("the commit's snapshot differs from a read of the files (-read +commit):\n%s", d)
			}
		})
	}
}

// tasks.md edited between the snapshot and the commit: the commit sees the
// edit, not the first parse.
func TestUpdateSeesTasksEditedSinceTheSnapshot(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt})
	if s := load(t, st); s.Tasks == nil || len(s.Tasks.Tasks) != 3 {
		t.Fatalf("tasks = %+v", s.Tasks)
	}
	edited := tasks3 + "| 4 | pending | four |\n"
	if err := os.WriteFile(planPath(root, "tasks.md"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen int
	_, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
		seen = len(s.Tasks.Tasks)
		return store.Change{Actor: "cli", Statuses: map[domain.TaskID]string{4: "in-progress"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != 4 {
		t.Errorf("the commit saw %d tasks, want the 4 of the edited tasks.md", seen)
	}
	if got, want := read(t, root, "tasks.md"), strings.Replace(edited, "| 4 | pending |", "| 4 | in-progress |", 1); got != want {
		t.Errorf("tasks.md:\n%s\nwant\n%s", got, want)
	}
}
