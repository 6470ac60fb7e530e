package state

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// countSyncs counts file and directory fsyncs for the rest of the test.
func countSyncs(t *testing.T) (files, dirs *int) {
	t.Helper()
	files, dirs = new(int), new(int)
	oldFile, oldDir := syncFile, syncDirectory
	syncFile = func(f *os.File) error { *files++; return oldFile(f) }
	syncDirectory = func(d string) error { *dirs++; return oldDir(d) }
	t.Cleanup(func() { syncFile, syncDirectory = oldFile, oldDir })
	return files, dirs
}

func TestWriteFileQuick(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	files, dirs := countSyncs(t)
	for i, content := range []string{"first\n", "second, longer\n", ""} {
		if err := WriteFileQuick(p, []byte(content)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		data, err := os.ReadFile(p)
		if err != nil || string(data) != content {
			t.Errorf("write %d: read %q, %v; want %q", i, data, err, content)
		}
		assertOnly(t, dir, "s.json")
	}
	if *files != 0 || *dirs != 0 {
		t.Errorf("WriteFileQuick fsynced %d files and %d directories, want none", *files, *dirs)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
		}
	}
}

func TestWriteFileQuickFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "s.json")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileQuick(target, []byte("{}")); err == nil {
		t.Fatal("WriteFileQuick onto a directory succeeded")
	}
	assertOnly(t, dir, "s.json")
}

func TestWriteFileAtomicSyncs(t *testing.T) {
	dir := t.TempDir()
	files, dirs := countSyncs(t)
	if err := WriteFileAtomic(filepath.Join(dir, "f"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if *files != 1 || *dirs != 1 {
		t.Errorf("WriteFileAtomic fsynced %d files and %d directories, want 1 and 1", *files, *dirs)
	}
}

var errBusy = errors.New("busy")

func TestRetryRename(t *testing.T) {
	errGone := errors.New("gone")
	transient := func(err error) bool { return errors.Is(err, errBusy) }
	tests := []struct {
		name      string
		results   []error // what successive renames return; then nil
		always    error   // when set, every rename returns it
		wantErr   error
		wantCalls int
	}{
		{name: "first try", wantCalls: 1},
		{name: "busy twice then free", results: []error{errBusy, errBusy}, wantCalls: 3},
		{name: "other error is not retried", results: []error{errGone}, wantErr: errGone, wantCalls: 1},
		{name: "busy then other error", results: []error{errBusy, errGone}, wantErr: errGone, wantCalls: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			rename := func(oldpath, newpath string) error {
				if oldpath != "a" || newpath != "b" {
					t.Errorf("rename(%q, %q)", oldpath, newpath)
				}
				calls++
				if calls <= len(tc.results) {
					return tc.results[calls-1]
				}
				return nil
			}
			err := retryRename("a", "b", rename, transient, time.Second)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if calls != tc.wantCalls {
				t.Errorf("%d renames, want %d", calls, tc.wantCalls)
			}
		})
	}
}

func TestRetryRenameGivesUp(t *testing.T) {
	calls := 0
	start := time.Now()
	err := retryRename("a", "b", func(string, string) error { calls++; return errBusy },
		func(error) bool { return true }, 100*time.Millisecond)
	took := time.Since(start)
	if !errors.Is(err, errBusy) {
		t.Errorf("err = %v, want the last rename error", err)
	}
	if took < 100*time.Millisecond || took > 2*time.Second {
		t.Errorf("gave up after %v, want about 100ms", took)
	}
	if calls < 3 {
		t.Errorf("%d renames in %v, want several", calls, took)
	}
}
