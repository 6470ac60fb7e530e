package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrNoTaskie is returned by Find when no ancestor holds .taskie/plans.
var ErrNoTaskie = errors.New("no .taskie/plans directory")

// Repo is a project that holds .taskie/.
type Repo struct {
	Root string // directory containing .taskie

	// resolved caches the symlink-free Root and plans directory, which
	// checkInside needs for every plan: plan choice looks at every plan on
	// every stop.
	resolveOnce                 sync.Once
	resolvedRoot, resolvedPlans string
	resolveErr                  error
}

// Find walks up from cwd to the first directory that has .taskie/plans.
// It only stats one path per level because the Stop hook calls it on
// every stop.
func Find(cwd string) (*Repo, error) {
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("resolve %q: %w", cwd, err)
	}
	start := dir
	for {
		fi, err := os.Stat(filepath.Join(dir, ".taskie", "plans"))
		if err == nil && fi.IsDir() {
			return &Repo{Root: dir}, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("%w in %s or any parent directory", ErrNoTaskie, start)
		}
		dir = parent
	}
}

// TaskieDir is Root/.taskie.
func (r *Repo) TaskieDir() string { return filepath.Join(r.Root, ".taskie") }

// PlansDir is Root/.taskie/plans.
func (r *Repo) PlansDir() string { return filepath.Join(r.Root, ".taskie", "plans") }

// PlanDir validates id and returns the plan directory path. A plan that
// resolves outside the repository is refused so that taskie never writes
// through a symlink into someone else's tree (docs/reliability.md). A missing directory is
// not an error: callers decide whether it must exist.
func (r *Repo) PlanDir(id string) (string, error) {
	if err := ValidID(id); err != nil {
		return "", err
	}
	dir := filepath.Join(r.PlansDir(), id)
	fi, err := os.Lstat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return dir, nil
		}
		return "", fmt.Errorf("plan directory %s: %w", dir, err)
	}
	if err := r.checkInside(dir, fi); err != nil {
		return "", err
	}
	return dir, nil
}

// checkInside refuses dir when its fully resolved path leaves the root.
// A plain directory (fi, from Lstat) resolves to the resolved plans
// directory plus its name, so only a symbolic link costs a full
// resolution.
func (r *Repo) checkInside(dir string, fi os.FileInfo) error {
	r.resolveOnce.Do(func() {
		if r.resolvedRoot, r.resolveErr = filepath.EvalSymlinks(r.Root); r.resolveErr != nil {
			r.resolveErr = fmt.Errorf("repository root %s: %w", r.Root, r.resolveErr)
			return
		}
		r.resolvedPlans, r.resolveErr = filepath.EvalSymlinks(r.PlansDir())
		if r.resolveErr != nil {
			r.resolveErr = fmt.Errorf("plans directory %s: %w", r.PlansDir(), r.resolveErr)
		}
	})
	if r.resolveErr != nil {
		return r.resolveErr
	}
	root := r.resolvedRoot
	var resolved string
	if fi.Mode().IsDir() && filepath.Dir(dir) == r.PlansDir() {
		resolved = filepath.Join(r.resolvedPlans, fi.Name())
	} else {
		var err error
		if resolved, err = filepath.EvalSymlinks(dir); err != nil {
			target, _ := os.Readlink(dir)
			return fmt.Errorf("plan directory %s points to %q, which cannot be resolved: %w", dir, target, err)
		}
	}
	if !within(root, resolved) {
		return fmt.Errorf("plan directory %s points to %s, outside the repository %s; refusing to use it", dir, resolved, root)
	}
	return nil
}

// within reports whether path is root or below it (both already resolved).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Plans lists plan ids: entries of PlansDir that are directories (or
// symlinks to directories) with valid names, sorted. Symlinks are listed
// even when they point outside; PlanDir refuses those when they are used.
func (r *Repo) Plans() ([]string, error) {
	entries, err := os.ReadDir(r.PlansDir())
	if err != nil {
		return nil, fmt.Errorf("list plans: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if ValidID(e.Name()) != nil {
			continue
		}
		if e.IsDir() || (e.Type()&os.ModeSymlink != 0 && isDir(filepath.Join(r.PlansDir(), e.Name()))) {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// MostRecent returns the plan with the newest mtime among its directory,
// state.json and tasks.md; the directory alone misses in-place edits.
// Ties go to the first id in sorted order. It returns "" when there are no
// plans.
func (r *Repo) MostRecent() (string, error) {
	ids, err := r.Plans()
	if err != nil {
		return "", err
	}
	best, bestTime := "", time.Time{}
	for _, id := range ids {
		t := r.Mtime(id)
		if best == "" || t.After(bestTime) {
			best, bestTime = id, t
		}
	}
	return best, nil
}

// Mtime is a plan's last modification: the newest of its directory,
// state.json and tasks.md.
func (r *Repo) Mtime(id string) time.Time {
	dir := filepath.Join(r.PlansDir(), id)
	var newest time.Time
	for _, p := range []string{dir, filepath.Join(dir, "state.json"), filepath.Join(dir, "tasks.md")} {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest
}
