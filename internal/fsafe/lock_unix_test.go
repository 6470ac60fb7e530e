//go:build unix

package fsafe

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// startHolder starts the test binary as a child that inherits l's file and
// lives until the returned stop is called.
func startHolder(t *testing.T, l *Lock) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"=1")
	cmd.ExtraFiles = []*os.File{l.File()}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("holder: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// A lock handed to a child with Release stays held until the child exits.
func TestLockHandOff(t *testing.T) {
	r, _ := newRoot(t)
	l := mustLock(t, r, ".review.lock")
	stop := startHolder(t, l)
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if tryLockOK(t, r, ".review.lock") {
		t.Fatal("TryLock succeeded while the child held the lock")
	}
	if !r.Probe(".review.lock") {
		t.Error("Probe = false while the child held the lock")
	}
	stop()
	if !tryLockOK(t, r, ".review.lock") {
		t.Error("TryLock failed after the child exited")
	}
}

// Unlock, unlike Release, frees the lock for the child too: flock belongs to
// the open file description they share.
func TestUnlockFreesHandedOffLock(t *testing.T) {
	r, _ := newRoot(t)
	l := mustLock(t, r, ".review.lock")
	startHolder(t, l)
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if !tryLockOK(t, r, ".review.lock") {
		t.Error("TryLock failed after Unlock, though the child shares the description")
	}
}

func TestLockFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	r, root := newRoot(t)
	l := mustLock(t, r, ".lock")
	defer l.Unlock()
	fi, err := os.Stat(filepath.Join(root, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o644 {
		t.Errorf("lock file mode = %v, want a regular 0644 file", fi.Mode())
	}
}
