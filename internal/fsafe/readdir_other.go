//go:build !unix

package fsafe

import (
	"io/fs"
	"os"
)

// readDir lists an open directory.
func readDir(f *os.File, _ string) ([]fs.DirEntry, error) { return f.ReadDir(-1) }
