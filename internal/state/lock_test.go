package state

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// lowerLockTimeout makes WithLock give up after d for the rest of the test.
func lowerLockTimeout(t *testing.T, d time.Duration) {
	t.Helper()
	old := LockTimeout
	LockTimeout = d
	t.Cleanup(func() { LockTimeout = old })
}

// holdLock takes an exclusive lock on name in dir through a separate file
// handle, as another process would, and releases it at the end of the test.
func holdLock(t *testing.T, dir, name string) *flock.Flock {
	t.Helper()
	l := flock.New(filepath.Join(dir, name))
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Unlock() })
	return l
}

func TestWithLockGivesUpAtTheDeadline(t *testing.T) {
	dir := t.TempDir()
	lowerLockTimeout(t, 150*time.Millisecond)
	holder := holdLock(t, dir, LockName)
	ran := false
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- WithLock(dir, func() error { ran = true; return nil }) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		_ = holder.Unlock() // let the goroutine finish
		t.Fatal("WithLock still waiting after 5s on a held lock: it has no deadline")
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("WithLock gave up after %v, before the 150ms deadline", waited)
	}
	if ran {
		t.Error("fn ran without the lock")
	}
	if !errors.Is(err, ErrLockTimeout) {
		t.Errorf("err = %v, want ErrLockTimeout", err)
	}
	lock := filepath.Join(dir, LockName)
	for _, want := range []string{lock + ": ", "another taskie command is holding it, or this filesystem does not support file locks"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
}

func TestWithLockWaitsForARelease(t *testing.T) {
	dir := t.TempDir()
	holder := holdLock(t, dir, LockName)
	time.AfterFunc(100*time.Millisecond, func() { _ = holder.Unlock() })
	ran := false
	if err := WithLock(dir, func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("WithLock = %v, ran %v; want the lock once the holder lets go", err, ran)
	}
}

func TestLockFilesAreWorldReadable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := t.TempDir()
	if err := WithLock(dir, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	release, ok, err := TryReviewLock(dir)
	if err != nil || !ok {
		t.Fatalf("TryReviewLock = %v, %v", ok, err)
	}
	release()
	for _, name := range []string{LockName, ReviewLockName} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644 so that a shared checkout's other users can lock it", name, fi.Mode().Perm())
		}
	}
}

func TestReviewLock(t *testing.T) {
	dir := t.TempDir()
	if ReviewRunning(dir) {
		t.Error("ReviewRunning before any review")
	}
	if _, err := os.Stat(filepath.Join(dir, ReviewLockName)); !os.IsNotExist(err) {
		t.Errorf("ReviewRunning created %s (err %v); a read-only probe must not write", ReviewLockName, err)
	}

	release, ok, err := TryReviewLock(dir)
	if err != nil || !ok {
		t.Fatalf("first TryReviewLock = %v, %v; want the lock", ok, err)
	}
	if !ReviewRunning(dir) {
		t.Error("ReviewRunning = false while the review lock is held")
	}
	again, ok, err := TryReviewLock(dir)
	if err != nil || ok {
		t.Errorf("second TryReviewLock = %v, %v; want refused without an error", ok, err)
	}
	again() // a refused lock's release is a harmless no-op

	// The state lock is a different file: short state updates go on while
	// a review runs.
	lowerLockTimeout(t, 200*time.Millisecond)
	if err := WithLock(dir, func() error { return nil }); err != nil {
		t.Errorf("WithLock during a review: %v", err)
	}

	release()
	release() // twice is fine
	if ReviewRunning(dir) {
		t.Error("ReviewRunning after release")
	}
	release, ok, err = TryReviewLock(dir)
	if err != nil || !ok {
		t.Fatalf("TryReviewLock after release = %v, %v", ok, err)
	}
	release()
}

// Two read-only probes at once must not see each other as a running review.
func TestReviewRunningProbesDoNotConflict(t *testing.T) {
	dir := t.TempDir()
	release, _, err := TryReviewLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	release()
	probe := flock.New(filepath.Join(dir, ReviewLockName))
	if ok, err := probe.TryRLock(); err != nil || !ok {
		t.Fatalf("shared probe lock: %v, %v", ok, err)
	}
	defer probe.Unlock()
	if ReviewRunning(dir) {
		t.Error("ReviewRunning = true while only another probe holds the file")
	}
}

// A probe that holds the file for an instant must not make the hook refuse
// to start a review.
func TestTryReviewLockOutlastsAProbe(t *testing.T) {
	dir := t.TempDir()
	release, _, err := TryReviewLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	release()
	probe := flock.New(filepath.Join(dir, ReviewLockName))
	if ok, err := probe.TryRLock(); err != nil || !ok {
		t.Fatalf("shared probe lock: %v, %v", ok, err)
	}
	time.AfterFunc(20*time.Millisecond, func() { _ = probe.Unlock() })
	release, ok, err := TryReviewLock(dir)
	if err != nil || !ok {
		t.Fatalf("TryReviewLock during a brief probe = %v, %v; want the lock", ok, err)
	}
	release()
}

func TestTryReviewLockMissingDir(t *testing.T) {
	release, ok, err := TryReviewLock(filepath.Join(t.TempDir(), "missing"))
	if err == nil || ok {
		t.Errorf("TryReviewLock in a missing directory = %v, %v; want an error", ok, err)
	}
	release()
}
