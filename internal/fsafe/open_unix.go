//go:build unix

package fsafe

import (
	"os"
	"syscall"
)

// separators are the path separators a rel path may use.
const separators = "/"

// nonblockFlag makes opening a FIFO return at once instead of waiting for
// the other end; the fstat that follows then refuses it.
const nonblockFlag = syscall.O_NONBLOCK

// setBlocking clears O_NONBLOCK on a regular file once it has been checked,
// so that a child process inheriting it sees an ordinary descriptor.
func setBlocking(f *os.File) error {
	return control(f, func(fd uintptr) error { return syscall.SetNonblock(int(fd), false) })
}

// syncDir fsyncs the directory dir, so that a rename in it survives a crash.
func syncDir(root *os.Root, dir string) error {
	d, err := root.OpenFile(dir, os.O_RDONLY|nonblockFlag, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
