//go:build linux

package store

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileIDOf identifies a file as it is now: its inode, the time of its last
// change (ctime, which no tool sets back, unlike the modification time a
// `cp -p` or `touch -r` restores) and its size. A file a crash left alone
// keeps all three; a file written since, or put back by hand or by git,
// has another.
func fileIDOf(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileIDPortable(fi)
	}
	sec, nsec := st.Ctim.Unix()
	return strconv.FormatUint(uint64(st.Ino), 10) + ":" + strconv.FormatInt(sec*1e9+nsec, 10) + ":" + strconv.FormatInt(fi.Size(), 10)
}
