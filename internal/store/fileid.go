package store

import (
	"io/fs"
	"strconv"
)

// fileIDPortable is fileIDOf where the system tells no inode nor change
// time: the modification time and the size.
func fileIDPortable(fi fs.FileInfo) string {
	return "m" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + ":" + strconv.FormatInt(fi.Size(), 10)
}

// fileID identifies plan file name as it is now; "" when it is absent or
// cannot be looked at.
func (f *Files) fileID(id, name string) string {
	fi, err := f.root.Lstat(Rel(id, name))
	if err != nil {
		return ""
	}
	return fileIDOf(fi)
}

// sameFile reports whether plan file name is still the one a commit found
// (want, from the commit event); a commit logged before taskie recorded
// it (want "") is judged by content alone.
func (f *Files) sameFile(id, name, want string) bool {
	return want == "" || f.fileID(id, name) == want
}
