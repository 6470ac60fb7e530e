package fsafe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadFile bounds every file by its kind: a file over its kind's limit is
// refused with an error naming the file, the limit and what to do, and one
// at the limit is read.
func TestReadFileLimitPerKind(t *testing.T) {
	tests := []struct {
		rel   string
		limit int64
		want  string
	}{
		{".taskie/plans/p/state.json", LimitState, "more than 1 MiB, the limit for state.json; rebuild it from the plan's log"},
		{".taskie/plans/p/tasks.md", LimitTasks, "more than 16 MiB, the limit for tasks.md; split the plan"},
		{".taskie/plans/p/task-12.md", LimitTaskFile, "more than 4 MiB, the limit for a task file; trim it"},
		{".taskie/sessions/s1.json", LimitSession, "more than 1 MiB, the limit for a session file; remove it"},
		{".taskie/plans/p/plan.md", LimitDefault, "more than 16 MiB, the limit for a file taskie reads"},
		{".taskie/archive/p/task-1.md", LimitDefault, "more than 16 MiB, the limit for a file taskie reads"},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			dir := t.TempDir()
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := LimitFor(tc.rel); got != tc.limit {
				t.Fatalf("LimitFor = %d, want %d", got, tc.limit)
			}
			p := filepath.Join(dir, filepath.FromSlash(tc.rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			// A sparse file: no disk, and a read past the limit would show.
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, tc.limit); err != nil {
				t.Fatal(err)
			}
			if data, err := r.ReadFile(tc.rel); err != nil || int64(len(data)) != tc.limit {
				t.Fatalf("at the limit: %d bytes, %v", len(data), err)
			}
			if err := os.Truncate(p, tc.limit+1); err != nil {
				t.Fatal(err)
			}
			_, err = r.ReadFile(tc.rel)
			if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("over the limit: %v, want ErrTooLarge naming %s and %q", err, p, tc.want)
			}
			d, err := r.OpenDir(filepath.ToSlash(filepath.Dir(tc.rel)))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, err := d.ReadFile(filepath.Base(tc.rel)); !errors.Is(err, ErrTooLarge) {
				t.Errorf("Dir.ReadFile over the limit: %v, want ErrTooLarge", err)
			}
		})
	}
}
