//go:build unix

package fsafe

import (
	"errors"
	"os"

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
