package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// WorktreesName is a plan's record of its worktrees, in its coordination
// directory.
const WorktreesName = "worktrees.json"

// Worktree is a git worktree taskie made for a task or for the plan, or
// adopted when a task was claimed from it.
type Worktree struct {
	// Task is the task the worktree is for; 0 is the plan's own worktree.
	Task   domain.TaskID `json:"task,string,omitempty"`
	Path   string        `json:"path"`
	Branch string        `json:"branch,omitempty"`
	// BaseSHA is the commit the worktree started from.
	BaseSHA string `json:"base_sha"`
	// LastCommit is the worktree's HEAD when its task was last claimed
	// (granted or taken over): a HEAD that differs is a commit made since.
	LastCommit string    `json:"last_commit,omitempty"`
	Created    time.Time `json:"created"`
	// Adopted marks a worktree made outside taskie and recorded when its
	// task was claimed from it; taskie never removes its branch.
	Adopted bool `json:"adopted,omitempty"`
}

// Since returns the commit a new commit is measured against: the last
// claim's HEAD, else the base.
func (w Worktree) Since() string {
	if w.LastCommit != "" {
		return w.LastCommit
	}
	return w.BaseSHA
}

type worktreesDoc struct {
	Worktrees []Worktree `json:"worktrees"`
}

// Worktrees returns the plan's recorded worktrees, the plan's own first,
// then by task.
func (c *FileCoord) Worktrees(p PlanKey) ([]Worktree, error) {
	rel, err := c.rel(p, WorktreesName)
	if err != nil {
		return nil, err
	}
	data, err := c.root.ReadFileLimit(rel, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc worktreesDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: malformed worktree record: %v; fix or remove it (the worktrees themselves are untouched)", c.root.Path(rel), err)
	}
	return doc.Worktrees, nil
}

// UpdateWorktrees rewrites the plan's worktree record with what fn makes
// of it, under the plan's coordination lock.
func (c *FileCoord) UpdateWorktrees(ctx context.Context, p PlanKey, fn func(ws []Worktree, now time.Time) ([]Worktree, error)) error {
	return c.locked(ctx, p, func(now time.Time) error {
		ws, err := c.Worktrees(p)
		if err != nil {
			return err
		}
		ws, err = fn(ws, now)
		if err != nil {
			return err
		}
		slices.SortFunc(ws, func(a, b Worktree) int { return int(a.Task) - int(b.Task) })
		rel, _ := c.rel(p, WorktreesName)
		data, err := json.MarshalIndent(worktreesDoc{Worktrees: ws}, "", "  ")
		if err != nil {
			return err
		}
		return c.root.WriteFile(rel, append(data, '\n'), c.Durable)
	})
}

// FindWorktree returns the worktree recorded for task (0: the plan's).
func FindWorktree(ws []Worktree, task domain.TaskID) (Worktree, bool) {
	for _, w := range ws {
		if w.Task == task {
			return w, true
		}
	}
	return Worktree{}, false
}

// WorktreeAt returns the recorded worktree that holds dir.
func WorktreeAt(ws []Worktree, dir string) (Worktree, bool) {
	dir = filepath.Clean(dir)
	for _, w := range ws {
		if dir == w.Path || strings.HasPrefix(dir, w.Path+string(filepath.Separator)) {
			return w, true
		}
	}
	return Worktree{}, false
}
