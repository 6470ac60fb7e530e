package fsafe

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// WriteFilePerm is WriteFile, always durable, for a file whose mode
// matters (a config that may hold credentials): a new file is created with
// perm less the umask; a file that exists keeps its permission bits.
func (r *Root) WriteFilePerm(rel string, data []byte, perm fs.FileMode) error {
	return r.writeFile(rel, data, perm, true)
}

// LinkOut names the symbolic link through which rel leaves the root: the
// first leading part of rel (relative to the root) that is a link
// resolving outside it, or "" when there is none.
func (r *Root) LinkOut(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := r.root.Lstat(p)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if target, err := r.root.Readlink(p); err == nil && (filepath.IsAbs(target) || filepath.VolumeName(target) != "") {
			return p
		}
		if _, err := r.root.Stat(p); err != nil && isEscape(err) {
			return p
		}
	}
	return ""
}
