//go:build unix

package fsafe

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile tries once to flock f, exclusive or shared. ok is false when
// another open file description holds a conflicting lock.
func lockFile(f *os.File, exclusive bool) (ok bool, err error) {
	how := unix.LOCK_SH | unix.LOCK_NB
	if exclusive {
		how = unix.LOCK_EX | unix.LOCK_NB
	}
	for {
		err = control(f, func(fd uintptr) error { return unix.Flock(int(fd), how) })
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// unlockFile releases f's flock, for every descriptor sharing it.
func unlockFile(f *os.File) error {
	return control(f, func(fd uintptr) error { return unix.Flock(int(fd), unix.LOCK_UN) })
}

// waitLock waits in the kernel for an exclusive flock on f, until timeout
// has passed; ok is false then. A flock granted after the wait gave up is
// freed when the caller closes f: it belongs to f's open file description,
// which the blocked call keeps open until it returns.
func waitLock(f *os.File, timeout time.Duration) (ok bool, err error) {
	done := make(chan error, 1)
	go func() {
		done <- control(f, func(fd uintptr) error {
			for {
				err := unix.Flock(int(fd), unix.LOCK_EX)
				if !errors.Is(err, unix.EINTR) {
					return err
				}
			}
		})
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err == nil, err
	case <-t.C:
		return false, nil
	}
}
