//go:build windows

package fsafe

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// lockFile tries once to lock the first byte of f with LockFileEx,
// exclusive or shared. ok is false when another handle holds a conflicting
// lock.
func lockFile(f *os.File, exclusive bool) (ok bool, err error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err = control(f, func(fd uintptr) error {
		return windows.LockFileEx(windows.Handle(fd), flags, 0, 1, 0, new(windows.Overlapped))
	})
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// unlockFile releases f's lock.
func unlockFile(f *os.File) error {
	return control(f, func(fd uintptr) error {
		return windows.UnlockFileEx(windows.Handle(fd), 0, 1, 0, new(windows.Overlapped))
	})
}

// waitLock waits for an exclusive lock on f, trying again every lockPoll,
// until timeout has passed; ok is false then.
func waitLock(f *os.File, timeout time.Duration) (ok bool, err error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		time.Sleep(min(lockPoll, time.Until(deadline)))
		if ok, err := lockFile(f, true); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// lockPoll is how often a waiting Lock tries again (Windows has no
// blocking wait with a timeout).
const lockPoll = 20 * time.Millisecond
