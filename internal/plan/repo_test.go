package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"a", true}, {"my-plan", true}, {"Plan_2", true}, {"0", true}, {"A-b_C-9", true},
		{"../x", false}, {"a b", false}, {"", false}, {"a/b", false}, {".", false},
		{"..", false}, {"a\n", false}, {"plan.md", false}, {`a\b`, false}, {"é", false},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			err := ValidID(tc.id)
			if tc.ok {
				if err != nil {
					t.Errorf("ValidID(%q) = %v", tc.id, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidID(%q) accepted a bad id", tc.id)
			}
			// The message names the id (quoted, as %q prints it) and the pattern.
			for _, part := range []string{strconv.Quote(tc.id), IDPattern} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
		})
	}
}

// mkdirs creates every path below root.
func mkdirs(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// realDir resolves t.TempDir's symlinks (macOS /var → /private/var) so
// paths compare equal.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFind(t *testing.T) {
	root := realDir(t)
	mkdirs(t, root, "proj/.taskie/plans", "proj/src/deep/er", "other/.taskie")
	tests := []struct {
		name, cwd, want string
		err             error
	}{
		{"at root", "proj", filepath.Join(root, "proj"), nil},
		{"walks up", "proj/src/deep/er", filepath.Join(root, "proj"), nil},
		{"inside .taskie", "proj/.taskie/plans", filepath.Join(root, "proj"), nil},
		{".taskie without plans does not count", "other", "", ErrNoTaskie},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Find(filepath.Join(root, tc.cwd))
			if !errors.Is(err, tc.err) {
				t.Fatalf("Find error = %v, want %v", err, tc.err)
			}
			if err == nil && r.Root != tc.want {
				t.Errorf("Root = %q, want %q", r.Root, tc.want)
			}
		})
	}
	// .taskie/plans as a file is not a repo.
	mkdirs(t, root, "filecase/.taskie")
	if err := os.WriteFile(filepath.Join(root, "filecase/.taskie/plans"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(filepath.Join(root, "filecase")); !errors.Is(err, ErrNoTaskie) {
		t.Errorf("plans as a file: err = %v", err)
	}
	r := &Repo{Root: root}
	if r.TaskieDir() != filepath.Join(root, ".taskie") || r.PlansDir() != filepath.Join(root, ".taskie", "plans") {
		t.Errorf("dirs = %q, %q", r.TaskieDir(), r.PlansDir())
	}
}

func TestPlanDir(t *testing.T) {
	base := realDir(t)
	root := filepath.Join(base, "repo")
	mkdirs(t, root, ".taskie/plans/real", "elsewhere/p")
	mkdirs(t, base, "outside/p")
	plans := filepath.Join(root, ".taskie/plans")
	for name, target := range map[string]string{
		"inside":   filepath.Join(root, "elsewhere/p"),
		"relative": "../../elsewhere/p",
		"outside":  filepath.Join(base, "outside/p"),
		"escape":   "../../../outside/p",
		"dangling": filepath.Join(base, "missing"),
	} {
		if err := os.Symlink(target, filepath.Join(plans, name)); err != nil {
			t.Fatal(err)
		}
	}
	r := &Repo{Root: root}
	tests := []struct {
		id      string
		wantErr []string // substrings of the error; nil = success
	}{
		{"real", nil},
		{"absent", nil},
		{"inside", nil},
		{"relative", nil},
		{"outside", []string{filepath.Join(plans, "outside"), filepath.Join(base, "outside/p"), "outside the repository"}},
		{"escape", []string{filepath.Join(plans, "escape"), filepath.Join(base, "outside/p"), "outside the repository"}},
		{"dangling", []string{filepath.Join(plans, "dangling"), filepath.Join(base, "missing")}},
		{"../x", []string{`"../x"`, IDPattern}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			got, err := r.PlanDir(tc.id)
			if tc.wantErr == nil {
				if err != nil || got != filepath.Join(plans, tc.id) {
					t.Errorf("PlanDir = %q, %v", got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("PlanDir(%q) = %q, want an error", tc.id, got)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestPlansAndMostRecent(t *testing.T) {
	root := realDir(t)
	plans := filepath.Join(root, ".taskie/plans")
	mkdirs(t, plans, "b", "a", "c", "bad name", "target")
	mkdirs(t, root, "linked")
	if err := os.WriteFile(filepath.Join(plans, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "linked"), filepath.Join(plans, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(plans, "file"), filepath.Join(plans, "filelink")); err != nil {
		t.Fatal(err)
	}
	r := &Repo{Root: root}
	ids, err := r.Plans()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b", "c", "link", "target"}, ids); d != "" {
		t.Errorf("Plans (-want +got):\n%s", d)
	}

	old := time.Now().Add(-time.Hour)
	for _, id := range ids {
		if err := os.Chtimes(filepath.Join(plans, id), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// b's tasks.md was edited in place last: the dir mtime alone would
	// not show it.
	tasks := filepath.Join(plans, "b", "tasks.md")
	if err := os.WriteFile(tasks, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(plans, "b"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tasks, old.Add(30*time.Minute), old.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err := r.MostRecent(); err != nil || got != "b" {
		t.Errorf("MostRecent = %q, %v; want b", got, err)
	}

	empty := realDir(t)
	mkdirs(t, empty, ".taskie/plans")
	if got, err := (&Repo{Root: empty}).MostRecent(); err != nil || got != "" {
		t.Errorf("MostRecent with no plans = %q, %v", got, err)
	}
}
