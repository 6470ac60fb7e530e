package gitwt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// ErrNoMain is wrapped by MainCheckout's error when a linked worktree's
// clone has no main checkout to go to: a bare repository, or one whose
// main checkout is gone.
var ErrNoMain = errors.New("no main checkout")

// Checkout says where dir is: in a linked worktree (Linked, with its root
// in Worktree and the clone's main checkout in Main) or not.
type Checkout struct {
	Linked   bool
	Worktree string // the linked worktree's root
	Main     string // the main checkout's root, when Linked (on ErrNoMain: the one that is gone, "" when bare)
	Common   string // the clone's git common directory, when Linked
}

// MainCheckout finds the main checkout of the clone whose linked worktree
// holds dir. Outside git, in the main checkout or in a submodule it
// returns a Checkout that is not Linked and no error. The main checkout is
// the common directory's parent when that directory is its ".git" (read
// from the files: no git process, the hooks call this on every stop);
// otherwise the first entry of `git worktree list`. A bare repository, or
// a main checkout that no longer exists, is an error wrapping ErrNoMain.
func MainCheckout(dir string) (Checkout, error) {
	l, err := Discover(dir)
	if errors.Is(err, ErrNotRepo) {
		return Checkout{}, nil
	}
	if err != nil {
		return stale(dir, err)
	}
	if !l.Linked {
		return Checkout{}, nil
	}
	c := Checkout{Linked: true, Worktree: l.Toplevel, Common: l.CommonDir}
	if filepath.Base(l.CommonDir) == ".git" {
		parent := filepath.Dir(l.CommonDir)
		if fi, err := os.Stat(l.CommonDir); err == nil && fi.IsDir() && plainConfig(l.CommonDir) {
			c.Main = parent
			return c, nil
		}
	}
	out, err := run(l.Toplevel, "worktree", "list", "--porcelain")
	if err != nil {
		return c, fmt.Errorf("%s: a worktree of %s, whose main checkout cannot be found: %w (%v)", l.Toplevel, l.CommonDir, ErrNoMain, err)
	}
	first, _, _ := strings.Cut(out, "\n\n")
	path, ok := strings.CutPrefix(firstLine(first), "worktree ")
	if !ok {
		return c, fmt.Errorf("git worktree list: unexpected output %q", firstLine(first))
	}
	if strings.Contains("\n"+first+"\n", "\nbare\n") {
		c.Main = ""
		return c, fmt.Errorf("%s: a worktree of the bare repository %s, which has no main checkout: %w", l.Toplevel, l.CommonDir, ErrNoMain)
	}
	path = filepath.Clean(path)
	c.Main = path
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return c, fmt.Errorf("%s: a worktree of %s, whose main checkout %s no longer exists: %w", l.Toplevel, l.CommonDir, path, ErrNoMain)
	}
	return c, nil
}

// stale reports a linked worktree whose git directory is gone (its main
// checkout moved or was deleted): its .git file points nowhere.
func stale(dir string, err error) (Checkout, error) {
	cur, aerr := filepath.Abs(dir)
	if aerr != nil {
		return Checkout{}, nil
	}
	for {
		dotgit := filepath.Join(cur, ".git")
		if fi, serr := os.Stat(dotgit); serr == nil {
			if !fi.Mode().IsRegular() {
				return Checkout{}, nil
			}
			gitdir, rerr := readGitFile(dotgit)
			if rerr != nil {
				return Checkout{}, nil
			}
			if filepath.Base(filepath.Dir(gitdir)) != "worktrees" {
				return Checkout{}, nil // a submodule or another layout: not ours to judge
			}
			if _, serr := os.Stat(gitdir); serr == nil {
				return Checkout{}, nil // there: an unusual layout, not a stale one
			}
			common := filepath.Dir(filepath.Dir(gitdir))
			main := filepath.Dir(common)
			return Checkout{Linked: true, Worktree: cur, Common: common, Main: main},
				fmt.Errorf("%s: a worktree whose repository %s no longer exists (its main checkout %s moved or was removed): %w", cur, common, main, ErrNoMain)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return Checkout{}, nil
		}
		cur = parent
	}
}

// plainConfig reports that the common directory's config, read from the
// file, sets neither core.bare (a bare repository named .git has no main
// checkout) nor core.worktree (the main checkout is elsewhere): then its
// parent is the main checkout. Anything else is left to git.
func plainConfig(common string) bool {
	b, err := fsafe.ReadPath(filepath.Join(common, "config"), configLimit)
	if err != nil {
		return false
	}
	data := string(b)
	section := ""
	for _, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		switch {
		case section == "core" && k == "worktree":
			return false
		case section == "core" && k == "bare" && !strings.EqualFold(strings.TrimSpace(v), "false"):
			return false
		case strings.HasPrefix(section, "include"):
			return false // settings elsewhere: git knows
		}
	}
	return true
}

// configLimit bounds a clone's config file read here.
const configLimit = 1 << 20

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// OriginURL reads remote.origin.url from the clone's own config file,
// as `git config --get remote.origin.url` prints it, without starting
// git (a claim on a shared store names its project by it on every
// command). ok is false when the file does not say it plainly — no such
// key, an include, a quoted or continued value, an unusual layout — and
// git must be asked.
func OriginURL(dir string) (url string, ok bool) {
	l, err := Discover(dir)
	if err != nil {
		return "", false
	}
	b, err := fsafe.ReadPath(filepath.Join(l.CommonDir, "config"), configLimit)
	if err != nil {
		return "", false
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.TrimSpace(strings.Trim(line, "[] \t"))
			if strings.HasPrefix(strings.ToLower(section), "include") {
				return "", false // settings elsewhere: git knows
			}
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		if section != `remote "origin"` || !strings.EqualFold(strings.TrimSpace(k), "url") {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" || strings.ContainsAny(v, "\"\\;#") {
			return "", false
		}
		url = v // the last one wins, as git's --get does
	}
	return url, url != ""
}
