//go:build unix

package fsafe

import (
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// dirFlag refuses, in the kernel, to open anything but a directory.
const dirFlag = unix.O_DIRECTORY

// listDir lists the open directory f from its start.
func listDir(f *os.File, abs string) ([]fs.DirEntry, error) {
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	return readDir(f, abs)
}

// openPlain opens name when it is a regular file directly in the
// directory (not a link), with one lookup relative to the open directory.
// ok is false for anything else, which the repository root must judge; a
// missing name is the error the root would return.
func (d *Dir) openPlain(name string) (f *os.File, ok bool, err error) {
	if !plainName(name) {
		return nil, false, nil
	}
	dfd := int(d.f.Fd())
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == unix.ENOENT:
		return nil, true, d.parent.wrap(path.Join(d.rel, name), err)
	case err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, false, nil
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, nil
	}
	f = os.NewFile(uintptr(fd), d.parent.Path(path.Join(d.rel, name)))
	// The fstat after the open is what holds against a concurrent swap.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || setBlocking(f) != nil {
		f.Close()
		return nil, false, nil
	}
	return f, true, nil
}

// appendPlain opens name for appending, creating it (0644 less the
// umask) when missing, when it is or will be a regular file directly in
// the directory (not a link), with one lookup relative to the open
// directory; ok is false for anything else, which the root must judge.
func (d *Dir) appendPlain(name string) (*os.File, bool) {
	if !plainName(name) {
		return nil, false
	}
	dfd := int(d.f.Fd())
	var st unix.Stat_t
	// As the root's: a look before the open, so that a device is never opened.
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG || err != nil && err != unix.ENOENT {
		return nil, false
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(newFilePerm))
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), d.parent.Path(path.Join(d.rel, name)))
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || setBlocking(f) != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// openSubPlain opens name when it is a directory directly in this one (not
// a link); ok is false for anything else, which the root must judge.
func (d *Dir) openSubPlain(name string) (*os.File, bool) {
	if !plainName(name) {
		return nil, false
	}
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), d.parent.Path(path.Join(d.rel, name))), true
}

// readPlain is openPlain and readOpen of name on raw descriptors: no
// os.File, poller registration or blocking switch per file (a view reads
// 5,000 task files of a plan of 10,000 tasks). ok is false for anything
// but a regular file directly in the directory, which the root must judge.
func (d *Dir) readPlain(name string, limit int64) (data []byte, ok bool, err error) {
	if !plainName(name) {
		return nil, false, nil
	}
	rel := path.Join(d.rel, name)
	dfd := int(d.f.Fd())
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == unix.ENOENT:
		return nil, true, d.parent.wrap(rel, err)
	case err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, false, nil
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, nil
	}
	defer unix.Close(fd)
	// The fstat after the open is what holds against a concurrent swap.
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, nil
	}
	if limit >= 0 && st.Size > limit {
		return nil, true, d.parent.tooLarge(rel, limit)
	}
	// One byte more than the size: a file that grew since the fstat shows.
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, true, d.parent.wrap(rel, &fs.PathError{Op: "read", Path: d.parent.Path(rel), Err: err})
		}
		if n <= 0 {
			return buf, true, nil
		}
		buf = buf[:len(buf)+n]
		if limit >= 0 && int64(len(buf)) > limit {
			return nil, true, d.parent.tooLarge(rel, limit)
		}
	}
}
