package fsafe

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// holdEnv makes the test binary a child that holds its inherited lock until
// its stdin closes.
const holdEnv = "FSAFE_TEST_HOLD"

func TestMain(m *testing.M) {
	if os.Getenv(holdEnv) == "1" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// op is one fsafe call on rel, reduced to its error.
type op struct {
	name string
	call func(r *Root, rel string) error
}

// fileOps are the calls that must refuse anything but a regular file.
var fileOps = []op{
	{"ReadFile", func(r *Root, rel string) error { _, err := r.ReadFile(rel); return err }},
	{"ReadFileLimit", func(r *Root, rel string) error { _, err := r.ReadFileLimit(rel, 1<<20); return err }},
	{"WriteFile", func(r *Root, rel string) error { return r.WriteFile(rel, []byte("new\n"), true) }},
	{"AppendFile", func(r *Root, rel string) error { return r.AppendFile(rel, []byte("new\n"), 0o644, true) }},
	{"OpenAppend", func(r *Root, rel string) error { return closeFile(r.OpenAppend(rel)) }},
	{"CreateExclusive", func(r *Root, rel string) error { return closeFile(r.CreateExclusive(rel, 0o644)) }},
	{"Lock", func(r *Root, rel string) error { return unlock(r.Lock(rel, 0)) }},
	{"TryLock", func(r *Root, rel string) error {
		l, _, err := r.TryLock(rel)
		return unlock(l, err)
	}},
}

func closeFile(f *os.File, err error) error {
	if err == nil {
		f.Close()
	}
	return err
}

func unlock(l *Lock, err error) error {
	if l != nil {
		l.Unlock()
	}
	return err
}

// newRoot opens a fresh temporary repository.
func newRoot(t *testing.T) (*Root, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
}

// names lists the directory dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	return got
}

