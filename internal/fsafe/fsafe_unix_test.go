//go:build unix

package fsafe

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// within runs fn and fails the test if it has not returned after d, so a
// call that hangs on a FIFO fails instead of hanging the suite.
func within(t *testing.T, d time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("call still running after %s", d)
		return nil
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFIFORefused(t *testing.T) {
	ops := append([]op{
		{"ReadDir", func(r *Root, rel string) error { _, err := r.ReadDir(rel); return err }},
		{"OpenDir", func(r *Root, rel string) error { return closeDir(r.OpenDir(rel)) }},
		{"Dir.ReadFile", func(r *Root, rel string) error {
			return inDir(r, rel, func(d *Dir, name string) error { _, err := d.ReadFile(name); return err })
		}},
		{"Dir.ReadTail", func(r *Root, rel string) error {
			return inDir(r, rel, func(d *Dir, name string) error { _, _, err := d.ReadTail(name, 10); return err })
		}},
	}, fileOps...)
	// Without the Stat before the open, the non-blocking open and the
	// fstat after it must still refuse at once.
	for _, pre := range []bool{true, false} {
		for _, o := range ops {
			name := o.name
			if !pre {
				name += "/no precheck"
			}
			t.Run(name, func(t *testing.T) {
				skipPrecheck = !pre
				defer func() { skipPrecheck = false }()
				r, root := newRoot(t)
				rel := ".taskie/plans/p/state.json"
				mkfifo(t, filepath.Join(root, rel))

				err := within(t, time.Second, func() error { return o.call(r, rel) })
				target := ErrNotRegular
				if o.name == "ReadDir" || o.name == "OpenDir" {
					target = ErrNotDir
				}
				wantErr(t, err, target, r.Path(rel))
				if !strings.Contains(err.Error(), "a FIFO") {
					t.Errorf("error %q does not say it is a FIFO", err)
				}
				if diff := cmp.Diff([]string{"state.json"}, names(t, filepath.Dir(filepath.Join(root, rel)))); diff != "" {
					t.Errorf("directory changed (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestFIFOProbe(t *testing.T) {
	r, root := newRoot(t)
	mkfifo(t, filepath.Join(root, ".lock"))
	var held bool
	within(t, time.Second, func() error { held = r.Probe(".lock"); return nil })
	if held {
		t.Error("Probe(FIFO) = true, want false")
	}
}

func TestWriteFileKeepsMode(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	tests := []struct {
		name     string
		existing os.FileMode // 0: no file yet
		want     os.FileMode
	}{
		{"private file stays private", 0o600, 0o600},
		{"executable stays executable", 0o755, 0o755},
		{"read-only stays read-only", 0o444, 0o444},
		{"new file: 0644 less the umask", 0, 0o600},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, root := newRoot(t)
			path := filepath.Join(root, "state.json")
			if tc.existing != 0 {
				writeFile(t, path, "old\n")
				if err := os.Chmod(path, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.WriteFile("state.json", []byte("new\n"), true); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tc.want {
				t.Errorf("mode = %v, want %v", got, tc.want)
			}
			if got := readFile(t, path); got != "new\n" {
				t.Errorf("content = %q", got)
			}
		})
	}
}

func TestOpenedFilesAreBlocking(t *testing.T) {
	r, _ := newRoot(t)
	f, err := r.OpenAppend("log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flags int
	err = control(f, func(fd uintptr) error {
		var err error
		flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if flags&syscall.O_NONBLOCK != 0 {
		t.Error("OpenAppend returned a descriptor still in non-blocking mode")
	}
}

func closeDir(d *Dir, err error) error {
	if err == nil {
		d.Close()
	}
	return err
}

// inDir runs fn on the base name of rel in its directory, opened as a Dir.
func inDir(r *Root, rel string, fn func(d *Dir, name string) error) error {
	d, err := r.OpenDir(path.Dir(rel))
	if err != nil {
		return err
	}
	defer d.Close()
	return fn(d, path.Base(rel))
}
