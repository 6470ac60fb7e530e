// Package fsafe is the only way taskie touches files under .taskie/.
//
// Every path is relative to the repository root and is resolved through an
// [os.Root], so no operation follows a symbolic link (or a "..") out of the
// repository. Symbolic links that stay inside the repository are followed,
// as if the link were the file it names: ReadFile reads the target, and
// WriteFile replaces the target and leaves the link in place. Absolute link
// targets are refused, even when they name a path inside the repository.
//
// Files are opened only if they are regular files. A FIFO, socket, device or
// directory in a file's place is an error naming the path, returned at once:
// opens are non-blocking on Unix, so a FIFO never hangs the caller.
package fsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

var (
	// ErrNotRegular is wrapped by the error returned when a path names
	// something other than a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotDir is wrapped by ReadDir's error when a path names something
	// other than a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrOutsideRepo is wrapped by the error returned when a path leaves the
	// repository, through a symbolic link or "..".
	ErrOutsideRepo = errors.New("points outside the repository")
	// ErrTooLarge is wrapped by ReadFileLimit's error for a file over the limit.
	ErrTooLarge = errors.New("file too large")
)

// escapeText is the text of os.Root's unexported escape error; os exports no
// sentinel for it.
const escapeText = "path escapes from parent"

// Root is a repository root through which every file operation goes. Its
// methods are safe for concurrent use.
type Root struct {
	root *os.Root
	dir  string
}

// Open opens the repository root dir.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abs, unwrapPath(err))
	}
	return &Root{root: r, dir: abs}, nil
}

// Close closes the root; later calls on it fail.
func (r *Root) Close() error {
	return r.root.Close()
}

// Dir returns the absolute path of the root.
func (r *Root) Dir() string {
	return r.dir
}

// Path returns the absolute path of rel, for messages.
func (r *Root) Path(rel string) string {
	return filepath.Join(r.dir, filepath.FromSlash(rel))
}

// Stat returns the FileInfo of rel, following symbolic links inside the
// repository.
func (r *Root) Stat(rel string) (fs.FileInfo, error) {
	fi, err := r.root.Stat(rel)
	return fi, r.wrap(rel, err)
}

// Lstat returns the FileInfo of rel without following a final symbolic link.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	fi, err := r.root.Lstat(rel)
	return fi, r.wrap(rel, err)
}

// MkdirAll creates the directory rel and any missing parents with perm.
func (r *Root) MkdirAll(rel string, perm fs.FileMode) error {
	return r.wrap(rel, r.root.MkdirAll(rel, perm))
}

// Remove removes the file or empty directory rel (a symbolic link itself,
// not its target).
func (r *Root) Remove(rel string) error {
	return r.wrap(rel, r.root.Remove(rel))
}

// Rename renames oldRel to newRel, replacing a file at newRel. Like
// rename(2), it acts on symbolic links themselves.
func (r *Root) Rename(oldRel, newRel string) error {
	err := r.root.Rename(oldRel, newRel)
	if err == nil {
		return nil
	}
	if isEscape(err) {
		return fmt.Errorf("rename %s to %s: %w", r.Path(oldRel), r.Path(newRel), ErrOutsideRepo)
	}
	return fmt.Errorf("rename %s to %s: %w", r.Path(oldRel), r.Path(newRel), unwrapPath(err))
}

// ReadDir returns the entries of the directory rel, sorted by name. Anything
// other than a directory at rel is an error wrapping ErrNotDir.
func (r *Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	if err := r.precheck(rel, fs.ModeDir, "lists"); err != nil {
		return nil, err
	}
	listing(r.Path(rel))
	f, err := r.root.OpenFile(rel, os.O_RDONLY|nonblockFlag, 0)
	if err != nil {
		return nil, r.wrap(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, r.wrap(rel, err)
	}
	if !fi.IsDir() {
		return nil, r.wrongKind(rel, fi.Mode(), fs.ModeDir, "lists")
	}
	entries, err := readDir(f, r.Path(rel))
	if err != nil {
		return nil, r.wrap(rel, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// skipPrecheck, set by tests, leaves the fstat after the open as the only
// check, as when a FIFO is swapped in between.
var skipPrecheck bool

// openRegular opens rel with flag and perm, and returns it only if it is a
// regular file. verb ("reads", "writes") completes the refusal message. The
// Stat before the open keeps taskie from opening a device at all; the fstat
// after it is what makes the check hold against a concurrent swap.
func (r *Root) openRegular(rel string, flag int, perm fs.FileMode, verb string) (*os.File, error) {
	if err := r.precheck(rel, 0, verb); err != nil {
		return nil, err
	}
	f, err := r.root.OpenFile(rel, flag|nonblockFlag, perm)
	if err != nil {
		// Name the kind (a FIFO with no reader fails with ENXIO, a
		// directory with EISDIR) when that is why the open failed.
		if kerr := r.checkKind(rel, 0, verb); errors.Is(kerr, ErrNotRegular) {
			return nil, kerr
		}
		return nil, r.wrap(rel, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, r.wrap(rel, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, r.wrongKind(rel, fi.Mode(), 0, verb)
	}
	if err := setBlocking(f); err != nil {
		f.Close()
		return nil, r.wrap(rel, err)
	}
	return f, nil
}

// precheck is checkKind before an open.
func (r *Root) precheck(rel string, want fs.FileMode, verb string) error {
	if skipPrecheck {
		return nil
	}
	return r.checkKind(rel, want, verb)
}

// checkKind fails if rel exists and its type (after following links inside
// the repository) is not want: 0 for a regular file, fs.ModeDir for a
// directory. A missing rel passes, so that the open can create it or report
// it.
func (r *Root) checkKind(rel string, want fs.FileMode, verb string) error {
	fi, err := r.root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return r.wrap(rel, err)
	case fi.Mode().Type() != want:
		return r.wrongKind(rel, fi.Mode(), want, verb)
	}
	return nil
}

// wrongKind is the error for rel having mode where a regular file (want 0)
// or a directory (want fs.ModeDir) was expected.
func (r *Root) wrongKind(rel string, mode, want fs.FileMode, verb string) error {
	if want == fs.ModeDir {
		return fmt.Errorf("%s: %w (%s); taskie only %s directories", r.Path(rel), ErrNotDir, kind(mode), verb)
	}
	return fmt.Errorf("%s: %w (%s); taskie only %s regular files", r.Path(rel), ErrNotRegular, kind(mode), verb)
}

// wrap turns an error from os.Root into one that starts with the absolute
// path and still matches fs.ErrNotExist and the like.
func (r *Root) wrap(rel string, err error) error {
	if err == nil {
		return nil
	}
	if isEscape(err) {
		return r.outside(rel)
	}
	return fmt.Errorf("%s: %w", r.Path(rel), unwrapPath(err))
}

// outside is the error for rel leaving the repository.
func (r *Root) outside(rel string) error {
	if err := r.outsideLink(rel); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w; taskie does not follow symbolic links out of it", r.Path(rel), ErrOutsideRepo)
}

// isEscape reports whether err is os.Root's refusal to leave the root.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == escapeText {
			return true
		}
	}
	return false
}

// unwrapPath strips an *fs.PathError or *os.LinkError, whose message would
// repeat the relative path after the operation name.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// kind names the file type in mode for messages.
func kind(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t == 0:
		return "a regular file"
	default:
		return "an irregular file"
	}
}
