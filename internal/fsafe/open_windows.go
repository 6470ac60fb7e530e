//go:build windows

package fsafe

import "os"

// separators are the path separators a rel path may use.
const separators = `/\`

// nonblockFlag is zero: Windows has no O_NONBLOCK, and no FIFOs in a
// directory tree.
const nonblockFlag = 0

// setBlocking does nothing on Windows.
func setBlocking(*os.File) error { return nil }

// syncDir does nothing on Windows, which cannot fsync a directory.
func syncDir(*os.Root, string) error { return nil }
