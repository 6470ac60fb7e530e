//go:build windows

package fsafe

import (
	"errors"
	"os"

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
