package state

import (
	"errors"
	"path/filepath"
)

// ErrNotFound says that a plan has no state.json.
var ErrNotFound = errors.New("no state.json")

// Path returns the state file of a plan directory.
func Path(dir string) string { return filepath.Join(dir, FileName) }
