package store_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	tclock "github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

// crash commits c as a process killed right after the append would: the
// events are logged, no file is touched.
func crash(t *testing.T, st *store.Files, s *store.Snapshot, c store.Change) {
	t.Helper()
	store.SetFailWrite(st, func(rel string) error {
		if !strings.HasSuffix(rel, events.FileName) {
			runtime.Goexit() // the kill: nothing after this runs but the lock's release
		}
		return nil
	})
	defer store.SetFailWrite(st, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = st.Commit(id, s.Version, c)
		t.Error("the commit was not cut short")
	}()
	<-done
}

// completed returns the plan files as the complete commit of c leaves
// them, committed in a copy of the repository.
func completed(t *testing.T, st *store.Files, s *store.Snapshot, c store.Change) map[string]string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(st.Repo.Root)); err != nil {
		t.Fatal(err)
	}
	r, err := plan.Find(dst)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := store.Open(r, tclock.Real())
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	cp.Clock = st.Clock
	if _, err := cp.Commit(id, s.Version, c); err != nil {
		t.Fatal(err)
	}
	return files(t, dst)
}

// tree returns every file under dir (relative name → content).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == store.LockName {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// consistent checks that state.json equals the replay of the log, as
// `taskie recover --check` does.
func consistent(t *testing.T, root string) {
	t.Helper()
	res := history.Replay(logOf(t, root), history.Defaults{})
	cur, err := state.Decode("state.json", []byte(read(t, root, "state.json")))
	if err != nil {
		t.Fatal(err)
	}
	if d := history.Diff(res.State, cur); len(d) > 0 {
		t.Errorf("state.json differs from the replay of the log (replay → file): %v", d)
	}
}

// A change whose files cannot all be written (a full disk) fails, and is
// taken back whole: the log is cut back, the files written are put back,
// and no later command — a read, the next change — applies it.
func TestFailedWriteTakesTheChangeBack(t *testing.T) {
	enospc := syscall.ENOSPC
	tests := []struct {
		name string
		fail string // the write that fails: a path suffix
	}{
		{"the log append", events.FileName},
		{"the archive move", "task-2-review-1.md"},
		{"a file outside the plan", "/notes.md"},
		{"a task file", "task-2.md"},
		{"tasks.md", "tasks.md"},
		{"state.json", "state.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt,
				"task-2.md": "# Task 2\n", "task-2-review-1.md": "old review\n", "/.taskie/archive/p/notes.md": "old notes\n"})
			// Start from files taskie wrote, so that only the failure differs.
			if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.Phase = "next-task"; n.NextPhase = nil })}, nil
			}); err != nil {
				t.Fatal(err)
			}
			before := tree(t, filepath.Join(root, ".taskie"))
			s := load(t, st)
			store.SetFailWrite(st, func(rel string) error {
				if strings.HasSuffix(rel, tc.fail) {
					return enospc
				}
				return nil
			})
			_, err := st.Commit(id, s.Version, newCycle(s, store.Change{Actor: "cli", State: startTask2(s.State), Statuses: map[domain.TaskID]string{2: "in-progress"},
				Files: map[string][]byte{"task-2.md": []byte("# Task 2\n\nnew\n")}, Outside: map[string][]byte{".taskie/archive/p/notes.md": []byte("new notes\n")},
				Events: []events.Event{{Event: events.Progress, Task: "2"}}}))
			store.SetFailWrite(st, nil)
			if !errors.Is(err, enospc) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("Commit = %v, want no space left … nothing was changed", err)
			}
			if d := cmp.Diff(before, tree(t, filepath.Join(root, ".taskie"))); d != "" {
				t.Errorf("the failed change left files changed (-before +after):\n%s", d)
			}
			// A read shows the plan as it was (taskie status applied it).
			if s2 := load(t, st); string(s2.StateRaw) != string(s.StateRaw) {
				t.Errorf("Load after the failure shows %s, want %s", s2.StateRaw, s.StateRaw)
			}
			// The next change neither.
			if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.MaxReviews = 13 })}, nil
			}); err != nil {
				t.Fatal(err)
			}
			want := withState(s.State, func(n *state.State) { n.MaxReviews = 13 })
			if got := read(t, root, "state.json"); got != string(want.Encode()) {
				t.Errorf("state.json after the next change:\n%s\nwant\n%s", got, want.Encode())
			}
			if read(t, root, "tasks.md") != tasks3 {
				t.Errorf("tasks.md got the failed change's status")
			}
			consistent(t, root)
		})
	}
}

