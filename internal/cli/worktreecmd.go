package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

// worktreeView is one worktree on stdout with --json.
type worktreeView struct {
	Task       string    `json:"task,omitempty"` // "" for the plan's own worktree
	Path       string    `json:"path"`
	Branch     string    `json:"branch,omitempty"`
	BaseSHA    string    `json:"base_sha"`
	LastCommit string    `json:"last_commit,omitempty"`
	Head       string    `json:"head,omitempty"`
	Commits    int       `json:"commits"`     // commits on HEAD since base_sha
	NewCommit  bool      `json:"new_commit"`  // HEAD differs from last_commit (the last claim's HEAD)
	Exists     bool      `json:"exists"`      // the directory is still there
	Dirty      int       `json:"dirty_files"` // changed or untracked files
	Claim      string    `json:"claimed_by,omitempty"`
	Created    time.Time `json:"created"`
	Adopted    bool      `json:"adopted,omitempty"`
}

const worktreeLong = `One git worktree per task (or one for the plan), so that agents working at
the same time never share a checkout.

Layout: the worktree of task T of plan P is a sibling of the main checkout,
<parent>/<repo>-<P>-task-<T>, on a new branch taskie/<P>/task-<T>; the plan's
own worktree is <parent>/<repo>-<P> on taskie/<P>/plan. --path chooses another
directory. Each starts at HEAD of the checkout taskie runs in (--base another
commit).

The record — path, branch, base_sha, and last_commit (HEAD when the task was
last claimed) — lives beside the claims in the git common directory, where
every worktree sees it; the plan's own worktree is also recorded in
state.json (worktree, base_sha). A HEAD that differs from last_commit is a
commit the task produced since its claim: ` + "`taskie worktree list`" + ` shows it and the
SubagentStop hook checks it.`

func newWorktreeCmd(s *Streams, g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "worktree",
		Short: "Git worktrees per task: add, list, remove",
		Long:  worktreeLong,
		RunE:  unknownSubcommand, // help, or the nearest subcommand
	}
	c.AddCommand(newWorktreeAddCmd(s, g), newWorktreeListCmd(s, g), newWorktreeRemoveCmd(s, g))
	return c
}

// worktreeAddOpts are the options of `taskie worktree add`.
type worktreeAddOpts struct {
	s                *Streams
	g                *globals
	task, path, base string
	as               string
	asJSON, force    bool
}

func newWorktreeAddCmd(s *Streams, g *globals) *cobra.Command {
	return newWorktreeAddCmdWith(s, g, runWorktreeAdd)
}

func newWorktreeAddCmdWith(s *Streams, g *globals, run func(*worktreeAddOpts) error) *cobra.Command {
	o := &worktreeAddOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "add [task] [--path DIR] [--base REF]",
		Short: "Create the worktree of a task (or of the plan) on its own branch",
		Long: worktreeLong + `

stdout: the worktree's path.`,
		Example: "  taskie worktree add 3\n  taskie worktree add 4 --path ../wt-4 --base main\n  taskie worktree add",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = firstArg(args)
			return run(o)
		},
	}
	c.Flags().StringVar(&o.path, "path", "", "create the worktree in `dir`")
	c.Flags().StringVar(&o.base, "base", "HEAD", "start the branch at `ref`")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the record as JSON")
	addGuardFlags(c, &o.as, &o.force)
	return c
}

// worktreeListOpts are the options of `taskie worktree list`.
type worktreeListOpts struct {
	s      *Streams
	g      *globals
	asJSON bool
}

func newWorktreeListCmd(s *Streams, g *globals) *cobra.Command {
	return newWorktreeListCmdWith(s, g, runWorktreeList)
}

