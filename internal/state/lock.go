package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// The plan has two sidecar lock files, never state.json itself: the atomic
// rename swaps state.json's inode, so a lock on it protects nothing.
//
// LockName serialises every read-modify-write of the plan's files (state,
// tasks, events). It is held for milliseconds, so waiting for it is fine.
//
// ReviewLockName is held by the hook for as long as a reviewer runs, which
// can be many minutes. It is a separate file so that a running review does
// not stall every other command behind the state lock, and so that "is a
// review running?" can be answered without waiting: the state lock being
// busy says nothing, the review lock being busy says exactly that.
const (
	LockName       = ".lock"
	ReviewLockName = ".review.lock"
)

// LockTimeout is how long WithLock waits for the plan lock before it gives
// up. A variable so that tests can lower it.
var LockTimeout = 10 * time.Second

// ErrLockTimeout is wrapped by WithLock's error when LockTimeout passed.
var ErrLockTimeout = errors.New("another taskie command is holding it, or this filesystem does not support file locks")

const (
	// lockPoll is how often a waiting WithLock tries again.
	lockPoll = 20 * time.Millisecond
	// reviewGrace is how long TryReviewLock keeps trying, so that a
	// ReviewRunning probe holding the file for an instant is not taken for
	// a running review.
	reviewGrace = 100 * time.Millisecond
	reviewPoll  = 10 * time.Millisecond
	// lockPerm lets the other users of a shared checkout open (and so
	// lock) the files; flock's default is 0600.
	lockPerm fs.FileMode = 0o644
)

func newLock(path string) *flock.Flock {
	return flock.New(path, flock.SetPermissions(lockPerm))
}

// WithLock runs fn while holding the plan's exclusive lock. It waits at most
// LockTimeout for the lock and then fails with an error that wraps
// ErrLockTimeout and names the lock file; fn does not run.
func WithLock(dir string, fn func() error) error {
	l := newLock(filepath.Join(dir, LockName))
	ctx, cancel := context.WithTimeout(context.Background(), LockTimeout)
	defer cancel()
	ok, err := l.TryLockContext(ctx, lockPoll)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err == nil && !ok):
		return fmt.Errorf("%s: not locked after %s: %w", l.Path(), LockTimeout, ErrLockTimeout)
	case err != nil:
		return fmt.Errorf("lock %s: %w", l.Path(), err)
	}
	defer l.Unlock()
	return fn()
}

// TryReviewLock takes the plan's review lock without waiting (beyond a
// brief grace for a concurrent ReviewRunning probe). ok is false when
// another process holds it: a review of this plan is already running.
// release frees the lock; it is never nil and may be called more than once.
// The lock also ends with the process, so a crashed hook leaves none behind.
func TryReviewLock(dir string) (release func(), ok bool, err error) {
	l := newLock(filepath.Join(dir, ReviewLockName))
	ctx, cancel := context.WithTimeout(context.Background(), reviewGrace)
	defer cancel()
	ok, err = l.TryLockContext(ctx, reviewPoll)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err == nil && !ok):
		return func() {}, false, nil
	case err != nil:
		return func() {}, false, fmt.Errorf("lock %s: %w", l.Path(), err)
	}
	return func() { _ = l.Unlock() }, true, nil
}

// ReviewRunning reports whether another process holds the plan's review
// lock. It never creates the lock file, and it probes with a shared lock so
// that two probes at once do not see each other as a review.
func ReviewRunning(dir string) bool {
	l := flock.New(filepath.Join(dir, ReviewLockName), flock.SetFlag(os.O_RDONLY))
	ok, err := l.TryRLock()
	if err != nil {
		return false // no lock file: no review has ever run here
	}
	if ok {
		_ = l.Unlock()
	}
	return !ok
}
