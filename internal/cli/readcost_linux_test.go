package cli

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadsSkipClosedTaskFiles: `ready` reads the task files of the tasks
// it prints and `groups` those of the open tasks it plans, never those of
// finished tasks, so a read costs what it shows rather than the size of
// the plan's history (docs/performance.md). What was read is told by the
// access times, set back before each command; a filesystem that does not
// update them skips the test.
func TestReadsSkipClosedTaskFiles(t *testing.T) {
	for _, k := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME"} {
		t.Setenv(k, t.TempDir())
	}
	t.Setenv("TASKIE_DATABASE_URL", "")
	task := func(n string) string { return "# Task " + n + "\n\nEdit `internal/x" + n + "/x.go`.\n" }
	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md": "# Plan\n",
		".taskie/plans/p/tasks.md": "| Id | Status | Title | Depends on |\n|----|--------|-------|------------|\n" +
			"| 1 | done | one | |\n| 2 | done | two | 1 |\n| 3 | pending | three | 2 |\n| 4 | pending | four | 3 |\n",
		".taskie/plans/p/task-1.md": task("1"),
		".taskie/plans/p/task-2.md": task("2"),
		".taskie/plans/p/task-3.md": task("3"),
		".taskie/plans/p/task-4.md": task("4"),
	})
	t.Chdir(dir)
	pd := filepath.Join(dir, ".taskie", "plans", "p")
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		args []string
		read []string // the task files the command must read; no other
	}{
		{[]string{"ready"}, []string{"task-3.md"}},
		{[]string{"groups"}, []string{"task-3.md", "task-4.md"}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			for i := 1; i <= 4; i++ {
				p := filepath.Join(pd, "task-"+string(rune('0'+i))+".md")
				if err := os.Chtimes(p, old, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			var out strings.Builder
			if code := Run(tc.args, Streams{In: strings.NewReader(""), Out: &out, Err: io.Discard}); code != 0 {
				t.Fatalf("taskie %s: exit %d", strings.Join(tc.args, " "), code)
			}
			if !strings.Contains(out.String(), "internal/x3") {
				t.Fatalf("taskie %s printed %q: want task 3 with its file internal/x3", strings.Join(tc.args, " "), out.String())
			}
			var read []string
			for i := 1; i <= 4; i++ {
				name := "task-" + string(rune('0'+i)) + ".md"
				var st syscall.Stat_t
				if err := syscall.Stat(filepath.Join(pd, name), &st); err != nil {
					t.Fatal(err)
				}
				if time.Unix(st.Atim.Unix()).After(old) {
					read = append(read, name)
				}
			}
			if !slices.Contains(read, tc.read[0]) {
				t.Skipf("%s was read but its access time did not change: this filesystem does not record reads", tc.read[0])
			}
			if !slices.Equal(read, tc.read) {
				t.Errorf("taskie %s read %v, want only %v", strings.Join(tc.args, " "), read, tc.read)
			}
		})
	}
}