// wantErr fails unless err wraps target and names path.
func wantErr(t *testing.T, err, target error, path string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one wrapping %q", err, target)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

func TestOutsideSymlinkRefused(t *testing.T) {
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	layouts := []struct {
		name string
		// link makes rel lead to outside/secret.txt.
		link func(t *testing.T, root, outside string) (rel string)
	}{
		{"absolute file link", func(t *testing.T, root, outside string) string {
			symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, ".taskie", "state.json"))
			return ".taskie/state.json"
		}},
		{"relative file link", func(t *testing.T, root, outside string) string {
			target, err := filepath.Rel(filepath.Join(root, ".taskie"), filepath.Join(outside, "secret.txt"))
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, target, filepath.Join(root, ".taskie", "state.json"))
			return ".taskie/state.json"
		}},
		{"directory link", func(t *testing.T, root, outside string) string {
			symlink(t, outside, filepath.Join(root, ".taskie"))
			return ".taskie/secret.txt"
		}},
	}
	for _, layout := range layouts {
		for _, o := range fileOps {
			t.Run(layout.name+"/"+o.name, func(t *testing.T) {
				r, root := newRoot(t)
				outside := t.TempDir()
				secret := filepath.Join(outside, "secret.txt")
				writeFile(t, secret, "secret\n")
				if err := os.Chtimes(secret, old, old); err != nil {
					t.Fatal(err)
				}
				rel := layout.link(t, root, outside)

				wantErr(t, o.call(r, rel), ErrOutsideRepo, r.Path(rel))

				if got := readFile(t, secret); got != "secret\n" {
					t.Errorf("outside file now %q", got)
				}
				fi, err := os.Stat(secret)
				if err != nil {
					t.Fatal(err)
				}
				if !fi.ModTime().Equal(old) {
					t.Errorf("outside file mtime changed to %v", fi.ModTime())
				}
				if diff := cmp.Diff([]string{"secret.txt"}, names(t, outside)); diff != "" {
					t.Errorf("outside directory changed (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestOutsidePathRefused(t *testing.T) {
	r, root := newRoot(t)
	outside := t.TempDir()
	symlink(t, outside, filepath.Join(root, "out"))
	tests := []struct {
		name string
		call func() error
		path string
	}{
		{"Stat", func() error { _, err := r.Stat("out/x"); return err }, "out/x"},
		{"Lstat", func() error { _, err := r.Lstat("out/x"); return err }, "out/x"},
		{"ReadDir", func() error { _, err := r.ReadDir("out"); return err }, "out"},
		{"MkdirAll", func() error { return r.MkdirAll("out/a/b", 0o755) }, "out/a/b"},
		{"Remove", func() error { return r.Remove("out/x") }, "out/x"},
		{"Rename", func() error { return r.Rename("here", "out/x") }, "out/x"},
		{"dot-dot", func() error { _, err := r.ReadFile("../x"); return err }, "x"},
		{"CleanTemps", func() error { _, err := r.CleanTemps("out", 0); return err }, "out"},
	}
	writeFile(t, filepath.Join(root, "here"), "here\n")
	writeFile(t, filepath.Join(outside, "x"), "x\n")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, tc.call(), ErrOutsideRepo, filepath.FromSlash(tc.path))
		})
	}
	if diff := cmp.Diff([]string{"x"}, names(t, outside)); diff != "" {
		t.Errorf("outside directory changed (-want +got):\n%s", diff)
	}
}

// Symbolic links that stay inside the repository are followed: reads see
// the target, and writes change the target and keep the link.
func TestInsideSymlinkFollowed(t *testing.T) {
	r, root := newRoot(t)
	real := filepath.Join(root, "docs", "real.md")
	writeFile(t, real, "a\n")
	symlink(t, "docs/real.md", filepath.Join(root, "link.md"))
	symlink(t, "../docs/real.md", filepath.Join(root, ".taskie", "link.md"))
	symlink(t, "../link.md", filepath.Join(root, ".taskie", "chain.md"))

	got, err := r.ReadFile(".taskie/link.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "a\n" {
		t.Errorf("ReadFile = %q, want the target's content", got)
	}
	if err := r.WriteFile(".taskie/chain.md", []byte("b\n"), true); err != nil {
		t.Fatal(err)
	}
	if err := r.AppendFile("link.md", []byte("c\n"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, real); got != "b\nc\n" {
		t.Errorf("target = %q, want %q", got, "b\nc\n")
	}
	for _, link := range []string{"link.md", ".taskie/link.md", ".taskie/chain.md"} {
		fi, err := os.Lstat(filepath.Join(root, link))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symbolic link (%v)", link, err)
		}
	}
	if diff := cmp.Diff([]string{"real.md"}, names(t, filepath.Join(root, "docs"))); diff != "" {
		t.Errorf("temp file left behind (-want +got):\n%s", diff)
	}
}

// An absolute link is refused even when it names a file inside the
// repository, as os.Root does.
func TestAbsoluteInsideSymlinkRefused(t *testing.T) {
	r, root := newRoot(t)
	writeFile(t, filepath.Join(root, "real.md"), "a\n")
	symlink(t, filepath.Join(root, "real.md"), filepath.Join(root, "link.md"))
	for _, o := range fileOps {
		t.Run(o.name, func(t *testing.T) {
			wantErr(t, o.call(r, "link.md"), ErrOutsideRepo, r.Path("link.md"))
		})
	}
	if got := readFile(t, filepath.Join(root, "real.md")); got != "a\n" {
		t.Errorf("target changed to %q", got)
	}
}

func TestDirectoryRefused(t *testing.T) {
	for _, o := range fileOps {
		t.Run(o.name, func(t *testing.T) {
			r, root := newRoot(t)
			if err := os.MkdirAll(filepath.Join(root, ".taskie", "state.json"), 0o755); err != nil {
				t.Fatal(err)
			}
			rel := ".taskie/state.json"
			err := o.call(r, rel)
			wantErr(t, err, ErrNotRegular, r.Path(rel))
			if !strings.Contains(err.Error(), "a directory") {
				t.Errorf("error %q does not say it is a directory", err)
			}
			if diff := cmp.Diff([]string{"state.json"}, names(t, filepath.Join(root, ".taskie"))); diff != "" {
				t.Errorf("directory changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	r, root := newRoot(t)
	writeFile(t, filepath.Join(root, ".taskie", "hook.json"), strings.Repeat("x", 100))
	tests := []struct {
		name    string
		rel     string
		limit   int64
		want    string
		wantErr error
	}{
		{"no limit", ".taskie/hook.json", -1, strings.Repeat("x", 100), nil},
		{"at the limit", ".taskie/hook.json", 100, strings.Repeat("x", 100), nil},
		{"over the limit", ".taskie/hook.json", 99, "", ErrTooLarge},
		{"missing", ".taskie/none.json", -1, "", fs.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.readFile(tc.rel, tc.limit)
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr, r.Path(tc.rel))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteFileFailureRemovesTemp(t *testing.T) {
	r, root := newRoot(t)
	dir := filepath.Join(root, ".taskie")
	writeFile(t, filepath.Join(dir, "state.json"), "old\n")
	// A directory appears in the target's place between the checks and
	// the rename, so the rename fails.
	beforeRename = func() {
		os.Remove(filepath.Join(dir, "state.json"))
		writeFile(t, filepath.Join(dir, "state.json", "keep"), "")
	}
	defer func() { beforeRename = nil }()

	err := r.WriteFile(".taskie/state.json", []byte("new\n"), true)
	if err == nil || !strings.Contains(err.Error(), r.Path(".taskie/state.json")) {
		t.Fatalf("WriteFile = %v, want an error naming the file", err)
	}
	if diff := cmp.Diff([]string{"state.json"}, names(t, dir)); diff != "" {
		t.Errorf("temp file left behind (-want +got):\n%s", diff)
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	r, _ := newRoot(t)
	err := r.WriteFile("none/state.json", []byte("x"), false)
	wantErr(t, err, fs.ErrNotExist, r.Path("none/state.json"))
}

func TestWriteFileReplaces(t *testing.T) {
	r, root := newRoot(t)
	path := filepath.Join(root, ".taskie", "state.json")
	writeFile(t, path, "a much longer old content\n")
	for _, durable := range []bool{false, true} {
		if err := r.WriteFile(".taskie/state.json", []byte("new\n"), durable); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, path); got != "new\n" {
			t.Errorf("durable=%v: content = %q", durable, got)
		}
	}
	if diff := cmp.Diff([]string{"state.json"}, names(t, filepath.Dir(path))); diff != "" {
		t.Errorf("temp file left behind (-want +got):\n%s", diff)
	}
}

func TestAppendFile(t *testing.T) {
	r, root := newRoot(t)
	for _, line := range []string{"one\n", "two\n"} {
		if err := r.AppendFile("events.jsonl", []byte(line), 0o644, true); err != nil {
			t.Fatal(err)
		}
	}
	f, err := r.OpenAppend("events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("three\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := readFile(t, filepath.Join(root, "events.jsonl")); got != "one\ntwo\nthree\n" {
		t.Errorf("content = %q", got)
	}
}

func TestCreateExclusive(t *testing.T) {
	r, root := newRoot(t)
	f, err := r.CreateExclusive("review-1.md", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("first\n")
	f.Close()
	_, err = r.CreateExclusive("review-1.md", 0o644)
	wantErr(t, err, fs.ErrExist, r.Path("review-1.md"))
	if got := readFile(t, filepath.Join(root, "review-1.md")); got != "first\n" {
		t.Errorf("content = %q, want the first write kept", got)
	}
}

func TestCleanTemps(t *testing.T) {
	r, root := newRoot(t)
	dir := filepath.Join(root, ".taskie", "plans", "p")
	for _, name := range []string{".state.json.tmp123", ".tasks.md.tmp", "state.json", ".lock", ".notes.tmpl", ".tmp5", "a.tmp1"} {
		writeFile(t, filepath.Join(dir, name), "x")
	}
	if err := os.Mkdir(filepath.Join(dir, ".d.tmp1"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, f, err := r.createTemp(".taskie/plans/p/task-1.md", newFilePerm)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	old := time.Now().Add(-2 * time.Hour)
	for _, name := range []string{".state.json.tmp123", baseName(tmp)} {
		if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}

	removed, err := r.CleanTemps(".taskie/plans/p", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".taskie/plans/p/.state.json.tmp123", tmp}
	if diff := cmp.Diff(want, removed); diff != "" {
		t.Errorf("removed old temps (-want +got):\n%s", diff)
	}
	removed, err = r.CleanTemps(".taskie/plans/p", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{".taskie/plans/p/.tasks.md.tmp"}, removed); diff != "" {
		t.Errorf("removed all temps (-want +got):\n%s", diff)
	}
	wantLeft := []string{".d.tmp1", ".lock", ".notes.tmpl", ".tmp5", "a.tmp1", "state.json"}
	if diff := cmp.Diff(wantLeft, names(t, dir)); diff != "" {
		t.Errorf("files left (-want +got):\n%s", diff)
	}
	removed, err = r.CleanTemps(".taskie/plans/none", 0)
	if err != nil || removed != nil {
		t.Errorf("CleanTemps(missing dir) = %v, %v; want nothing", removed, err)
	}
}

func TestDirOps(t *testing.T) {
	r, root := newRoot(t)
	if err := r.MkdirAll(".taskie/plans/p", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b.md", "a.md"} {
		if err := r.WriteFile(".taskie/plans/p/"+name, []byte(name), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Rename(".taskie/plans/p/b.md", ".taskie/plans/p/c.md"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(".taskie/plans/p/a.md"); err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAll(".taskie/plans/p/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := r.ReadDir(".taskie/plans/p")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff([]string{"c.md", "sub"}, got); diff != "" {
		t.Errorf("ReadDir (-want +got):\n%s", diff)
	}
	_, err = r.ReadDir(".taskie/plans/p/c.md")
	wantErr(t, err, ErrNotDir, r.Path(".taskie/plans/p/c.md"))
	err = r.Remove(".taskie/plans/p/none")
	wantErr(t, err, fs.ErrNotExist, r.Path(".taskie/plans/p/none"))
	if got := r.Path(".taskie/plans/p/c.md"); got != filepath.Join(root, ".taskie", "plans", "p", "c.md") {
		t.Errorf("Path = %s", got)
	}
}

func TestIsTempName(t *testing.T) {
	tests := map[string]bool{
		".state.json.tmp123": true,
		".tasks.md.tmp":      true,
		".a.tmp0":            true,
		"state.json":         false,
		".lock":              false,
		".notes.tmpl":        false,
		".tmp5":              false,
		"a.tmp1":             false,
		".state.json.tmp12x": false,
	}
	for name, want := range tests {
		if got := isTempName(name); got != want {
			t.Errorf("isTempName(%q) = %v, want %v", name, got, want)
		}
	}
}
