//go:build !windows

package state

import "os"

// rename replaces newpath in one step; nothing to retry on Unix, where an
// open file does not prevent it.
func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
