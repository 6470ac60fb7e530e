//go:build unix

package planchoice

import (
	"os"
	"syscall"
)

// openRegular opens path for reading without blocking on a FIFO; ReadTail
// then refuses anything but a regular file.
func openRegular(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
