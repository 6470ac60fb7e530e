package fsafe

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"
)

func mustLock(t *testing.T, r *Root, rel string) *Lock {
	t.Helper()
	l, err := r.Lock(rel, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func tryLockOK(t *testing.T, r *Root, rel string) bool {
	t.Helper()
	l, ok, err := r.TryLock(rel)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		if err := l.Unlock(); err != nil {
			t.Fatal(err)
		}
	}
	return ok
}

func TestTryLock(t *testing.T) {
	r, _ := newRoot(t)
	l := mustLock(t, r, ".lock")
	if tryLockOK(t, r, ".lock") {
		t.Fatal("TryLock succeeded while the lock was held")
	}
	if !r.Probe(".lock") {
		t.Error("Probe = false while the lock was held")
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second Unlock = %v, want nil", err)
	}
	if l.File() != nil {
		t.Error("File() is not nil after Unlock")
	}
	if r.Probe(".lock") {
		t.Error("Probe = true after Unlock")
	}
	if !tryLockOK(t, r, ".lock") {
		t.Error("TryLock failed after Unlock")
	}
}

func TestLockTimeout(t *testing.T) {
	r, _ := newRoot(t)
	l := mustLock(t, r, ".lock")
	defer l.Unlock()
	start := time.Now()
	_, err := r.Lock(".lock", 100*time.Millisecond)
	wantErr(t, err, ErrLockTimeout, r.Path(".lock"))
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("Lock gave up after %s, before its timeout", waited)
	}
}

func TestLockWaits(t *testing.T) {
	r, _ := newRoot(t)
	l := mustLock(t, r, ".lock")
	go func() {
		time.Sleep(50 * time.Millisecond)
		l.Unlock()
	}()
	l2, err := r.Lock(".lock", 5*time.Second)
	if err != nil {
		t.Fatalf("Lock did not get the released lock: %v", err)
	}
	l2.Unlock()
}

func TestProbeNeverCreates(t *testing.T) {
	r, _ := newRoot(t)
	if r.Probe(".review.lock") {
		t.Error("Probe of a missing file = true")
	}
	if _, err := r.Lstat(".review.lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Probe created the file (Lstat: %v)", err)
	}
	// Two probes at once do not see each other, and do not block a lock.
	l := mustLock(t, r, ".review.lock")
	l.Unlock()
	f, err := r.openLockFile(".review.lock", false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := lockFile(f, false); !ok || err != nil {
		t.Fatalf("shared lock = %v, %v", ok, err)
	}
	if r.Probe(".review.lock") {
		t.Error("Probe = true while only another probe held a shared lock")
	}
}

func TestReleaseWithoutChild(t *testing.T) {
	r, _ := newRoot(t)
	l := mustLock(t, r, ".lock")
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("Unlock after Release = %v, want nil", err)
	}
	if !tryLockOK(t, r, ".lock") {
		t.Error("lock still held after Release with no child")
	}
}

func TestLockPath(t *testing.T) {
	r, _ := newRoot(t)
	if err := r.MkdirAll(".taskie", 0o755); err != nil {
		t.Fatal(err)
	}
	l := mustLock(t, r, ".taskie/.lock")
	defer l.Unlock()
	if got, want := l.Path(), r.Path(".taskie/.lock"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
	if _, err := os.Stat(l.Path()); err != nil {
		t.Error(err)
	}
}
