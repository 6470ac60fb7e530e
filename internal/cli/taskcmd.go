package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/taskie-dev/taskie/internal/continuity"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/store"
)

func newTaskCmd(s *Streams, g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "task",
		Short: "Session continuity of a task: progress notes, criteria, chain output",
		Long: `Keep a task's session continuity in its task-<T>.md (SPEC §12): a Progress
Log entry per session, the acceptance criteria checkboxes, and the Chain Output
that the tasks depending on it receive. ` + "`taskie context`" + ` shows it all.`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr(fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath()), "see `taskie task --help`")
			}
			return c.Help()
		},
	}
	c.AddCommand(newTaskNoteCmd(s, g), newTaskCheckCmd(s, g), newTaskOutputCmd(s, g), newTaskCriteriaCmd(s, g), newTaskStatusCmd(s, g))
	return c
}

// openTask opens the plan and checks a user-given task id.
func (g *globals) openTask(arg string) (*project.Plan, domain.TaskID, error) {
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

type taskNoteOpts struct{ did, issues, next string }

func newTaskNoteCmd(s *Streams, g *globals) *cobra.Command {
	o := &taskNoteOpts{}
	c := &cobra.Command{
		Use:   "note <task> --did TEXT [--issues TEXT] [--next TEXT]",
		Short: "Add this session's entry to a task's Progress Log",
		Long: `Append "### Session N — <time>" with Did / Issues / Next to the Progress Log of
task-<T>.md (the section is created when missing) and a PROGRESS event to
events.jsonl. Past 50 KB the file draws a warning; at 75 KB all but the last 5
sessions move to .taskie/archive/<plan>/task-<T>.md, leaving a summary entry.`,
		Example: `  taskie task note 3 --did "parser and its tests" --issues "none" --next "criterion 2: errors"`,
		Args:    exactArgs(1, "a task id"),
		RunE:    func(_ *cobra.Command, args []string) error { return runTaskNote(s, g, args[0], o) },
	}
	c.Flags().StringVar(&o.did, "did", "", "what this session finished (required)")
	c.Flags().StringVar(&o.issues, "issues", "", "what broke or is unclear")
	c.Flags().StringVar(&o.next, "next", "", "the next concrete step")
	return c
}

func runTaskNote(s *Streams, g *globals, arg string, o *taskNoteOpts) error {
	if strings.TrimSpace(o.did) == "" {
		return usageErr(errors.New("--did is required: say what this session did"),
			`usage: taskie task note <task> --did "…" [--issues "…"] [--next "…"]`)
	}
	p, task, err := g.openTask(arg)
	if err != nil {
		return err
	}
	res, err := continuity.Note(p, task, continuity.Entry{Did: o.did, Issues: o.issues, Next: o.next})
	if err != nil {
		return usageErr(err, "")
	}
	fmt.Fprintf(s.Err, "task %s: session %d recorded in %s\n", task, res.Session, res.Path)
	for _, w := range res.Warnings {
		fmt.Fprintf(s.Err, "taskie: warning: %s\n", w)
	}
	return nil
}

func newTaskCheckCmd(s *Streams, g *globals) *cobra.Command {
	var uncheck bool
	c := &cobra.Command{
		Use:   "check <task> <n>",
		Short: "Check off acceptance criterion n of a task (--uncheck to undo)",
		Long: `Check off the n-th acceptance criterion (1-based, counted in the Acceptance
Criteria section of task-<T>.md, or among all checkboxes of the file when it has
no such section). Check a criterion only once the test that proves it passes.
` + "`taskie task criteria <task>`" + ` lists the numbers.`,
		Args: exactArgs(2, "a task id and a criterion number"),
		RunE: func(_ *cobra.Command, args []string) error { return runTaskCheck(s, g, args[0], args[1], !uncheck) },
	}
	c.Flags().BoolVar(&uncheck, "uncheck", false, "uncheck the criterion instead")
	return c
}

func runTaskCheck(s *Streams, g *globals, arg, narg string, done bool) error {
	p, task, err := g.openTask(arg)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSpace(narg))
	if err != nil || n < 1 {
		return usageErr(fmt.Errorf("criterion %q is not a positive integer", narg), criteriaHint(p, task))
	}
	c, changed, err := continuity.Check(p, task, n, done)
	var re *continuity.RangeError
	switch {
	case errors.As(err, &re):
		return usageErr(fmt.Errorf("task %s: %v", task, err), criteriaHint(p, task))
	case err != nil:
		return usageErr(err, "")
	}
	what := "checked"
	if !done {
		what = "unchecked"
	}
	if !changed {
		what = "already " + what
	}
	fmt.Fprintf(s.Err, "task %s: criterion %d %s: %s\n", task, n, what, c.Text)
	if done && changed {
		if cs, _, err := continuity.Criteria(p, task); err == nil && allDone(cs) {
			fmt.Fprintf(s.Err, "all %d criteria of task %s are checked: write its chain output (`taskie task output %s < output.md`)\n", len(cs), task, task)
		}
	}
	return nil
}

