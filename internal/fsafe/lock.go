package fsafe

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ErrLockTimeout is wrapped by Lock's error when the timeout passed while
// another holder kept the lock.
var ErrLockTimeout = errors.New("timed out waiting for the lock")

// Lock is an advisory lock on a file (flock on Unix, LockFileEx on
// Windows), held until Unlock, Release or the end of the process. Lock a
// sidecar file, never a file that WriteFile replaces: the rename swaps the
// inode, so a lock on it protects nothing.
type Lock struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// lockHook, when set (SetLockHook), is told of every lock taken: tests
// count a command's locks with it; unset it costs one atomic load.
var lockHook atomic.Pointer[func(path string)]

// SetLockHook makes fn see the path of every lock that Lock and TryLock
// take, until restore is called. For tests: fn runs on the locking
// goroutine, so it must be safe for concurrent use. Not in a _test.go
// file: the hook's tests, in another package, count a stop's locks with it.
func SetLockHook(fn func(path string)) (restore func()) {
	old := lockHook.Swap(&fn)
	return func() { lockHook.Store(old) }
}

func locked(path string) {
	if fn := lockHook.Load(); fn != nil {
		(*fn)(path)
	}
}

// Lock takes an exclusive lock on the regular file rel, creating it with
// mode 0644 (less the umask). A lock held by another waits until timeout
// has passed — in the kernel on Unix, so that the waiter runs as soon as
// the holder lets go; elsewhere trying every 20ms — then fails with an
// error that wraps ErrLockTimeout and names the file.
func (r *Root) Lock(rel string, timeout time.Duration) (*Lock, error) {
	f, err := r.openLockFile(rel, true)
	if err != nil {
		return nil, err
	}
	ok, err := lockFile(f, true)
	if err == nil && !ok {
		ok, err = waitLock(f, timeout)
	}
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", r.Path(rel), err)
	case !ok:
		f.Close()
		return nil, fmt.Errorf("%s: %w after %s; another process holds it", r.Path(rel), ErrLockTimeout, timeout)
	}
	locked(r.Path(rel))
	return &Lock{f: f, path: r.Path(rel)}, nil
}

// TryLock takes an exclusive lock on the regular file rel without waiting,
// creating the file as Lock does. ok is false, with a nil error, when
// another holder has it.
func (r *Root) TryLock(rel string) (l *Lock, ok bool, err error) {
	f, err := r.openLockFile(rel, true)
	if err != nil {
		return nil, false, err
	}
	ok, err = lockFile(f, true)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", r.Path(rel), err)
		}
		return nil, false, nil
	}
	locked(r.Path(rel))
	return &Lock{f: f, path: r.Path(rel)}, true, nil
}

// Probe reports whether another holder has the lock on rel. It never
// creates the file, and it tries a shared lock so that two probes at once
// do not see each other as holders. Any error (no such file, not a regular
// file) reports false: nobody can hold a lock on a file that cannot be
// locked.
func (r *Root) Probe(rel string) (held bool) {
	f, err := r.openLockFile(rel, false)
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := lockFile(f, false)
	if err != nil {
		return false
	}
	if ok {
		_ = unlockFile(f)
	}
	return !ok
}

// openLockFile opens rel for locking. Read access is enough for flock and
// LockFileEx, and lets a user lock a file another user created.
func (r *Root) openLockFile(rel string, create bool) (*os.File, error) {
	flag := os.O_RDONLY
	if create {
		flag |= os.O_CREATE
	}
	return r.openRegular(rel, flag, newFilePerm, "locks")
}

// File returns the locked file, or nil once the lock is unlocked or
// released. Passing it in exec.Cmd.ExtraFiles makes the child share the
// lock; see Release.
func (l *Lock) File() *os.File {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f
}

// Path returns the absolute path of the locked file.
func (l *Lock) Path() string {
	return l.path
}

// Unlock releases the lock and closes the file. It releases the lock for
// every process sharing it too (a child given File), so after a hand-off use
// Release instead. Calling it again, or after Release, does nothing.
func (l *Lock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}

// Release closes this process's descriptor without unlocking, for the
// hand-off of a lock to a child process: a flock belongs to the open file
// description, which the child inherited through exec.Cmd.ExtraFiles, so
// the child keeps the lock until it exits. Without such a child, closing
// the last descriptor frees the lock. (Windows cannot pass files to a child
// this way; there Release frees the lock.) Calling it again, or after
// Unlock, does nothing.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("release %s: %w", l.path, err)
	}
	return nil
}

// control runs fn on f's descriptor.
func control(f *os.File, fn func(fd uintptr) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(fd) }); err != nil {
		return err
	}
	return ferr
}
