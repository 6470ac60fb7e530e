package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/plan"
)

// Location is the project a command or a hook acts on, found from its
// working directory.
type Location struct {
	Repo *plan.Repo
	// Worktree is the linked worktree the command runs in when Repo is the
	// main checkout's project rather than the worktree's own (docs/parallel.md,
	// "Worktrees"); "" otherwise.
	Worktree string
	// Main is that worktree's main checkout.
	Main string
}

// Notice is the line a command prints once when it acts on the main
// checkout's plan from a worktree; "" when it acts where it runs.
func (l Location) Notice() string {
	if l.Worktree == "" {
		return ""
	}
	return fmt.Sprintf("acting on the plan in %s (this is a worktree of it)", l.Repo.Root)
}

// NoMainError refuses a worktree whose plan would be a copy: its clone's
// main checkout cannot be found (a bare repository, a main checkout moved
// or removed), or has no plans while the worktree carries its own.
type NoMainError struct {
	Worktree string
	Main     string // the main checkout that was looked for, "" for a bare repository
	Err      error
}

func (e *NoMainError) Error() string { return e.Err.Error() }
func (e *NoMainError) Unwrap() error { return e.Err }

// Locate finds the project for cwd. In a linked worktree of a git clone
// (`taskie worktree add`, `git worktree add`) it is the main checkout's,
// found from the same place relative to the checkout's root, so every
// worktree reads and writes one plan: a branch that carries its own copy of
// .taskie/plans is not used. A worktree whose main checkout cannot be
// found, or holds no plans while the worktree does, is refused rather than
// acted on as a copy. A .taskie above the worktree (the worktree is not
// its root) is used as before.
func Locate(cwd string) (Location, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return Location{}, fmt.Errorf("resolve %q: %w", cwd, err)
	}
	co, cerr := gitwt.MainCheckout(abs)
	if !co.Linked {
		r, err := plan.Find(abs)
		if errors.Is(err, plan.ErrNoTaskie) {
			return Location{}, fmt.Errorf("%s: %w here or above", cwd, plan.ErrNoTaskie)
		}
		return Location{Repo: r}, err
	}
	own, ownErr := plan.Find(abs)
	ownCopy := ownErr == nil && inside(co.Worktree, own.Root)
	if cerr != nil {
		if ownErr != nil || !ownCopy {
			if ownErr != nil {
				return Location{}, fmt.Errorf("%s: %w here or above", cwd, plan.ErrNoTaskie)
			}
			return Location{Repo: own}, nil
		}
		if !errors.Is(cerr, gitwt.ErrNoMain) {
			return Location{}, cerr
		}
		return Location{}, &NoMainError{Worktree: co.Worktree, Main: co.Main, Err: cerr}
	}
	rel, err := filepath.Rel(co.Worktree, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = "."
	}
	r, err := plan.Find(filepath.Join(co.Main, rel))
	if err == nil {
		return Location{Repo: r, Worktree: co.Worktree, Main: co.Main}, nil
	}
	if !errors.Is(err, plan.ErrNoTaskie) {
		return Location{}, err
	}
	if ownCopy {
		return Location{}, &NoMainError{Worktree: co.Worktree, Main: co.Main,
			Err: fmt.Errorf("%s: a worktree of %s, which has no .taskie/plans: the worktree's own copy of the plan is not used", co.Worktree, co.Main)}
	}
	if ownErr == nil {
		return Location{Repo: own}, nil
	}
	return Location{Main: co.Main}, fmt.Errorf("%s: %w here or above, nor in its main checkout %s", cwd, plan.ErrNoTaskie, co.Main)
}

// inside reports whether path is root or below it.
func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
