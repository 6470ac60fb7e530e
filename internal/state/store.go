package state

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// ErrNotFound is returned by Load when the plan has no state.json.
var ErrNotFound = errors.New("no state.json")

// Path returns the state file of a plan directory.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Load reads a plan's state.json without locking; the atomic writes make a
// plain read see either the old or the new file.
func Load(dir string) (*State, error) {
	p := Path(dir)
	data, err := fsafe.ReadPath(p, fsafe.LimitState)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", p, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return Decode(p, data)
}

// Save writes the state atomically. Callers hold the plan lock and loaded
// the state under it, so that no other process's update is lost:
//
//	err := WithLock(dir, func() error {
//		s, err := Load(dir)
//		if err != nil {
//			return err
//		}
//		s.Phase = "code-review"
//		return Save(dir, s)
//	})
func Save(dir string, s *State) error {
	return WriteFileAtomic(Path(dir), s.Encode())
}
