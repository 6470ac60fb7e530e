//go:build !unix

package fsafe

import (
	"io/fs"
	"os"
)

// dirFlag is zero where the open cannot ask for a directory.
const dirFlag = 0

// listDir lists the open directory f.
func listDir(f *os.File, abs string) ([]fs.DirEntry, error) { return readDir(f, abs) }

// openPlain hands every name to the repository root.
func (d *Dir) openPlain(string) (*os.File, bool, error) { return nil, false, nil }

// openSubPlain hands every name to the repository root.
func (d *Dir) openSubPlain(string) (*os.File, bool) { return nil, false }

// appendPlain hands every name to the repository root.
func (d *Dir) appendPlain(string) (*os.File, bool) { return nil, false }

// readPlain hands every name to the repository root.
func (d *Dir) readPlain(string, int64) ([]byte, bool, error) { return nil, false, nil }
