package fsafe

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReplaceFile atomically and durably replaces the regular file rel with
// data, for files whose mode matters (an agent's settings, a config that
// may hold credentials): the temp file ".<base>.tmp<digits>" is created
// exclusively with perm, so a new file gets perm less the umask, while a
// file that exists keeps its permission bits. The temp file is fsynced
// before the rename and the directory after it. A symbolic link inside the
// root is kept and its target replaced; if rel is not a regular file
// nothing is written; on any failure the temp file is removed.
func (r *Root) ReplaceFile(rel string, data []byte, perm fs.FileMode) error {
	target, err := r.resolveLink(rel)
	if err != nil {
		return err
	}
	keep, exists := fs.FileMode(0), false
	fi, err := r.root.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return r.wrap(rel, err)
	case !fi.Mode().IsRegular():
		return r.wrongKind(rel, fi.Mode(), 0, "writes")
	default:
		keep, exists = fi.Mode().Perm(), true
	}
	prefix := joinRel(parentDir(target), "."+baseName(target)+tempMarker)
	var tmp string
	var f *os.File
	for range 100 {
		tmp = prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err = r.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm.Perm())
		if !errors.Is(err, fs.ErrExist) {
			break
		}
		// A name clash (another writer, or anything planted there): draw again.
	}
	if err != nil {
		return r.wrap(rel, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil && exists {
		err = f.Chmod(keep)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.root.Rename(tmp, target)
	}
	if err != nil {
		_ = r.root.Remove(tmp)
		return r.wrap(rel, err)
	}
	return r.wrap(rel, syncDir(r.root, parentDir(target)))
}

// RemoveTree removes rel and everything under it. A symbolic link is
// removed, never followed: nothing outside the root is removed, and a path
// leading out through a link is an error wrapping ErrOutsideRepo. A
// missing rel is no error.
func (r *Root) RemoveTree(rel string) error {
	return r.wrap(rel, r.root.RemoveAll(rel))
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
