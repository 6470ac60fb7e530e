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

// A Dir reads what the Root would read: names in the directory, links to
// elsewhere in the repository (judged again from the root), and nothing
// outside it.
func TestDirReadsLikeRoot(t *testing.T) {
	r, root := newRoot(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret\n")
	plan := filepath.Join(root, ".taskie", "plans", "p")
	writeFile(t, filepath.Join(plan, "state.json"), "{}\n")
	writeFile(t, filepath.Join(root, "docs", "tasks.md"), "tasks\n")
	symlink(t, "../../../docs/tasks.md", filepath.Join(plan, "tasks.md"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(plan, "abs.md"))
	rel, _ := filepath.Rel(plan, filepath.Join(outside, "secret.txt"))
	symlink(t, rel, filepath.Join(plan, "out.md"))

	d, err := r.OpenDir(".taskie/plans/p")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{name: "state.json", want: "{}\n"},
		{name: "tasks.md", want: "tasks\n"},
		{name: "abs.md", err: ErrOutsideRepo},
		{name: "out.md", err: ErrOutsideRepo},
		{name: "../../../../x", err: ErrOutsideRepo},
		{name: "missing.md", err: fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.ReadFile(tc.name)
			tail, _, terr := d.ReadTail(tc.name, 3)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !errors.Is(terr, tc.err) {
					t.Fatalf("ReadFile err = %v, ReadTail err = %v, want %v", err, terr, tc.err)
				}
				return
			}
			if err != nil || terr != nil {
				t.Fatal(err, terr)
			}
			if string(got) != tc.want || string(tail) != tc.want[len(tc.want)-3:] {
				t.Errorf("ReadFile = %q, ReadTail = %q, want %q", got, tail, tc.want)
			}
		})
	}
	ents, err := d.ReadDir()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"abs.md", "out.md", "state.json", "tasks.md"}, names); diff != "" {
		t.Errorf("ReadDir (-want +got):\n%s", diff)
	}
}

func TestOpenDirRefuses(t *testing.T) {
	r, root := newRoot(t)
	outside := t.TempDir()
	symlink(t, outside, filepath.Join(root, "out"))
	writeFile(t, filepath.Join(root, "file"), "x\n")
	for _, tc := range []struct {
		rel string
		err error
	}{
		{"out", ErrOutsideRepo},
		{"file", ErrNotDir},
		{"missing", fs.ErrNotExist},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			d, err := r.OpenDir(tc.rel)
			if err == nil {
				d.Close()
			}
			wantErr(t, err, tc.err, r.Path(tc.rel))
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("outside directory touched: %v", err)
	}
}

// Sub opens a directory in a Dir as Root.OpenDir would: a plain one
// directly, a link judged from the root (inside kept, outside refused).
func TestSubLikeOpenDir(t *testing.T) {
	r, root := newRoot(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "state.json"), "secret\n")
	plans := filepath.Join(root, ".taskie", "plans")
	writeFile(t, filepath.Join(plans, "p", "state.json"), "p\n")
	writeFile(t, filepath.Join(root, "elsewhere", "state.json"), "in\n")
	symlink(t, "../../elsewhere", filepath.Join(plans, "in"))
	symlink(t, outside, filepath.Join(plans, "out"))
	writeFile(t, filepath.Join(plans, "file"), "x\n")
	d, err := r.OpenDir(".taskie/plans")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{name: "p", want: "p\n"},
		{name: "in", want: "in\n"},
		{name: "out", err: ErrOutsideRepo},
		{name: "file", err: ErrNotDir},
		{name: "missing", err: fs.ErrNotExist},
		{name: "../../..", err: ErrOutsideRepo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := d.Sub(tc.name)
			if tc.err != nil {
				if err == nil {
					sub.Close()
				}
				if !errors.Is(err, tc.err) {
					t.Fatalf("Sub err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			got, err := sub.ReadFile("state.json")
			if err != nil || string(got) != tc.want {
				t.Errorf("ReadFile = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A Dir appends where the Root would: a plain or missing name directly,
// a link inside the repository judged from the root, and nothing outside
// it or that is not a regular file.
func TestDirAppendsLikeRoot(t *testing.T) {
	r, root := newRoot(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.log"), "secret\n")
	logs := filepath.Join(root, ".taskie", "logs")
	writeFile(t, filepath.Join(logs, "p.log"), "a\n")
	writeFile(t, filepath.Join(root, "docs", "kept.log"), "k\n")
	symlink(t, "../../docs/kept.log", filepath.Join(logs, "in.log"))
	symlink(t, filepath.Join(outside, "secret.log"), filepath.Join(logs, "out.log"))
	if err := os.Mkdir(filepath.Join(logs, "dir.log"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := r.OpenDir(".taskie/logs")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, tc := range []struct {
		name, file, want string
		err              error
	}{
		{name: "p.log", file: filepath.Join(logs, "p.log"), want: "a\nx\n"},
		{name: "new.log", file: filepath.Join(logs, "new.log"), want: "x\n"},
		{name: "in.log", file: filepath.Join(root, "docs", "kept.log"), want: "k\nx\n"},
		{name: "out.log", err: ErrOutsideRepo},
		{name: "../../../x.log", err: ErrOutsideRepo},
		{name: "dir.log", err: ErrNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := d.OpenAppend(tc.name)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				f.Close()
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("x\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			got, _ := os.ReadFile(tc.file)
			if string(got) != tc.want {
				t.Errorf("%s holds %q, want %q", tc.file, got, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.log")); string(b) != "secret\n" {
		t.Errorf("the file outside the repository was written: %q", b)
	}
}

// TestDirReadsWithinLimit: a file read through a Dir has the content on
// disk, an empty one none, and one over its limit is ErrTooLarge, as the
// root reads them.
func TestDirReadsWithinLimit(t *testing.T) {
	r, root := newRoot(t)
	plan := filepath.Join(root, ".taskie", "plans", "p")
	limit := LimitFor(".taskie/plans/p/task-1.md")
	writeFile(t, filepath.Join(plan, "task-1.md"), strings.Repeat("x", int(limit)+1))
	writeFile(t, filepath.Join(plan, "task-2.md"), "")
	writeFile(t, filepath.Join(plan, "task-3.md"), strings.Repeat("y", int(limit)))
	d, err := r.OpenDir(".taskie/plans/p")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, read := range []struct {
		name string
		fn   func(string) ([]byte, error)
	}{{"ReadFile", d.ReadFile}, {"ReadRegular", d.ReadRegular}} {
		if _, err := read.fn("task-1.md"); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s over the limit: %v, want ErrTooLarge", read.name, err)
		}
		if got, err := read.fn("task-2.md"); err != nil || len(got) != 0 {
			t.Errorf("%s of an empty file = %q, %v", read.name, got, err)
		}
		if got, err := read.fn("task-3.md"); err != nil || int64(len(got)) != limit {
			t.Errorf("%s at the limit: %d bytes, %v; want %d", read.name, len(got), err, limit)
		}
	}
}
