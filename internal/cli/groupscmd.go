package cli

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
)

// groupsOpts are the options of `taskie groups`.
type groupsOpts struct {
	s       *Streams
	g       *globals
	plan    string
	max     int
	asJSON  bool
	verbose bool
	ready   bool
}

// groupsView is `taskie groups --json`.
type groupsView struct {
	Plan     string     `json:"plan"`
	Max      int        `json:"max"`
	Ready    bool       `json:"ready_only,omitempty"` // --ready: only the tasks that can start now
	Waves    []waveView `json:"waves"`
	LeftOut  []leftView `json:"left_out"`
	Warnings []string   `json:"warnings,omitempty"`
}

// leftView is a task groups left out of the waves, and why.
type leftView struct {
	Task   string `json:"task"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason"`
}

type waveView struct {
	Wave  int             `json:"wave"`
	Tasks []placementView `json:"tasks"`
}

type placementView struct {
	Task     string   `json:"task"`
	Title    string   `json:"title,omitempty"`
	Status   string   `json:"status"`
	Priority string   `json:"priority"`
	Files    []string `json:"files"`
	Reasons  []string `json:"reasons"`
}

func newGroupsCmd(s *Streams, g *globals) *cobra.Command { return newGroupsCmdWith(s, g, runGroups) }

func newGroupsCmdWith(s *Streams, g *globals, run func(*groupsOpts) error) *cobra.Command {
	o := &groupsOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "groups [plan] [--max N] [--ready] [--json] [--verbose]",
		Short: "Split the open tasks into parallel waves (dependencies, file overlap, size)",
		Long: `Split the tasks that are not done or cancelled into waves that can run in
parallel: a task comes after the waves of its dependencies, no two
tasks of a wave share a file, and a wave holds at most --max tasks (group_size,
default 5). A task's files are its Files column, else the paths its task file
names. Tasks are reordered where dependencies allow: in progress first, then
by priority (inherited from the tasks waiting on them), then by id.

Left out: tasks in failed_tasks and every task that waits on one (none can
start until a person decides), and tasks whose result is complete (their work
waits to be merged and marked done; the tasks waiting on them are planned as
if they were done). They hold no slot and no file.

--ready plans only the tasks ` + "`taskie ready`" + ` lists: its first wave is what to
start now, and it is never empty while a task is ready.

--verbose says why each task is in its wave, or left out. Piped: a header
(wave, then the --json keys of a task), one row per task, with its reasons;
a task left out has wave "-". A dependency on an
unknown task, a dependency cycle or a repeated id is a validation error
(exit 1).`,
		Example: "  taskie groups\n  taskie groups --max 3 --verbose\n  taskie groups --ready --json",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.plan = firstArg(args)
			return run(o)
		},
	}
	c.Flags().IntVar(&o.max, "max", 0, "most tasks per wave (default group_size, 5)")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON (reasons included)")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "say why each task is in its wave")
	c.Flags().BoolVar(&o.ready, "ready", false, "plan only the tasks that can start now")
	return c
}

func runGroups(o *groupsOpts) error {
	lazyGC()
	s := o.s
	if o.max < 0 {
		return usageErr(fmt.Errorf("--max %d: must be at least 1", o.max), "")
	}
	cp, err := o.g.openCoord(o.plan)
	if err != nil {
		return err
	}
	defer cp.close()
	p := cp.p
	max := o.max
	if max == 0 {
		max = domain.DefaultGroupSize
		if cfg, err := implied.Config(p); err == nil {
			max = cfg.GroupSize
		}
	}
	tasks, problems, err := cp.schedTasks(true)
	if err != nil {
		return err
	}
	if ps := parallel.Check(tasks); len(ps) > 0 {
		return unschedulable(p.ID, ps)
	}
	aside, err := cp.asideTasks()
	if err != nil {
		return err
	}
	if o.ready {
		if tasks, err = cp.readyOnly(tasks); err != nil {
			return err
		}
	}
	waves, left, err := parallel.GroupsAside(tasks, max, aside)
	if err != nil {
		return err
	}
	titles := cp.titles()
	v := groupsView{Plan: p.ID, Max: max, Ready: o.ready, Waves: wavesView(waves, titles), LeftOut: []leftView{}}
	for _, l := range left {
		v.LeftOut = append(v.LeftOut, leftView{Task: l.Task.ID.String(), Title: titles[l.Task.ID], Reason: l.Reason})
	}
	for _, pr := range problems {
		v.Warnings = append(v.Warnings, pr.Msg)
	}
	if o.asJSON {
		return writeJSON(s.Out, v)
	}
	return printGroupsView(s, v, o.verbose)
}

// unschedulable is the error for tasks.md whose tasks cannot be planned.
func unschedulable(plan string, ps []parallel.Problem) error {
	msgs := make([]string, len(ps))
	for i, pr := range ps {
		msgs[i] = pr.Msg
	}
	return &exitError{code: ExitProblems, err: fmt.Errorf("plan %s: tasks.md cannot be scheduled:\n  %s", plan, strings.Join(msgs, "\n  ")),
		hint: "fix the Depends on column of tasks.md (`taskie validate` reports the same)"}
}

