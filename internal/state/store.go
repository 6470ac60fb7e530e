package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// LockName is the sidecar lock file. The lock is never taken on state.json
// itself: the atomic rename swaps its inode, so a lock on it protects nothing.
const LockName = ".lock"

// ErrNotFound is returned by Load when the plan has no state.json.
var ErrNotFound = errors.New("no state.json")

// Path returns the state file of a plan directory.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Load reads a plan's state.json without locking; the atomic writes make a
// plain read see either the old or the new file.
func Load(dir string) (*State, error) {
	p := Path(dir)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", p, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return Decode(p, data)
}

// WithLock runs fn while holding the plan's exclusive lock.
func WithLock(dir string, fn func() error) error {
	l := flock.New(filepath.Join(dir, LockName))
	if err := l.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w", l.Path(), err)
	}
	defer l.Unlock()
	return fn()
}

// Update reads state.json under the plan lock, lets fn change it and writes
// it back atomically. create allows a missing file (fn gets New()). When fn
// returns an error nothing is written.
func Update(dir string, create bool, fn func(*State) error) error {
	return WithLock(dir, func() error {
		s, err := Load(dir)
		if errors.Is(err, ErrNotFound) && create {
			s, err = New(), nil
		}
		if err != nil {
			return err
		}
		if err := fn(s); err != nil {
			return err
		}
		return Save(dir, s)
	})
}

// Save writes the state atomically. Callers hold the lock.
func Save(dir string, s *State) error {
	return WriteFileAtomic(Path(dir), s.Encode())
}

// WriteFileAtomic replaces path with data so that a crash leaves either the
// old or the new content: temp file in the same directory, fsync, rename,
// then fsync of the directory where the platform allows it.
func WriteFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}
