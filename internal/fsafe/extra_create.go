package fsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Mkdir creates the single directory rel with perm (less the umask). Its
// parent must exist and resolve inside the repository; an existing rel is
// an error matching fs.ErrExist, so a caller that wins the Mkdir owns the
// directory.
func (r *Root) Mkdir(rel string, perm fs.FileMode) error {
	return r.wrap(rel, r.root.Mkdir(rel, perm))
}

// RemoveAll removes rel and everything under it; a symbolic link is
// removed itself, never what it names. A missing rel is no error.
func (r *Root) RemoveAll(rel string) error {
	return r.wrap(rel, r.root.RemoveAll(rel))
}

// ReplaceFile atomically puts a new regular file holding data at rel,
// through a temp file like WriteFile. Unlike WriteFile it replaces a
// symbolic link at rel itself, never the file the link names: it is for
// taskie's own machine-local files, which nothing should link elsewhere. A
// directory at rel is refused.
func (r *Root) ReplaceFile(rel string, data []byte) error {
	fi, err := r.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return r.wrap(rel, err)
	case fi.IsDir():
		return r.wrongKind(rel, fi.Mode(), 0, "writes")
	}
	tmp, f, err := r.createTemp(rel, newFilePerm)
	if err != nil {
		return r.wrap(rel, err)
	}
	err = fillTemp(f, data, nil, false) // a new file: the umask applies
	if err == nil {
		err = r.root.Rename(tmp, rel)
	}
	if err != nil {
		_ = r.root.Remove(tmp)
		return r.wrap(rel, err)
	}
	return nil
}

// outsideLink is the error for rel leaving the repository through a
// symbolic link it can name: the first component of rel that is a link
// whose target lies outside. It is nil when there is no such link (a ".."
// or a race), and outside keeps its plain message.
func (r *Root) outsideLink(rel string) error {
	cur := ""
	for _, part := range strings.FieldsFunc(rel, func(c rune) bool { return strings.ContainsRune(separators, c) }) {
		cur = joinRel(cur, part)
		fi, lerr := r.root.Lstat(cur)
		if lerr != nil {
			return nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if _, serr := r.root.Stat(cur); !isEscape(serr) {
			continue
		}
		target, _ := r.root.Readlink(cur)
		what := r.Path(cur) + " is"
		if cur == rel {
			what = "it is"
		}
		return fmt.Errorf("%s: %w: %s a symbolic link to %s; taskie does not follow symbolic links out of it",
			r.Path(rel), ErrOutsideRepo, what, target)
	}
	return nil
}