// The same without the test hook: a file outside the plan that cannot be
// written (a regular file where its directory goes).
func TestFailedWriteUnderAFileTakesTheChangeBack(t *testing.T) {
	st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt, "/.taskie/blocker": "a file"})
	before := files(t, root)
	s := load(t, st)
	next := withState(s.State, func(n *state.State) {
		n.Phase, n.NextPhase = "post-code-review", state.Opt[domain.Phase]("code-review")
	})
	_, err := st.Commit(id, s.Version, store.Change{Actor: "cli", State: next, Statuses: map[domain.TaskID]string{2: "in-progress"},
		Outside: map[string][]byte{".taskie/blocker/archive.md": []byte("x")}})
	if err == nil {
		t.Fatal("Commit writing under a regular file succeeded")
	}
	sameFiles(t, "a failed commit", before, root)
	load(t, st)
	if _, err := st.Update(id, func(*store.Snapshot) (store.Change, error) { return store.Change{}, nil }); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "a read and a change after a failed commit", before, root)
}

// A state.json put back by hand (or by git) after a commit holds the
// commit's prev, as a crash would leave it, but is another file: it is
// kept, and the next change records it as found.
func TestRestoredStateKept(t *testing.T) {
	tests := []struct {
		name    string
		restore func(t *testing.T, p string, saved []byte, fi fs.FileInfo)
	}{
		{"cp over the file", func(t *testing.T, p string, saved []byte, _ fs.FileInfo) {
			if err := os.WriteFile(p, saved, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"cp -p: the old modification time", func(t *testing.T, p string, saved []byte, fi fs.FileInfo) {
			if err := os.WriteFile(p, saved, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"git checkout: a new file", func(t *testing.T, p string, saved []byte, _ fs.FileInfo) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, saved, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, root := repo(t, map[string]string{"plan.md": "# p\n", "tasks.md": tasks3, "state.json": reviewSt})
			if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.ReviewModel = "sonnet" })}, nil
			}); err != nil {
				t.Fatal(err)
			}
			p := planPath(root, "state.json")
			saved := []byte(read(t, root, "state.json"))
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond) // a change time apart on coarse clocks
			if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", Kind: events.FieldSet, State: withState(s.State, func(n *state.State) { n.MaxReviews = 13 })}, nil
			}); err != nil {
				t.Fatal(err)
			}
			tc.restore(t, p, saved, fi)
			if s := load(t, st); string(s.StateRaw) != string(saved) {
				t.Errorf("a read undid the restore: %s", s.StateRaw)
			}
			if got := read(t, root, "state.json"); got != string(saved) {
				t.Fatalf("the restore was undone on disk: %s", got)
			}
			n0 := len(logOf(t, root))
			if _, err := st.Update(id, func(s *store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", State: withState(s.State, func(n *state.State) { n.TDD = true })}, nil
			}); err != nil {
				t.Fatal(err)
			}
			evs := logOf(t, root)[n0:]
			if len(evs) != 2 || evs[0].Event != events.Checkpoint || !strings.Contains(evs[0].Reason, "restored by hand") {
				t.Fatalf("events after the restore = %+v, want a checkpoint restored by hand, then the change", evs)
			}
			want, _ := state.Decode("state.json", saved)
			want.TDD = true
			if got := read(t, root, "state.json"); got != string(want.Encode()) {
				t.Errorf("state.json = %s, want the restore and the change %s", got, want.Encode())
			}
			consistent(t, root)
		})
	}
}
