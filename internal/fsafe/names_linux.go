package fsafe

import (
	"bytes"
	"encoding/binary"
	"io/fs"

	"golang.org/x/sys/unix"
)

// EachName calls fn with every name in the directory but "." and "..",
// in the order the file system lists them, and its type bits (looked up,
// without following a link, when the file system does not say). name is
// valid during the call only. Nothing is allocated per name: a plan of
// 10,000 tasks lists 60,000 names, and a caller that keeps a few of them
// should not pay for the rest.
func (d *Dir) EachName(fn func(name []byte, typ fs.FileMode)) error {
	listing(d.parent.Path(d.rel))
	if _, err := d.f.Seek(0, 0); err != nil {
		return d.parent.wrap(d.rel, err)
	}
	fd := int(d.f.Fd())
	buf := make([]byte, direntBuf)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return d.parent.wrap(d.rel, err)
		}
		if n <= 0 {
			return nil
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			ino, typ, name := binary.NativeEndian.Uint64(b[0:8]), b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			mode, ok := direntType(typ)
			if !ok {
				var st unix.Stat_t
				if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue // gone since it was listed
				}
				mode = statType(st.Mode)
			}
			fn(name, mode)
		}
	}
}

// direntBuf is the size of one read of the directory: 60,000 names in a
// few reads (tests make it small to read many times).
var direntBuf = 256 << 10

// direntType maps a dirent's d_type to type bits; false when unknown.
func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// statType maps st_mode to type bits.
func statType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
