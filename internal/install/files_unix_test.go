//go:build unix

package install

import (
	"io/fs"
	"syscall"
	"testing"
)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

// umask returns the process's umask.
func umask(t *testing.T) fs.FileMode {
	t.Helper()
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// Under umask 077, a file install creates for the user is private.
func TestUserFilesUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	tg := codexTarget(t)
	if _, err := Claude(tg, assets); err != nil {
		t.Fatal(err)
	}
	settings, _ := tg.ClaudeSettings()
	for _, f := range []string{settings} {
		fi, err := statPerm(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi != 0o600 {
			t.Errorf("%s: mode %v, want 0600 under umask 077", f, fi)
		}
	}
}
