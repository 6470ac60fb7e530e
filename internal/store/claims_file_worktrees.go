package store

import (
	"bytes"
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

// CheckoutsName is the log of the checkouts tasks were claimed from (one
// Checkout a line, the newest of a task standing). Records written before
// it are in worktrees.json's checkouts, read when the log has none.
const CheckoutsName = "checkouts.jsonl"

// maxCheckoutLog is the size past which the checkout log is compacted.
const maxCheckoutLog = 256 << 10

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

// Checkout is the HEAD of the checkout a task was claimed from when the
// task has no worktree of its own (a subagent working in the main
// checkout): the SubagentStop hook compares it with that checkout's HEAD
// to tell whether the task produced a commit. It is not a worktree taskie
// manages, so it is kept apart from them.
type Checkout struct {
	Task domain.TaskID `json:"task,string"`
	Path string        `json:"path"`
	// Head is the checkout's HEAD when the task was last claimed.
	Head    string    `json:"head"`
	Claimed time.Time `json:"claimed"`
}

type worktreesDoc struct {
	Worktrees []Worktree `json:"worktrees"`
	Checkouts []Checkout `json:"checkouts,omitempty"`
}

// readWorktrees reads the plan's worktree record; none is an empty one.
func (c *FileCoord) readWorktrees(p PlanKey) (worktreesDoc, error) {
	rel, err := c.rel(p, WorktreesName)
	if err != nil {
		return worktreesDoc{}, err
	}
	data, err := c.root.ReadFileLimit(rel, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return worktreesDoc{}, nil
	}
	if err != nil {
		return worktreesDoc{}, err
	}
	doc, ok := decodeWorktreesDoc(data)
	if ok {
		return doc, nil
	}
	doc = worktreesDoc{}
	if err := json.Unmarshal(data, &doc); err != nil {
		return worktreesDoc{}, fmt.Errorf("%s: malformed worktree record: %v; fix or remove it (the worktrees themselves are untouched)", c.root.Path(rel), err)
	}
	return doc, nil
}

// Worktrees returns the plan's recorded worktrees, the plan's own first,
// then by task.
func (c *FileCoord) Worktrees(p PlanKey) ([]Worktree, error) {
	doc, err := c.readWorktrees(p)
	return doc.Worktrees, err
}

// UpdateWorktrees rewrites the plan's worktree record with what fn makes
// of it, under the plan's coordination lock. fn sees the record as it is
// under the lock: a decision made from an earlier read must be checked
// again there (two claims may adopt one worktree at once).
func (c *FileCoord) UpdateWorktrees(ctx context.Context, p PlanKey, fn func(ws []Worktree, now time.Time) ([]Worktree, error)) error {
	return c.updateDoc(ctx, p, func(doc *worktreesDoc, now time.Time) error {
		ws, err := fn(doc.Worktrees, now)
		doc.Worktrees = ws
		return err
	})
}

// RecordCheckout records head as the HEAD of the checkout at path when
// task was claimed, replacing the task's previous record.
func (c *FileCoord) RecordCheckout(ctx context.Context, p PlanKey, task domain.TaskID, path, head string) error {
	var err error
	if lerr := c.Records(ctx, p, func(tx *CoordTx) { err = tx.RecordCheckout(task, path, head) }); lerr != nil {
		return lerr
	}
	return err
}

func (c *FileCoord) updateDoc(ctx context.Context, p PlanKey, fn func(doc *worktreesDoc, now time.Time) error) error {
	var err error
	if lerr := c.Records(ctx, p, func(tx *CoordTx) { err = tx.updateDoc(fn) }); lerr != nil {
		return lerr
	}
	return err
}

// ClaimBase says where to look for a task's new commit and since which
// commit: its worktree and the worktree's HEAD at the claim, else the
// checkout it was claimed from and that checkout's HEAD then. ok is false
// when neither is recorded.
func (c *FileCoord) ClaimBase(p PlanKey, task domain.TaskID) (path, since string, ok bool, err error) {
	doc, err := c.readWorktrees(p)
	if err != nil {
		return "", "", false, err
	}
	if w, found := FindWorktree(doc.Worktrees, task); found {
		return w.Path, w.Since(), true, nil
	}
	ks, err := c.readCheckouts(p)
	if err != nil {
		return "", "", false, err
	}
	for _, k := range ks {
		if k.Task == task {
			return k.Path, k.Head, true, nil
		}
	}
	for _, k := range doc.Checkouts {
		if k.Task == task {
			return k.Path, k.Head, true, nil
		}
	}
	return "", "", false, nil
}

// readCheckouts reads the checkout log: the newest record of each task,
// by task. A line that does not parse (torn by a crash) is skipped.
func (c *FileCoord) readCheckouts(p PlanKey) ([]Checkout, error) {
	rel, err := c.rel(p, CheckoutsName)
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
	newest := map[domain.TaskID]Checkout{}
	for line := range bytes.Lines(data) {
		var k Checkout
		if json.Unmarshal(line, &k) == nil && k.Task > 0 {
			newest[k.Task] = k
		}
	}
	out := make([]Checkout, 0, len(newest))
	for _, k := range newest {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Checkout) int { return int(a.Task) - int(b.Task) })
	return out, nil
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

// MarkClaimed is the update of the worktree record when w.Task is newly
// claimed (granted or taken over) with w's HEAD at head: the task's
// recorded worktree gets head as its last commit; otherwise w, a worktree
// to adopt, is added with head as its base and last commit — unless a
// record already holds its path (another task adopted it first, or taskie
// made it for another task), which leaves ws as it is and ok false. Run
// it under the lock (UpdateWorktrees): two claims made at once in one
// worktree must not both adopt it.
func MarkClaimed(ws []Worktree, w Worktree, head string, now time.Time) (out []Worktree, ok bool) {
	for i := range ws {
		if ws[i].Task == w.Task {
			ws[i].LastCommit = head
			return ws, true
		}
	}
	if _, taken := WorktreeAt(ws, w.Path); taken {
		return ws, false
	}
	w.BaseSHA, w.LastCommit, w.Created = head, head, now
	return append(ws, w), true
}
