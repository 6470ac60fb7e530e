package fsafe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repoWithLinkOut is a repository whose "out" links to a directory outside
// it, which holds a file "plan"; it returns the root and the outside dir.
func repoWithLinkOut(t *testing.T) (*Root, string, string) {
	t.Helper()
	r, dir := newRoot(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "plan"), "outside\n")
	symlink(t, outside, filepath.Join(dir, "out"))
	return r, dir, outside
}

func TestMkdir(t *testing.T) {
	r, dir, outside := repoWithLinkOut(t)
	if err := os.Mkdir(filepath.Join(dir, "have"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  string
		want error
	}{
		{"new", nil},
		{"have", fs.ErrExist},
		{"missing/new", fs.ErrNotExist},
		{"out/new", ErrOutsideRepo},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			err := r.Mkdir(tc.rel, 0o755)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Mkdir(%s) = %v, want %v", tc.rel, err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a directory was made outside the repository: %v", err)
	}
}

func TestRemoveAllKeepsLinkTargets(t *testing.T) {
	r, dir, outside := repoWithLinkOut(t)
	writeFile(t, filepath.Join(dir, "half", "plan.md"), "# Plan\n")
	symlink(t, outside, filepath.Join(dir, "half", "link"))
	if err := r.RemoveAll("half"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "half")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("half still there: %v", err)
	}
	if diff := cmp.Diff([]string{"plan"}, names(t, outside)); diff != "" {
		t.Errorf("outside changed (-want +got):\n%s", diff)
	}
	if err := r.RemoveAll("out/plan"); !errors.Is(err, ErrOutsideRepo) {
		t.Errorf("RemoveAll(out/plan) = %v, want ErrOutsideRepo", err)
	}
	if err := r.RemoveAll("gone"); err != nil {
		t.Errorf("RemoveAll(gone) = %v, want nil", err)
	}
}

func TestReplaceFile(t *testing.T) {
	r, dir, outside := repoWithLinkOut(t)
	writeFile(t, filepath.Join(dir, "inside.md"), "inside\n")
	symlink(t, filepath.Join(outside, "plan"), filepath.Join(dir, "abs"))
	symlink(t, "inside.md", filepath.Join(dir, "rel"))
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  string
		want error
	}{
		{"new", nil},
		{"abs", nil}, // the link is replaced, not its target
		{"rel", nil},
		{"adir", ErrNotRegular},
		{"out/plan", ErrOutsideRepo},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			err := r.ReplaceFile(tc.rel, []byte("p\n"))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("ReplaceFile(%s) = %v, want %v", tc.rel, err, tc.want)
			}
			if err != nil {
				return
			}
			fi, err := os.Lstat(filepath.Join(dir, tc.rel))
			if err != nil || !fi.Mode().IsRegular() || readFile(t, filepath.Join(dir, tc.rel)) != "p\n" {
				t.Errorf("%s: not a regular file holding p: %v %v", tc.rel, fi, err)
			}
		})
	}
	if got := readFile(t, filepath.Join(outside, "plan")); got != "outside\n" {
		t.Errorf("outside file = %q, want it untouched", got)
	}
	if got := readFile(t, filepath.Join(dir, "inside.md")); got != "inside\n" {
		t.Errorf("inside.md = %q, want it untouched", got)
	}
	if diff := cmp.Diff([]string{"abs", "adir", "inside.md", "new", "out", "rel"}, names(t, dir)); diff != "" {
		t.Errorf("temp files left (-want +got):\n%s", diff)
	}
}

func TestOutsideNamesTheLink(t *testing.T) {
	r, dir, _ := repoWithLinkOut(t)
	symlink(t, "/dev/zero", filepath.Join(dir, "local", "plan"))
	for _, tc := range []struct{ rel, want string }{
		{"out", filepath.Join(dir, "out") + ": points outside the repository: it is a symbolic link to "},
		{"out/plan", filepath.Join(dir, "out", "plan") + ": points outside the repository: " + filepath.Join(dir, "out") + " is a symbolic link to "},
		{"local/plan", "it is a symbolic link to /dev/zero;"},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			_, err := r.ReadFile(tc.rel)
			if !errors.Is(err, ErrOutsideRepo) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadFile(%s) = %v, want ErrOutsideRepo saying %q", tc.rel, err, tc.want)
			}
		})
	}
}
