package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/taskie-dev/taskie/internal/continuity"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

func newTaskCmd(s *Streams, g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "task",
		Short: "A task's session continuity, status and lifecycle",
		Long: `Keep a task's session continuity in its task-<T>.md: a Progress
Log entry per session, the acceptance criteria checkboxes, and the Chain Output
that the tasks depending on it receive. ` + "`taskie context`" + ` shows it all.

Move a task through its lifecycle (taskie help lifecycle): move, fail, retry, rollback,
skip, abandon, escalate, resolve; ` + "`taskie query`" + ` shows where tasks stand.`,
		Args: cobra.ArbitraryArgs,
		RunE: unknownSubcommand,
	}
	c.AddCommand(newTaskNoteCmd(s, g), newTaskCheckCmd(s, g), newTaskOutputCmd(s, g), newTaskCriteriaCmd(s, g), newTaskStatusCmd(s, g))
	c.AddCommand(newTaskResultCmd(s, g))
	c.AddCommand(newTaskAddCmd(s, g), newTaskListCmd(s, g), newTaskShowCmd(s, g))
	c.AddCommand(newTaskMoveCmds(s, g)...)
	return c
}

// openTask opens the plan and checks a user-given task id.
func (g *globals) openTask(arg string) (*store.Plan, domain.TaskID, error) {
	p, err := g.openPlan("")
	if err != nil {
		return nil, 0, err
	}
	task, err := p.TaskID(arg)
	if err != nil {
		return nil, 0, usageErr(err, "")
	}
	return p, task, nil
}

// taskNoteOpts are the options of `taskie task note`.
type taskNoteOpts struct {
	s                 *Streams
	g                 *globals
	task              string
	did, issues, next string
	as                string
	asJSON, force     bool
}

func newTaskNoteCmd(s *Streams, g *globals) *cobra.Command {
	return newTaskNoteCmdWith(s, g, runTaskNote)
}

func newTaskNoteCmdWith(s *Streams, g *globals, run func(*taskNoteOpts) error) *cobra.Command {
	o := &taskNoteOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "note <task> --did TEXT [--issues TEXT] [--next TEXT]",
		Short: "Add this session's entry to a task's Progress Log",
		Long: `Append "### Session N — <time>" with Did / Issues / Next to the Progress Log of
task-<T>.md (the section is created when missing) and a PROGRESS event to
events.jsonl. Past 50 KB the file draws a warning; at 75 KB all but the last 5
sessions move to .taskie/archive/<plan>/task-<T>.md, leaving a summary entry.`,
		Example: `  taskie task note 3 --did "parser and its tests" --issues "none" --next "criterion 2: errors"`,
		Args:    exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.did, "did", "", "what this session finished (required)")
	c.Flags().StringVar(&o.issues, "issues", "", "what broke or is unclear")
	c.Flags().StringVar(&o.next, "next", "", "the next concrete step")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the entry recorded as JSON")
	addGuardFlags(c, &o.as, &o.force)
	return c
}

