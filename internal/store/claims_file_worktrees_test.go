package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func TestMarkClaimed(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	made := Worktree{Task: 1, Path: "/r/wt-1", BaseSHA: "b1", LastCommit: "b1"}
	adopted := Worktree{Task: 2, Path: "/r/wt", BaseSHA: "h0", LastCommit: "h0", Adopted: true}
	tests := []struct {
		name string
		ws   []Worktree
		w    Worktree
		want []Worktree
		ok   bool
	}{
		{"the task's worktree gets the new HEAD", []Worktree{made}, Worktree{Task: 1, Path: "/r/wt-1"},
			[]Worktree{{Task: 1, Path: "/r/wt-1", BaseSHA: "b1", LastCommit: "h1"}}, true},
		{"a free worktree is adopted", nil, Worktree{Task: 3, Path: "/r/other", Adopted: true},
			[]Worktree{{Task: 3, Path: "/r/other", BaseSHA: "h1", LastCommit: "h1", Created: now, Adopted: true}}, true},
		{"a worktree another task adopted first is not adopted again", []Worktree{adopted}, Worktree{Task: 4, Path: "/r/wt", Adopted: true},
			[]Worktree{adopted}, false},
		{"nor one taskie made for another task, from a subdirectory", []Worktree{made}, Worktree{Task: 5, Path: "/r/wt-1", Adopted: true},
			[]Worktree{made}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := MarkClaimed(append([]Worktree(nil), tc.ws...), tc.w, "h1", now)
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("record (-want +got):\n%s", d)
			}
		})
	}
}

// TestMarkClaimedConcurrent: claims of two tasks made at once inside one
// worktree — each deciding from a read made before the lock — leave one
// record of it, whichever came first.
func TestMarkClaimedConcurrent(t *testing.T) {
	c := wtTestCoord(t)
	p := PlanKey{Plan: "p"}
	var wg sync.WaitGroup
	adopted := make([]bool, 8)
	for i := range adopted {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := Worktree{Task: domain.TaskID(i + 1), Path: "/r/wt", Adopted: true}
			err := c.UpdateWorktrees(context.Background(), p, func(ws []Worktree, now time.Time) ([]Worktree, error) {
				ws, adopted[i] = MarkClaimed(ws, w, "h", now)
				return ws, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	ws, err := c.Worktrees(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range adopted {
		if a {
			n++
		}
	}
	if len(ws) != 1 || n != 1 {
		t.Errorf("%d records, %d adoptions; want 1 and 1: %+v", len(ws), n, ws)
	}
}

// TestCheckouts: a claim's checkout HEAD survives worktree updates and is
// what ClaimBase gives when the task has no worktree.
func TestCheckouts(t *testing.T) {
	c := wtTestCoord(t)
	p, ctx := PlanKey{Plan: "p"}, context.Background()
	if err := c.RecordCheckout(ctx, p, 2, "/r", "h0"); err != nil {
		t.Fatal(err)
	}
	if err := c.RecordCheckout(ctx, p, 2, "/r", "h1"); err != nil { // a new claim replaces it
		t.Fatal(err)
	}
	err := c.UpdateWorktrees(ctx, p, func(ws []Worktree, now time.Time) ([]Worktree, error) {
		return append(ws, Worktree{Task: 1, Path: "/r/wt-1", BaseSHA: "b1"}), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	type base struct {
		Path, Since string
		OK          bool
	}
	for task, want := range map[domain.TaskID]base{1: {"/r/wt-1", "b1", true}, 2: {"/r", "h1", true}, 3: {}} {
		path, since, ok, err := c.ClaimBase(p, task)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, base{path, since, ok}); d != "" {
			t.Errorf("task %d (-want +got):\n%s", task, d)
		}
	}
}

// wtTestCoord opens the coordination files of a fresh directory (no git:
// they live under .taskie/coord).
func wtTestCoord(t *testing.T) *FileCoord {
	t.Helper()
	c, err := OpenFileCoord(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Durable = false
	return c
}

// TestCheckoutLog: a claim's checkout is a line appended to the log, the
// newest of a task standing; the log is compacted to one line per task
// once large; a record of an earlier version, in worktrees.json, is
// still read for a task the log does not name.
func TestCheckoutLog(t *testing.T) {
	c := wtTestCoord(t)
	p, ctx := PlanKey{Plan: "p"}, context.Background()
	long := strings.Repeat("x", 2000)
	for i := range 200 { // past maxCheckoutLog
		if err := c.RecordCheckout(ctx, p, domain.TaskID(1+i%3), "/r/"+long, fmt.Sprint("h", i)); err != nil {
			t.Fatal(err)
		}
	}
	rel, _ := c.rel(p, CheckoutsName)
	fi, err := c.root.Lstat(rel)
	if err != nil || fi.Size() > maxCheckoutLog {
		t.Fatalf("checkout log: %v, %v bytes", err, fi)
	}
	old, _ := c.rel(p, WorktreesName)
	if err := c.root.WriteFile(old, []byte(`{"worktrees": null, "checkouts": [{"task": "9", "path": "/old", "head": "h9", "claimed": "2026-05-01T12:00:00Z"}]}`), false); err != nil {
		t.Fatal(err)
	}
	for task, want := range map[domain.TaskID]string{1: "h198", 2: "h199", 3: "h197", 9: "h9", 4: ""} {
		_, since, ok, err := c.ClaimBase(p, task)
		if err != nil || since != want || ok != (want != "") {
			t.Errorf("task %d: %q %v %v, want %q", task, since, ok, err, want)
		}
	}
}
