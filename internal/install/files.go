package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// Every file install, uninstall and doctor touch goes through an fsafe
// root: a project's files through the project root, which no symbolic link
// leads out of (a cloned repository is someone else's content); the user's
// own files (~/.claude, $CODEX_HOME) through the real directory holding
// them, so the user's own links (a dotfiles manager's) still work. Either
// way reads are bounded and never block on a FIFO, and writes go to a temp
// file with a random name, created exclusively, fsynced and renamed.

// maxFileSize bounds the settings, hooks and config files taskie reads:
// far above any real one, far below what would hurt.
const maxFileSize = 8 << 20

// Modes of the files taskie creates (less the umask); a file that exists
// keeps its own.
const (
	filePerm   fs.FileMode = 0o644
	secretPerm fs.FileMode = 0o600 // config.toml may hold credentials
	dirPerm    fs.FileMode = 0o755
)

// place is a file or directory install touches: a root it cannot leave and
// its path there.
type place struct {
	root *fsafe.Root
	rel  string
	abs  string
}

// repoBase is the project root that the file abs must stay in, or "" for
// the user's own file.
func (t Target) repoBase(abs string) string {
	if t.Scope == ScopeProject && t.Root != "" && within(t.Root, abs) {
		return t.Root
	}
	return ""
}

func within(base, abs string) bool {
	rel, err := filepath.Rel(base, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// open finds abs: in the project root base, or, with base "", in the real
// directory of the user's file (followFinal: through the file's own link
// too; not for a directory that may be removed, whose link is removed
// itself). Close the place when done.
func open(base, abs string, followFinal bool) (place, error) {
	if base != "" {
		rel, err := filepath.Rel(base, abs)
		if err != nil || !within(base, abs) {
			return place{}, fmt.Errorf("%s: not inside %s", abs, base)
		}
		root, err := fsafe.Open(base)
		if err != nil {
			return place{}, err
		}
		return place{root: root, rel: filepath.ToSlash(rel), abs: abs}, nil
	}
	p := abs
	if followFinal {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
	}
	dir, rel := filepath.Dir(p), filepath.Base(p)
	for { // the nearest directory that exists; MkdirAll makes the rest in it
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rel, dir = filepath.Join(filepath.Base(dir), rel), parent
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	root, err := fsafe.Open(dir)
	if err != nil {
		return place{}, err
	}
	return place{root: root, rel: filepath.ToSlash(rel), abs: abs}, nil
}

func (p place) close() { p.root.Close() }

// explain names the link through which an operation left the project, with
// what to do about it.
func (p place) explain(err error) error {
	if errors.Is(err, fsafe.ErrTooLarge) {
		return fmt.Errorf("%w; no settings file is that large: fix or move it, then run again", err)
	}
	if !errors.Is(err, fsafe.ErrOutsideRepo) {
		return err
	}
	if link := p.root.LinkOut(p.rel); link != "" {
		return fmt.Errorf("%s: a symbolic link out of the project; taskie does not read, write or remove anything through it: replace it with a real file or directory (or delete it), then run again", p.root.Path(link))
	}
	return err
}

// readFile reads abs, bounded; a missing file is an error matching
// fs.ErrNotExist.
func readFile(base, abs string) ([]byte, error) {
	p, err := open(base, abs, true)
	if err != nil {
		return nil, err
	}
	defer p.close()
	data, err := p.root.ReadFileLimit(p.rel, maxFileSize)
	return data, p.explain(err)
}

// ReadFile reads a settings or hooks file for doctor: base is the project
// root it must stay in, "" for the user's own file.
func ReadFile(base, abs string) ([]byte, error) { return readFile(base, abs) }

// writeFileIn replaces abs with data, making its directory first.
func writeFileIn(base, abs string, data []byte, perm fs.FileMode) error {
	p, err := open(base, abs, true)
	if err != nil {
		return err
	}
	defer p.close()
	if dir := filepath.Dir(filepath.FromSlash(p.rel)); dir != "." {
		if err := p.root.MkdirAll(filepath.ToSlash(dir), dirPerm); err != nil {
			return p.explain(err)
		}
	}
	return p.explain(p.root.WriteFilePerm(p.rel, data, perm))
}

// removeFile removes the file abs (a link itself, not its target).
func removeFile(base, abs string) error {
	p, err := open(base, abs, true)
	if err != nil {
		return err
	}
	defer p.close()
	return p.explain(p.root.Remove(p.rel))
}

// removeTree removes the directory abs and what it holds. A symbolic link
// there is refused, not removed: it is not what install wrote.
func removeTree(base, abs string) error {
	p, err := open(base, abs, false)
	if err != nil {
		return err
	}
	defer p.close()
	if err := p.noLink(); err != nil {
		return err
	}
	return p.explain(p.root.RemoveAll(p.rel))
}

// noLink refuses a symbolic link at p, and any path through a link out.
func (p place) noLink() error {
	fi, err := p.root.Lstat(p.rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return p.explain(err)
	case fi.Mode()&fs.ModeSymlink != 0 && p.root.LinkOut(p.rel) != "":
		return p.explain(fmt.Errorf("%s: %w", p.root.Path(p.rel), fsafe.ErrOutsideRepo))
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: a symbolic link, not the directory taskie writes; taskie does not write or remove anything through it: delete the link, then run again", p.root.Path(p.rel))
	}
	return nil
}

// checkDir refuses the directory abs when it is a symbolic link or leads
// out of the project, before anything is written into it.
func checkDir(base, abs string) error {
	p, err := open(base, abs, false)
	if err != nil {
		return err
	}
	defer p.close()
	return p.noLink()
}

// listDir lists the directory abs; a missing one is empty.
func listDir(base, abs string) ([]fs.DirEntry, error) {
	p, err := open(base, abs, true)
	if err != nil {
		return nil, err
	}
	defer p.close()
	entries, err := p.root.ReadDir(p.rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return entries, p.explain(err)
}

// exists reports whether abs exists, without leaving the project.
func exists(base, abs string) bool {
	p, err := open(base, abs, true)
	if err != nil {
		return false
	}
	defer p.close()
	_, err = p.root.Stat(p.rel)
	return err == nil
}

// Exists is exists for doctor.
func Exists(base, abs string) bool { return exists(base, abs) }

// removeIfEmpty removes an empty directory and reports whether it did.
func removeIfEmpty(base, dir string) bool {
	p, err := open(base, dir, false)
	if err != nil {
		return false
	}
	defer p.close()
	if p.rel == "." {
		return false // the project root itself stays
	}
	fi, err := p.root.Lstat(p.rel)
	if err != nil || !fi.IsDir() {
		return false
	}
	entries, err := p.root.ReadDir(p.rel)
	return err == nil && len(entries) == 0 && p.root.Remove(p.rel) == nil
}