// criteriaHint lists a task's criteria for an error's hint line.
func criteriaHint(p *project.Plan, task domain.TaskID) string {
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

func newTaskOutputCmd(s *Streams, g *globals) *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:   "output <task> [--file F]",
		Short: "Set a task's Chain Output from stdin or a file",
		Long: `Replace the Chain Output section of task-<T>.md with the text read from stdin
(or --file): "### Summary" and "### For Downstream Tasks" parts, or plain text
that all becomes the summary. Tasks that depend on this one see it as their
chain input in ` + "`taskie context`" + `.`,
		Example: "  taskie task output 3 < output.md\n  taskie task output 3 --file output.md",
		Args:    exactArgs(1, "a task id"),
		RunE:    func(_ *cobra.Command, args []string) error { return runTaskOutput(s, g, args[0], file) },
	}
	c.Flags().StringVar(&file, "file", "", "read the chain output from `F` (- for stdin)")
	return c
}

func runTaskOutput(s *Streams, g *globals, arg, file string) error {
	p, task, err := g.openTask(arg)
	if err != nil {
		return err
	}
	if file != "" && file != "-" && !filepath.IsAbs(file) && g.dir != "" {
		file = filepath.Join(g.dir, file) // relative to -C, as with git -C
	}
	data, err := readInput(s, file)
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
	fmt.Fprintf(s.Err, "task %s: chain output written\n", task)
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

func newTaskCriteriaCmd(s *Streams, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "criteria <task>",
		Short: "List a task's acceptance criteria with their numbers",
		Args:  exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			p, task, err := g.openTask(args[0])
			if err != nil {
				return err
			}
			cs, section, err := continuity.Criteria(p, task)
			if err != nil {
				return usageErr(err, "")
			}
			if asJSON {
				if cs == nil {
					cs = []continuity.Criterion{}
				}
				return writeJSON(s.Out, criteriaView{Plan: p.ID, Task: task, Section: section, Criteria: cs})
			}
			if len(cs) == 0 {
				fmt.Fprintf(s.Err, "task %s has no acceptance criteria\n", task)
			}
			fmt.Fprint(s.Out, continuity.FormatCriteria(cs))
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func newTaskStatusCmd(s *Streams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status <task> <status>",
		Short: "Set a task's Status cell in tasks.md (pending, in-progress, done, cancelled, postponed, blocked)",
		Long: `Set one task's Status in tasks.md, keeping every other cell, column and line as
written. The review loop marks a task done itself when its code review passes;
this is for standalone work and for cancelling or postponing tasks.`,
		Args: exactArgs(2, "a task id and a status"),
		RunE: func(_ *cobra.Command, args []string) error {
			p, task, err := g.openTask(args[0])
			if err != nil {
				return err
			}
			status := strings.ToLower(strings.TrimSpace(args[1]))
			if !plan.KnownStatus(status) {
				return usageErr(fmt.Errorf("unknown status %q", args[1]), "statuses: pending, in-progress, done, cancelled, postponed, blocked")
			}
			err = p.Update(func(*store.Snapshot) (store.Change, error) {
				return store.Change{Actor: "cli", Reason: "task status", Kind: events.TaskStatus, Task: task,
					Statuses: map[domain.TaskID]string{task: status}}, nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "task %s: %s\n", task, status)
			return nil
		},
	}
}