func newWorktreeListCmdWith(s *Streams, g *globals, run func(*worktreeListOpts) error) *cobra.Command {
	o := &worktreeListOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the plan's worktrees: branch, base, HEAD, new commits, claim",
		Long: `List the worktrees recorded for the plan. "commits" counts the commits on
HEAD since base_sha; "new" says whether HEAD moved since the task was last
claimed (last_commit), i.e. whether the task produced a commit.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

// worktreeRemoveOpts are the options of `taskie worktree remove`.
type worktreeRemoveOpts struct {
	s      *Streams
	g      *globals
	task   string
	force  bool
	asJSON bool
}

// worktreeRemovedView is `taskie worktree remove --json`: the worktree as
// `taskie worktree list --json` showed it just before it was removed
// (exists false: only its record was left), and the branch that is kept.
type worktreeRemovedView struct {
	worktreeView
	Removed    bool   `json:"removed"`
	BranchKept string `json:"branch_kept,omitempty"`
}

func newWorktreeRemoveCmd(s *Streams, g *globals) *cobra.Command {
	return newWorktreeRemoveCmdWith(s, g, runWorktreeRemove)
}

func newWorktreeRemoveCmdWith(s *Streams, g *globals, run func(*worktreeRemoveOpts) error) *cobra.Command {
	o := &worktreeRemoveOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "remove [task] [--force] [--json]",
		Short: "Remove a task's (or the plan's) worktree; its branch is kept",
		Long: `Remove the worktree of a task (or the plan's, without a task) and its record.
A worktree with changed or untracked files is refused unless --force. The
branch stays, with its commits: delete it once merged.

--json prints the removed worktree as ` + "`taskie worktree list --json`" + ` showed it
just before, with "removed": true and "branch_kept".`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.force, "force", false, "remove it even with uncommitted changes")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the removed worktree as JSON")
	return c
}

// worktreeTask parses the optional task argument: 0 is the plan.
func (cp *coordPlan) worktreeTask(arg string) (domain.TaskID, error) {
	if arg == "" {
		return 0, nil
	}
	task, err := cp.p.TaskID(arg)
	if err != nil {
		return 0, usageErr(err, "")
	}
	return task, nil
}

// needGit refuses the worktree commands outside git.
func (cp *coordPlan) needGit() error {
	if cp.files.Shared() {
		return nil
	}
	return usageErr(fmt.Errorf("%s is not in a git repository: worktrees need git", cp.p.Repo.Root), "`git init` and commit first")
}

func what(task domain.TaskID) string {
	if task == 0 {
		return "the plan"
	}
	return "task " + task.String()
}

// layout is the default path and the branch of a worktree.
func layout(mainTop, planID string, task domain.TaskID) (path, branch string) {
	name := filepath.Base(mainTop) + "-" + planID
	branch = "taskie/" + planID + "/plan"
	if task != 0 {
		name += "-task-" + task.String()
		branch = "taskie/" + planID + "/task-" + task.String()
	}
	return filepath.Join(filepath.Dir(mainTop), name), branch
}

func runWorktreeAdd(o *worktreeAddOpts) error {
	s, arg := o.s, o.task
	cp, err := o.g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	if err := cp.needGit(); err != nil {
		return err
	}
	task, err := cp.worktreeTask(arg)
	if err != nil {
		return err
	}
	var guard *claimGuard
	if task != 0 {
		actor, err := optionalAgent(o.as)
		if err != nil {
			return err
		}
		if guard, err = cp.guardWrite(s, task, actor, 0, o.force, "worktree add"); err != nil {
			return err
		}
	}
	ws, err := cp.files.Worktrees(cp.key)
	if err != nil {
		return err
	}
	if w, ok := store.FindWorktree(ws, task); ok {
		return &exitError{code: ExitProblems, err: fmt.Errorf("%s already has a worktree: %s", what(task), w.Path),
			hint: "`taskie worktree remove " + arg + "` first to make a new one"}
	}
	repo := cp.p.Repo.Root
	mainTop, err := gitwt.MainWorktree(repo)
	if err != nil {
		return err
	}
	path, branch := layout(mainTop, cp.p.ID, task)
	if o.path != "" {
		if path, err = filepath.Abs(o.path); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(path); err == nil {
		return usageErr(fmt.Errorf("%s already exists", path), "choose another directory with --path")
	}
	if gitwt.BranchExists(repo, branch) {
		return usageErr(fmt.Errorf("branch %s already exists", branch),
			"merge or delete it first (`git branch -d "+branch+"`), or keep working in it with `git worktree add <dir> "+branch+"`")
	}
	base, err := gitwt.Commit(repo, o.base)
	if err != nil {
		return usageErr(err, "--base takes a branch, a tag or a commit id")
	}
	if err := gitwt.Add(repo, path, branch, base); err != nil {
		return err
	}
	var rec store.Worktree
	err = cp.files.UpdateWorktrees(cp.ctx, cp.key, func(ws []store.Worktree, now time.Time) ([]store.Worktree, error) {
		rec = store.Worktree{Task: task, Path: path, Branch: branch, BaseSHA: base, LastCommit: base, Created: now}
		return append(ws, rec), nil
	})
	if err != nil {
		return err
	}
	guard.done()
	if task == 0 {
		if err := cp.setPlanWorktree(path, base); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.Err, "%s: worktree %s on branch %s at %s\n", what(task), path, branch, shortSHA(base))
	if o.asJSON {
		return writeJSON(s.Out, cp.view(rec, nil))
	}
	fmt.Fprintln(s.Out, path)
	return nil
}

// setPlanWorktree records the plan's own worktree in state.json (worktree,
// base_sha; both cleared with ""), through the plan store.
func (cp *coordPlan) setPlanWorktree(path, base string) error {
	reason := "worktree add"
	if path == "" {
		reason = "worktree remove"
	}
	_, _, err := changeWith(cp.p, reason, true, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
		n := cur.Clone()
		n.Worktree, n.BaseSHA = path, base
		return store.Change{State: n, Kind: events.FieldSet, Meta: events.Meta(events.FieldSetMeta{Field: "worktree", Value: path})}, nil
	})
	return err
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func runWorktreeList(o *worktreeListOpts) error {
	s := o.s
	cp, err := o.g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	ws, err := cp.files.Worktrees(cp.key)
	if err != nil {
		return err
	}
	claims, err := cp.c.Claims(cp.ctx, cp.key)
	if err != nil {
		return err
	}
	views := make([]worktreeView, len(ws))
	for i, w := range ws {
		views[i] = cp.view(w, claims)
	}
	if o.asJSON {
		return writeJSON(s.Out, views)
	}
	if len(views) == 0 {
		fmt.Fprintf(s.Err, "plan %s: no worktree (`taskie worktree add <task>` makes one)\n", cp.p.ID)
	}
	return printWorktrees(s, views)
}

// view inspects a recorded worktree: HEAD, commits since base, changes,
// and the live claim on its task.
func (cp *coordPlan) view(w store.Worktree, claims []parallel.Claim) worktreeView {
	v := worktreeView{Path: w.Path, Branch: w.Branch, BaseSHA: w.BaseSHA, LastCommit: w.LastCommit,
		Created: w.Created, Adopted: w.Adopted}
	if w.Task != 0 {
		v.Task = w.Task.String()
	}
	if fi, err := os.Stat(w.Path); err == nil && fi.IsDir() {
		v.Exists = true
		v.Head, _ = gitwt.Head(w.Path)
		v.Commits, _ = gitwt.CommitsSince(w.Path, w.BaseSHA)
		dirty, _ := gitwt.Dirty(w.Path)
		v.Dirty = len(dirty)
	}
	v.NewCommit = v.Head != "" && v.Head != w.Since()
	now, _ := cp.c.Now(cp.ctx)
	for _, c := range claims {
		if c.Task == w.Task && w.Task != 0 && c.Live(now) {
			v.Claim = c.Agent
		}
	}
	return v
}

func printWorktrees(s *Streams, views []worktreeView) error {
	t := table{cols: []string{"task", "path", "branch", "base_sha", "last_commit", "head", "commits", "new_commit", "exists",
		"dirty_files", "claimed_by", "created", "adopted"},
		heads: []string{"TASK", "PATH", "BRANCH", "BASE", "HEAD", "COMMITS", "NEW", "CLAIMED BY"},
		paint: func(p palette, _, col int, cell string) string {
			if col == 4 && cell == "(missing)" {
				return p.Red(cell)
			}
			return cell
		}}
	return t.print(s, len(views), func(i int, tty bool) []string {
		v := views[i]
		if !tty {
			return []string{orNone(v.Task), v.Path, orNone(v.Branch), v.BaseSHA, orNone(v.LastCommit), orNone(v.Head),
				strconv.Itoa(v.Commits), strconv.FormatBool(v.NewCommit), strconv.FormatBool(v.Exists), strconv.Itoa(v.Dirty),
				orNone(v.Claim), rfc3339(v.Created), strconv.FormatBool(v.Adopted)}
		}
		task, head, claim, dirty := v.Task, shortSHA(v.Head), orNone(v.Claim), ""
		if task == "" {
			task = "plan"
		}
		if !v.Exists {
			head = "(missing)"
		}
		if v.Dirty > 0 {
			dirty = fmt.Sprintf(" +%d changed", v.Dirty)
		}
		return []string{task, v.Path, v.Branch, shortSHA(v.BaseSHA), head, strconv.Itoa(v.Commits) + dirty, yesNo(v.NewCommit), claim}
	})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func runWorktreeRemove(o *worktreeRemoveOpts) error {
	s := o.s
	cp, err := o.g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	if err := cp.needGit(); err != nil {
		return err
	}
	task, err := cp.worktreeTask(o.task)
	if err != nil {
		return err
	}
	ws, err := cp.files.Worktrees(cp.key)
	if err != nil {
		return err
	}
	w, ok := store.FindWorktree(ws, task)
	if !ok {
		return usageErr(fmt.Errorf("%s has no worktree recorded", what(task)), "`taskie worktree list` shows the recorded ones")
	}
	var removed worktreeRemovedView // with --json: the worktree before it goes
	if o.asJSON {
		claims, err := cp.c.Claims(cp.ctx, cp.key)
		if err != nil {
			return err
		}
		removed = worktreeRemovedView{worktreeView: cp.view(w, claims), Removed: true, BranchKept: w.Branch}
	}
	if _, err := os.Stat(w.Path); err == nil {
		if err := removeWorktree(cp, w, o.force); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	err = cp.files.UpdateWorktrees(cp.ctx, cp.key, func(ws []store.Worktree, _ time.Time) ([]store.Worktree, error) {
		out := ws[:0]
		for _, x := range ws {
			if x.Task != task {
				out = append(out, x)
			}
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	if task == 0 {
		if err := cp.setPlanWorktree("", ""); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.Err, "%s: worktree %s removed", what(task), w.Path)
	if w.Branch != "" {
		fmt.Fprintf(s.Err, "; branch %s kept (`git branch -d %s` once merged)", w.Branch, w.Branch)
	}
	fmt.Fprintln(s.Err)
	if o.asJSON {
		return writeJSON(s.Out, removed)
	}
	return nil
}

// removeWorktree runs git worktree remove, refusing a worktree with
// changes unless force.
func removeWorktree(cp *coordPlan, w store.Worktree, force bool) error {
	dirty, err := gitwt.Dirty(w.Path)
	if err != nil {
		return err
	}
	if len(dirty) > 0 && !force {
		shown := dirty
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("… %d more", len(dirty)-5))
		}
		return &exitError{code: ExitProblems,
			err:  fmt.Errorf("worktree %s has uncommitted changes:\n  %s", w.Path, strings.Join(shown, "\n  ")),
			hint: "commit them, or remove it anyway with --force (the changes are lost)"}
	}
	return gitwt.Remove(cp.p.Repo.Root, w.Path, force || len(dirty) > 0)
}