func runTaskNote(o *taskNoteOpts) error {
	if strings.TrimSpace(o.did) == "" {
		return usageErr(errors.New("--did is required: say what this session did"),
			`usage: taskie task note <task> --did "…" [--issues "…"] [--next "…"]`)
	}
	p, task, err := o.g.openTask(o.task)
	if err != nil {
		return err
	}
	guard, err := guardPlanWrite(o.s, p, task, o.as, o.force, "task note")
	if err != nil {
		return err
	}
	defer guard.close()
	var res continuity.NoteResult
	// Claims the write releases wait for the store's lock to go (Hold).
	err = p.Hold(func() error {
		return guard.fenced(func() error {
			var err error
			if res, err = continuity.Note(p, task, continuity.Entry{Did: o.did, Issues: o.issues, Next: o.next}); err != nil {
				return usageErr(err, "")
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	guard.done()
	for _, w := range res.Warnings {
		fmt.Fprintf(o.s.Err, "taskie: warning: %s\n", w)
	}
	if o.asJSON {
		if res.Warnings == nil {
			res.Warnings = []string{}
		}
		return writeJSON(o.s.Out, map[string]any{"plan": p.ID, "task": task.String(), "session": res.Session,
			"file": res.Path, "bytes": res.Size, "archive": res.Archive, "warnings": res.Warnings})
	}
	fmt.Fprintf(o.s.Err, "task %s: session %d recorded in %s\n", task, res.Session, res.Path)
	return nil
}

// taskCheckOpts are the options of `taskie task check`.
type taskCheckOpts struct {
	s       *Streams
	g       *globals
	task, n string
	uncheck bool
	asJSON  bool
}

func newTaskCheckCmd(s *Streams, g *globals) *cobra.Command {
	return newTaskCheckCmdWith(s, g, runTaskCheck)
}

func newTaskCheckCmdWith(s *Streams, g *globals, run func(*taskCheckOpts) error) *cobra.Command {
	o := &taskCheckOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "check <task> <n>",
		Short: "Check off acceptance criterion n of a task (--uncheck to undo)",
		Long: `Check off the n-th acceptance criterion (1-based, counted in the Acceptance
Criteria section of task-<T>.md, or among all checkboxes of the file when it has
no such section). Check a criterion only once the test that proves it passes.
` + "`taskie task criteria <task>`" + ` lists the numbers.`,
		Args: exactArgs(2, "a task id and a criterion number"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task, o.n = args[0], args[1]
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.uncheck, "uncheck", false, "uncheck the criterion instead")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the task's criteria afterwards as JSON")
	return c
}

func runTaskCheck(o *taskCheckOpts) error {
	done := !o.uncheck
	p, task, err := o.g.openTask(o.task)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSpace(o.n))
	if err != nil || n < 1 {
		return usageErr(fmt.Errorf("criterion %q is not a positive integer", o.n), criteriaHint(p, task))
	}
	c, changed, err := continuity.Check(p, task, n, done)
	var re *continuity.RangeError
	switch {
	case errors.As(err, &re):
		return usageErr(fmt.Errorf("task %s: %v", task, err), criteriaHint(p, task))
	case err != nil:
		return usageErr(err, "")
	}
	if o.asJSON {
		return printCriteriaJSON(o.s, p, task)
	}
	what := "checked"
	if !done {
		what = "unchecked"
	}
	if !changed {
		what = "already " + what
	}
	fmt.Fprintf(o.s.Err, "task %s: criterion %d %s: %s\n", task, n, what, c.Text)
	if done && changed {
		if cs, _, err := continuity.Criteria(p, task); err == nil && allDone(cs) {
			fmt.Fprintf(o.s.Err, "all %d criteria of task %s are checked: write its chain output (`taskie task output %s < output.md`)\n", len(cs), task, task)
		}
	}
	return nil
}

// criteriaHint lists a task's criteria for an error's hint line.
func criteriaHint(p *store.Plan, task domain.TaskID) string {
	cs, _, err := continuity.Criteria(p, task)
	switch {
	case err != nil:
		return ""
	case len(cs) == 0:
		return fmt.Sprintf("task %s has no acceptance criteria: add `- [ ]` items under `## Acceptance Criteria` in its task file", task)
	}
	return fmt.Sprintf("criteria of task %s:\n%s", task, strings.TrimRight(continuity.FormatCriteria(cs), "\n"))
}

func allDone(cs []continuity.Criterion) bool {
	for _, c := range cs {
		if !c.Done {
			return false
		}
	}
	return len(cs) > 0
}

// taskOutputOpts are the options of `taskie task output`.
type taskOutputOpts struct {
	s          *Streams
	g          *globals
	task, file string
	asJSON     bool
}

func newTaskOutputCmd(s *Streams, g *globals) *cobra.Command {
	return newTaskOutputCmdWith(s, g, runTaskOutput)
}

func newTaskOutputCmdWith(s *Streams, g *globals, run func(*taskOutputOpts) error) *cobra.Command {
	o := &taskOutputOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "output <task> [--file F]",
		Short: "Set a task's Chain Output from stdin or a file",
		Long: `Replace the Chain Output section of task-<T>.md with the text read from stdin
(or --file): "### Summary" and "### For Downstream Tasks" parts, or plain text
that all becomes the summary. Tasks that depend on this one see it as their
chain input in ` + "`taskie context`" + `.`,
		Example: "  taskie task output 3 < output.md\n  taskie task output 3 --file output.md",
		Args:    exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.file, "file", "", "read the chain output from `F` (- for stdin)")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the chain output written as JSON")
	return c
}

func runTaskOutput(o *taskOutputOpts) error {
	p, task, err := o.g.openTask(o.task)
	if err != nil {
		return err
	}
	file := o.file
	if file != "" && file != "-" && !filepath.IsAbs(file) && o.g.dir != "" {
		file = filepath.Join(o.g.dir, file) // relative to -C, as with git -C
	}
	data, err := readInput(o.s, file)
	if err != nil {
		return err
	}
	out, err := continuity.ParseChainInput(data)
	if err != nil {
		return usageErr(fmt.Errorf("task %s: %w", task, err), fmt.Sprintf("pass the text on stdin (`taskie task output %s < output.md`) or with --file", task))
	}
	if err := continuity.SetOutput(p, task, out); err != nil {
		return usageErr(err, "")
	}
	if o.asJSON {
		return writeJSON(o.s.Out, map[string]any{"plan": p.ID, "task": task.String(), "chain_output": out})
	}
	fmt.Fprintf(o.s.Err, "task %s: chain output written\n", task)
	return nil
}

// readInput reads a file, or stdin for "" and "-"; it refuses to wait on a
// terminal.
func readInput(s *Streams, file string) ([]byte, error) {
	if file != "" && file != "-" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, usageErr(err, "")
		}
		return data, nil
	}
	if f, ok := s.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return nil, usageErr(errors.New("stdin is a terminal"), "pipe the text in, or pass --file")
	}
	return io.ReadAll(s.In)
}

