package fsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	// newFilePerm is the most a file WriteFile creates gets; the user's
	// umask takes away from it (0600 under umask 077).
	newFilePerm fs.FileMode = 0o644
	// maxLinks bounds how many symbolic links WriteFile follows, as the
	// kernel does.
	maxLinks = 40
	// tempMarker separates a temp file's base name from its random digits.
	tempMarker = ".tmp"
)

// beforeRename, when set by a test, runs between writing the temp file and
// renaming it, to simulate a concurrent change of the target.
var beforeRename func()

// WriteFile atomically replaces the regular file rel with data: it writes a
// temp file ".<base>.tmp<digits>" in the same directory, gives it the
// permission bits of the file it replaces (0644 less the umask for a new
// file), and renames
// it over rel. With durable, the temp file is fsynced before the rename and
// the directory after it. A symbolic link inside the repository is kept and
// its target replaced. If rel is not a regular file nothing is written; on
// any failure the temp file is removed.
func (r *Root) WriteFile(rel string, data []byte, durable bool) error {
	return r.writeFile(rel, data, newFilePerm, durable)
}

// writeFile is WriteFile with the mode of a new file (less the umask).
func (r *Root) writeFile(rel string, data []byte, newPerm fs.FileMode, durable bool) error {
	target, err := r.resolveLink(rel)
	if err != nil {
		return err
	}
	// keep: the bits of the file replaced, set on the descriptor so the
	// umask does not apply; a new file is created with newPerm and the
	// umask applies.
	var keep *fs.FileMode
	fi, err := r.root.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return r.wrap(rel, err)
	case !fi.Mode().IsRegular():
		return r.wrongKind(rel, fi.Mode(), 0, "writes")
	default:
		perm := fi.Mode().Perm()
		keep = &perm
	}
	createPerm := newPerm.Perm()
	if keep != nil {
		createPerm = 0o600 // until the chmod: never wider than the file replaced
	}
	tmp, f, err := r.createTemp(target, createPerm)
	if err != nil {
		return r.wrap(rel, err)
	}
	err = fillTemp(f, data, keep, durable)
	if err == nil {
		if beforeRename != nil {
			beforeRename()
		}
		err = r.root.Rename(tmp, target)
	}
	if err != nil {
		_ = r.root.Remove(tmp)
		return r.wrap(rel, err)
	}
	if durable {
		return r.wrap(rel, syncDir(r.root, parentDir(target)))
	}
	return nil
}

// createTemp creates a new temp file next to target with perm less the
// umask.
func (r *Root) createTemp(target string, perm fs.FileMode) (string, *os.File, error) {
	prefix := joinRel(parentDir(target), "."+baseName(target)+tempMarker)
	var err error
	for range 100 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		var f *os.File
		f, err = r.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return name, f, err
		}
		// A name clash with another writer: draw again.
	}
	return "", nil, err
}

// fillTemp writes data to f, fsyncs it when durable, sets the bits keep
// (when not nil) and closes it.
func fillTemp(f *os.File, data []byte, keep *fs.FileMode, durable bool) error {
	_, err := f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if err == nil && keep != nil {
		// Chmod on the descriptor, so the umask does not apply.
		err = f.Chmod(*keep)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// resolveLink follows symbolic links in the last component of rel and
// returns a path naming the file itself, which may not exist. The path is
// not cleaned, so that os.Root resolves any ".." against the real
// directories.
func (r *Root) resolveLink(rel string) (string, error) {
	cur := rel
	for range maxLinks {
		fi, err := r.root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return cur, nil
		}
		if err != nil {
			return "", r.wrap(rel, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return cur, nil
		}
		target, err := r.root.Readlink(cur)
		if err != nil {
			return "", r.wrap(rel, err)
		}
		if filepath.IsAbs(target) || filepath.VolumeName(target) != "" {
			return "", r.outside(rel)
		}
		cur = joinRel(parentDir(cur), target)
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", r.Path(rel))
}

// AppendFile appends data to the regular file rel in one write, creating it
// with perm (less the umask) if it does not exist. With durable, the file is
// fsynced.
func (r *Root) AppendFile(rel string, data []byte, perm fs.FileMode, durable bool) error {
	f, err := r.openRegular(rel, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm.Perm(), "writes")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return r.wrap(rel, err)
}

// OpenAppend opens the regular file rel for appending, creating it with
// mode 0644 (less the umask), for a log that stays open.
func (r *Root) OpenAppend(rel string) (*os.File, error) {
	return r.openRegular(rel, os.O_WRONLY|os.O_APPEND|os.O_CREATE, newFilePerm, "writes")
}

// CreateExclusive creates the regular file rel with perm (less the umask)
// and opens it for writing. It fails with an error matching fs.ErrExist if
// anything, even a dangling symbolic link, is already at rel, so a file is
// never overwritten.
func (r *Root) CreateExclusive(rel string, perm fs.FileMode) (*os.File, error) {
	return r.openRegular(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm.Perm(), "writes")
}

// CleanTemps removes WriteFile's temp files (".<base>.tmp<digits>") in the
// directory relDir that were last modified more than olderThan ago; 0
// removes them all, which is right for a caller holding the lock that every
// writer of the directory takes. It returns the removed paths, relative to
// the root. A missing directory has nothing to clean.
func (r *Root) CleanTemps(relDir string, olderThan time.Duration) (removed []string, err error) {
	entries, err := r.ReadDir(relDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-olderThan)
	for _, e := range entries {
		if !e.Type().IsRegular() || !isTempName(e.Name()) {
			continue
		}
		rel := joinRel(relDir, e.Name())
		if olderThan > 0 {
			fi, err := r.root.Lstat(rel)
			if err != nil || fi.ModTime().After(cutoff) {
				continue // gone already, or a writer may still be using it
			}
		}
		if err := r.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, rel)
	}
	return removed, nil
}

// isTempName reports whether name is ".<base>.tmp<digits>", the digits
// possibly empty; ".notes.tmpl" is not a temp file.
func isTempName(name string) bool {
	i := strings.LastIndex(name, tempMarker)
	if !strings.HasPrefix(name, ".") || i < 2 {
		return false
	}
	for _, c := range name[i+len(tempMarker):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// joinRel returns the path of name in the directory dir.
func joinRel(dir, name string) string {
	dir = strings.TrimRight(dir, separators)
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}

// parentDir returns the directory part of the slash or OS path rel, without
// cleaning it, or "." if there is none.
func parentDir(rel string) string {
	i := strings.LastIndexAny(rel, separators)
	if i < 0 {
		return "."
	}
	if i == 0 {
		return rel[:1]
	}
	return rel[:i]
}

// baseName returns the last component of the slash or OS path rel.
func baseName(rel string) string {
	return rel[strings.LastIndexAny(rel, separators)+1:]
}
