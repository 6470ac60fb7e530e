//go:build unix

package review

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test process re-runs itself as a stand-in hook: with hookChildEnv
// set, TestMain runs hookChild instead of the tests.
const (
	hookChildEnv   = "TASKIE_REVIEW_TEST_HOOK"
	hookRequestEnv = "TASKIE_REVIEW_TEST_REQUEST"
	hookLockEnv    = "TASKIE_REVIEW_TEST_LOCK"
)

func childMain() (int, bool) {
	if os.Getenv(hookChildEnv) != "1" {
		return 0, false
	}
	if err := hookChild(); err != nil {
		fmt.Fprintln(os.Stderr, "hook child:", err)
		return 1, true
	}
	return 0, true
}

// hookChild is a hook: it takes the review lock and runs a claude review
// that hands the lock to the reviewer.
func hookChild() error {
	var req Request
	if err := json.Unmarshal([]byte(os.Getenv(hookRequestEnv)), &req); err != nil {
		return err
	}
	f, err := os.OpenFile(os.Getenv(hookLockEnv), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	req.HoldLock = f
	_, err = claudeReviewer{}.Review(context.Background(), req)
	return err
}

// TestReviewerHoldsLockAndDiesWithHook kills a hook while its reviewer
// runs: on Linux the reviewer dies with it (Pdeathsig); everywhere the
// review lock stays held for as long as anything the reviewer started
// lives, so no second reviewer can join an orphan.
func TestReviewerHoldsLockAndDiesWithHook(t *testing.T) {
	f := newFixture(t, "SLEEP")
	req := f.request(1)
	req.Timeout = time.Minute
	lockPath := filepath.Join(f.planDir, ".review.lock")
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hookOut, err := os.Create(filepath.Join(t.TempDir(), "hook.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer hookOut.Close()
	hook := exec.Command(exe)
	hook.Env = append(os.Environ(), hookChildEnv+"=1", hookRequestEnv+"="+string(b), hookLockEnv+"="+lockPath)
	hook.Stdout, hook.Stderr = hookOut, hookOut
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hook.Process.Kill(); hook.Wait() })

	rec := waitForReviewer(t, f, hook)
	t.Cleanup(func() {
		syscall.Kill(rec.PID, syscall.SIGKILL)
		syscall.Kill(rec.ChildPID, syscall.SIGKILL)
	})
	if !lockBusy(t, lockPath) {
		t.Fatal("the review lock is free while the review runs")
	}

	if err := hook.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	hook.Wait()
	if runtime.GOOS == "linux" && !eventually(5*time.Second, func() bool { return processGone(rec.PID) }) {
		t.Errorf("reviewer %d outlived its hook (Pdeathsig not set?)", rec.PID)
	}
	if !lockBusy(t, lockPath) {
		t.Error("the review lock was freed while a process the reviewer started still runs")
	}

	syscall.Kill(rec.PID, syscall.SIGKILL)
	syscall.Kill(rec.ChildPID, syscall.SIGKILL)
	if !eventually(5*time.Second, func() bool { return !lockBusy(t, lockPath) }) {
		t.Error("the review lock is still held after the reviewer and its child died")
	}
}

// waitForReviewer waits until the fake reviewer has logged its start and
// returns its record.
func waitForReviewer(t *testing.T, f *fixture, hook *exec.Cmd) fakeLog {
	t.Helper()
	var rec fakeLog
	found := eventually(10*time.Second, func() bool {
		file, err := os.Open(f.log)
		if err != nil {
			return false
		}
		defer file.Close()
		sc := bufio.NewScanner(file)
		return sc.Scan() && json.Unmarshal(sc.Bytes(), &rec) == nil
	})
	if !found || rec.PID == 0 || rec.ChildPID == 0 {
		out, _ := os.ReadFile(hook.Stdout.(*os.File).Name())
		t.Fatalf("the fake reviewer did not start (log record %+v); hook output:\n%s", rec, out)
	}
	return rec
}

// lockBusy reports whether another open file description holds a flock
// on path.
func lockBusy(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

func eventually(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if ok() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
