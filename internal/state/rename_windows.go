//go:build windows

package state

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// renameBudget is how long rename keeps trying to replace a file that
// another process has open.
const renameBudget = time.Second

// rename replaces newpath. On Windows MoveFileEx fails with access denied or
// a sharing violation while another process (a reader, an antivirus, an
// indexer) has newpath open without FILE_SHARE_DELETE; such holds are
// brief, so it retries for up to renameBudget.
func rename(oldpath, newpath string) error {
	return retryRename(oldpath, newpath, os.Rename, heldOpen, renameBudget)
}

// heldOpen reports the errors MoveFileEx gives while the target is open.
// Access denied is also a real permission problem; that one costs
// renameBudget before it is reported.
func heldOpen(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
