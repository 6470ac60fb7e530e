//go:build unix

package store

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive flock on the sidecar lock file rel, waiting in
// the kernel rather than polling: when the holder lets go, a waiter runs
// at once, so twenty agents claiming together each wait only for the
// claims ahead of them. The file is opened through the repository root
// (regular files only, no symbolic link out of it). The wait ends after
// LockTimeout or when ctx is done; a flock granted after that is given
// back at once.
func (c *FileCoord) lock(ctx context.Context, rel string) (unlock func(), err error) {
	// Create the lock file if need be; the lock itself is on a read-only
	// descriptor, as fsafe's locks are.
	if err := c.root.AppendFile(rel, nil, 0o644, false); err != nil {
		return nil, err
	}
	f, err := c.root.OpenRead(rel)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	release := func() {
		_ = unix.Flock(fd, unix.LOCK_UN)
		f.Close()
	}
	switch err := flock(fd, unix.LOCK_EX|unix.LOCK_NB); {
	case err == nil:
		return release, nil
	case !errors.Is(err, unix.EWOULDBLOCK):
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: c.root.Path(rel), Err: err}
	}
	var (
		mu        sync.Mutex
		abandoned bool
		done      = make(chan error, 1)
	)
	go func() {
		err := flock(fd, unix.LOCK_EX)
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if err == nil {
				release()
			} else {
				f.Close()
			}
			return
		}
		done <- err
	}()
	timer := time.NewTimer(c.LockTimeout)
	defer timer.Stop()
	var gaveUp error
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: c.root.Path(rel), Err: err}
		}
		return release, nil
	case <-timer.C:
		gaveUp = c.lockTimeoutErr(rel)
	case <-ctx.Done():
		gaveUp = ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case err := <-done: // granted meanwhile
		if err == nil {
			return release, nil
		}
		f.Close()
		return nil, gaveUp
	default:
		abandoned = true
		return nil, gaveUp
	}
}

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