// printGroupsView prints the waves: a table on a terminal, else TSV, and
// on stderr the warnings and the tasks left out.
func printGroupsView(s *Streams, v groupsView, verbose bool) error {
	for _, w := range v.Warnings {
		fmt.Fprintf(s.Err, "taskie: warning: %s\n", w)
	}
	if s.TTY {
		printGroups(s.Out, v, verbose)
	} else {
		if len(v.Waves) == 0 {
			printGroups(s.Err, groupsView{Plan: v.Plan, Ready: v.Ready}, false) // says why there is no row
		}
		if err := groupsTSV(s, v); err != nil {
			return err
		}
	}
	if !verbose && len(v.LeftOut) > 0 {
		ids := make([]string, len(v.LeftOut))
		for i, l := range v.LeftOut {
			ids[i] = l.Task
		}
		fmt.Fprintf(s.Err, "left out: %s (failed, waiting on a failed task, or done and waiting to be merged); --verbose says which\n", strings.Join(ids, ", "))
	}
	return nil
}

// asideTasks says which open tasks groups leaves out: those in
// failed_tasks and those whose latest result is complete.
func (cp *coordPlan) asideTasks() (map[domain.TaskID]parallel.Aside, error) {
	res, err := cp.results()
	if err != nil {
		return nil, err
	}
	aside := map[domain.TaskID]parallel.Aside{}
	for id := range res.latest {
		if res.completed(id) {
			aside[id] = parallel.AsideFinished
		}
	}
	for _, id := range cp.failedTasks() {
		aside[id] = parallel.AsideFailed
	}
	return aside, nil
}

// readyOnly keeps, of the open tasks, those taskie ready lists; closed
// tasks stay, so that the dependencies of the ready ones are known.
func (cp *coordPlan) readyOnly(tasks []parallel.Task) ([]parallel.Task, error) {
	claims, err := cp.c.Claims(cp.ctx, cp.key)
	if err != nil {
		return nil, err
	}
	now, err := cp.now()
	if err != nil {
		return nil, err
	}
	ready, err := cp.readyTasks(tasks, claims, now)
	if err != nil {
		return nil, err
	}
	keep := make(map[domain.TaskID]bool, len(ready))
	for _, t := range ready {
		keep[t.ID] = true
	}
	return slices.DeleteFunc(tasks, func(t parallel.Task) bool {
		return !keep[t.ID] && t.Status != plan.StatusDone && t.Status != plan.StatusCancelled
	}), nil
}

func wavesView(waves []parallel.Wave, titles map[domain.TaskID]string) []waveView {
	out := make([]waveView, len(waves))
	for i, w := range waves {
		wv := waveView{Wave: w.Number, Tasks: make([]placementView, len(w.Tasks))}
		for k, pl := range w.Tasks {
			t := pl.Task
			files := t.Files
			if files == nil {
				files = []string{}
			}
			wv.Tasks[k] = placementView{Task: t.ID.String(), Title: titles[t.ID], Status: t.Status,
				Priority: parallel.PriorityName(t.Priority), Files: files, Reasons: pl.Reasons}
		}
		out[i] = wv
	}
	return out
}

// groupsTSV is the piped form: one row per placed task, its wave then the
// keys of a task of --json's waves; then a row per task left out, wave
// "-" and the reason.
func groupsTSV(s *Streams, v groupsView) error {
	var rows [][]string
	for _, w := range v.Waves {
		for _, t := range w.Tasks {
			rows = append(rows, []string{strconv.Itoa(w.Wave), t.Task, orNone(t.Title), t.Status, t.Priority,
				listCell(t.Files), orNone(strings.Join(t.Reasons, "; "))})
		}
	}
	for _, l := range v.LeftOut {
		rows = append(rows, []string{"-", l.Task, orNone(l.Title), "-", "-", "-", l.Reason})
	}
	t := table{cols: []string{"wave", "task", "title", "status", "priority", "files", "reasons"}}
	// One write per 64 KB, not per row: a plan of 10,000 tasks has 5,000.
	bw := bufio.NewWriterSize(s.Out, 64<<10)
	out := *s
	out.Out = bw
	if err := t.print(&out, len(rows), func(i int, _ bool) []string { return rows[i] }); err != nil {
		return err
	}
	return bw.Flush()
}

// printGroups writes "wave 1: 1, 2, 4" per wave; verbose adds each task
// with its title and reasons.
func printGroups(w io.Writer, v groupsView, verbose bool) {
	switch {
	case len(v.Waves) == 0 && v.Ready:
		fmt.Fprintf(w, "plan %s: no task is ready\n", v.Plan)
	case len(v.Waves) == 0:
		fmt.Fprintf(w, "plan %s: no open task to plan\n", v.Plan)
	}
	for _, wave := range v.Waves {
		ids := make([]string, len(wave.Tasks))
		for i, t := range wave.Tasks {
			ids[i] = t.Task
		}
		fmt.Fprintf(w, "wave %d: %s\n", wave.Wave, strings.Join(ids, ", "))
		if !verbose {
			continue
		}
		for _, t := range wave.Tasks {
			title := ""
			if t.Title != "" {
				title = " — " + t.Title
			}
			fmt.Fprintf(w, "  task %s (%s, %s)%s\n", t.Task, t.Status, t.Priority, title)
			for _, r := range t.Reasons {
				fmt.Fprintf(w, "    %s\n", r)
			}
		}
	}
	if !verbose {
		return
	}
	for i, l := range v.LeftOut {
		if i == 0 {
			fmt.Fprintln(w, "left out:")
		}
		title := ""
		if l.Title != "" {
			title = " — " + l.Title
		}
		fmt.Fprintf(w, "  task %s%s\n    %s\n", l.Task, title, l.Reason)
	}
}