type criteriaView struct {
	Plan     string                 `json:"plan"`
	Task     domain.TaskID          `json:"task,string"` // written "3"
	Section  bool                   `json:"section"`     // false: counted among all checkboxes of the file
	Criteria []continuity.Criterion `json:"criteria"`
}

// taskCriteriaOpts are the options of `taskie task criteria`.
type taskCriteriaOpts struct {
	s      *Streams
	g      *globals
	task   string
	asJSON bool
}

func newTaskCriteriaCmd(s *Streams, g *globals) *cobra.Command {
	return newTaskCriteriaCmdWith(s, g, runTaskCriteria)
}

func newTaskCriteriaCmdWith(s *Streams, g *globals, run func(*taskCriteriaOpts) error) *cobra.Command {
	o := &taskCriteriaOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "criteria <task>",
		Short: "List a task's acceptance criteria with their numbers",
		Args:  exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func runTaskCriteria(o *taskCriteriaOpts) error {
	p, task, err := o.g.openTask(o.task)
	if err != nil {
		return err
	}
	if o.asJSON {
		return printCriteriaJSON(o.s, p, task)
	}
	cs, _, err := continuity.Criteria(p, task)
	if err != nil {
		return usageErr(err, "")
	}
	if len(cs) == 0 {
		fmt.Fprintf(o.s.Err, "task %s has no acceptance criteria yet: add `- [ ]` items under `## Acceptance Criteria` in %s\n", task, plan.TaskFile(int(task)))
	}
	fmt.Fprint(o.s.Out, continuity.FormatCriteria(cs))
	return nil
}

// printCriteriaJSON prints a task's criteria as `taskie task criteria
// --json` does.
func printCriteriaJSON(s *Streams, p *store.Plan, task domain.TaskID) error {
	p.Reload()
	cs, section, err := continuity.Criteria(p, task)
	if err != nil {
		return usageErr(err, "")
	}
	if cs == nil {
		cs = []continuity.Criterion{}
	}
	return writeJSON(s.Out, criteriaView{Plan: p.ID, Task: task, Section: section, Criteria: cs})
}

// taskStatusOpts are the options of `taskie task status`.
type taskStatusOpts struct {
	s             *Streams
	g             *globals
	task, status  string
	actor, reason string
	as            string
	asJSON        bool
	force         bool
}

func newTaskStatusCmd(s *Streams, g *globals) *cobra.Command {
	return newTaskStatusCmdWith(s, g, runTaskStatus)
}

func newTaskStatusCmdWith(s *Streams, g *globals, run func(*taskStatusOpts) error) *cobra.Command {
	o := &taskStatusOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "status <task> <status>",
		Short: "Set a task's Status (pending, in-progress, done, cancelled, postponed, blocked): a requested lifecycle move",
		Long: `Set one task's Status in tasks.md, keeping every other cell, column and line as
written. The Status renders the task's lifecycle state (taskie help lifecycle),
so a status is a requested move: done asks for completed, in-progress for
in_progress (both forward along the chain, one move per state), pending and
postponed for pending, cancelled for abandoned (a human's), blocked for an
escalation. A move the lifecycle refuses is refused with the moves legal now.
A task the lifecycle has not seen yet takes pending, postponed, done and
cancelled as the cell alone, as always.

The review loop marks a task done itself when its commit is seen; this is for
standalone work and for cancelling or postponing tasks.`,
		Example: "  taskie task status 3 done\n  taskie task status 4 cancelled --actor human --reason \"no longer needed\"",
		Args:    exactArgs(2, "a task id and a status"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task, o.status = args[0], args[1]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.actor, "actor", string(lifecycle.ActorAgent), "who asks for the move: agent, hook, cto, human or system (declared, not checked)")
	c.Flags().StringVar(&o.reason, "reason", "", "why, for the event log")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the task's resulting status as JSON")
	addGuardFlags(c, &o.as, &o.force)
	return c
}

func runTaskStatus(o *taskStatusOpts) error {
	actor, err := lifecycle.ParseActor(o.actor)
	if err != nil {
		return usageErr(err, "")
	}
	p, task, err := o.g.openTask(o.task)
	if err != nil {
		return err
	}
	status := strings.ToLower(strings.TrimSpace(o.status))
	if !plan.KnownStatus(status) {
		return usageErr(fmt.Errorf("unknown status %q%s", o.status, didYouMean(status, taskStatuses)), "statuses: "+strings.Join(taskStatuses, ", "))
	}
	guard, err := guardPlanWrite(o.s, p, task, o.as, o.force, "task status")
	if err != nil {
		return err
	}
	defer guard.close()
	var evs []events.Event
	var rec *lifecycle.Task
	// Claims the write releases wait for the store's lock to go (Hold).
	err = p.Hold(func() error {
		return guard.fenced(func() error {
			return updateTask(o.s, p, task, func(snap *store.Snapshot) (store.Change, error) {
				c := store.Change{Actor: "cli", Reason: "task status", Kind: events.TaskStatus, Task: task,
					Statuses: map[domain.TaskID]string{task: status}, Meta: events.Meta(guard.forced())}
				n, effs, t, err := requestStatus(snap, task, status, actor, o.reason, o.s.Clock.Now())
				if err != nil || n == nil {
					return c, err
				}
				c.State, c.Events = n, lifecycle.Events(effs)
				c.Reason = fmt.Sprintf("task status %s %s by %s", task, status, actor)
				evs, rec = c.Events, &t
				return c, nil
			})
		})
	})
	if err != nil {
		return moveErr(p, err)
	}
	guard.done()
	for _, e := range evs {
		fmt.Fprintf(o.s.Err, "%s\n", eventMessage(e))
	}
	if o.asJSON {
		v := map[string]any{"plan": p.ID, "task": task.String(), "status": status}
		if rec != nil {
			v["lifecycle"] = string(rec.State)
		}
		return writeJSON(o.s.Out, v)
	}
	fmt.Fprintf(o.s.Err, "task %s: %s\n", task, status)
	return nil
}

// requestStatus decides, on a snapshot taken under the plan lock, the
// lifecycle move a Status asks for (lifecycle.Request): the new state.json
// and the effects, nil when the status is the cell alone — no state.json,
// a task without a record given a status that needs none, or a record the
// status renders already. A task without a record starts in pending.
func requestStatus(snap *store.Snapshot, task domain.TaskID, status string, actor lifecycle.Actor, reason string, now time.Time) (*state.State, []lifecycle.Effect, lifecycle.Task, error) {
	if snap.State == nil {
		return nil, nil, lifecycle.Task{}, nil // no state.json: the cell is all there is
	}
	tasks, err := taskrec.Records(snap.State)
	if err != nil {
		return nil, nil, lifecycle.Task{}, &state.FieldError{Path: snap.Path(state.FileName), Field: "lifecycle", Msg: err.Error()}
	}
	t, ok := tasks[task]
	if !ok && lifecycle.CellOnly(status) {
		return nil, nil, lifecycle.Task{}, nil
	}
	var effs []lifecycle.Effect
	if !ok {
		if t, effs, err = lifecycle.New(task, actor, now); err != nil {
			return nil, nil, lifecycle.Task{}, err
		}
	}
	next, more, err := lifecycle.Request(t, status, actor, reason, now)
	if err != nil {
		if lifecycle.Refused(err) {
			err = &refusal{err: err, task: t, actor: actor}
		}
		return nil, nil, lifecycle.Task{}, err
	}
	if effs = append(effs, more...); len(effs) == 0 {
		return nil, nil, next, nil
	}
	tasks[task] = next
	n := snap.State.Clone()
	n.Lifecycle = lifecycle.Encode(tasks)
	return n, effs, next, nil
}
