package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/parallel"
)

// groupsOpts are the options of `taskie groups`.
type groupsOpts struct {
	s       *Streams
	g       *globals
	plan    string
	max     int
	asJSON  bool
	verbose bool
}

// groupsView is `taskie groups --json`.
type groupsView struct {
	Plan     string     `json:"plan"`
	Max      int        `json:"max"`
	Waves    []waveView `json:"waves"`
	Warnings []string   `json:"warnings,omitempty"`
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
		Use:   "groups [plan] [--max N] [--json] [--verbose]",
		Short: "Split the open tasks into parallel waves (dependencies, file overlap, size)",
		Long: `Split the tasks that are not done or cancelled into waves that can run in
parallel: a task comes after the waves of its dependencies, no two
tasks of a wave share a file, and a wave holds at most --max tasks (group_size,
default 5). A task's files are its Files column, else the paths its task file
names. Tasks are reordered where dependencies allow: in progress first, then
by priority (inherited from the tasks waiting on them), then by id.

--verbose says why each task is in its wave. A dependency on an unknown task,
a dependency cycle or a repeated id is a validation error (exit 1).`,
		Example: "  taskie groups\n  taskie groups --max 3 --verbose\n  taskie groups --json",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.plan = firstArg(args)
			return run(o)
		},
	}
	c.Flags().IntVar(&o.max, "max", 0, "most tasks per wave (default group_size, 5)")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON (reasons included)")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "say why each task is in its wave")
	return c
}

func runGroups(o *groupsOpts) error {
	s := o.s
	if o.max < 0 {
		return usageErr(fmt.Errorf("--max %d: must be at least 1", o.max), "")
	}
	p, err := o.g.openPlan(o.plan)
	if err != nil {
		return err
	}
	cp := &coordPlan{p: p}
	max := o.max
	if max == 0 {
		max = domain.DefaultGroupSize
		if cfg, err := p.Config(); err == nil {
			max = cfg.GroupSize
		}
	}
	tasks, problems, err := cp.schedTasks(true)
	if err != nil {
		return err
	}
	waves, err := parallel.Groups(tasks, max)
	var ve *parallel.ValidationError
	if errors.As(err, &ve) {
		msgs := make([]string, len(ve.Problems))
		for i, pr := range ve.Problems {
			msgs[i] = pr.Msg
		}
		return &exitError{code: ExitProblems, err: fmt.Errorf("plan %s: tasks.md cannot be scheduled:\n  %s", p.ID, strings.Join(msgs, "\n  ")),
			hint: "fix the Depends on column of tasks.md (`taskie validate` checks the rest of the plan)"}
	}
	if err != nil {
		return err
	}
	v := groupsView{Plan: p.ID, Max: max, Waves: wavesView(waves, cp.titles())}
	for _, pr := range problems {
		v.Warnings = append(v.Warnings, pr.Msg)
	}
	if o.asJSON {
		return writeJSON(s.Out, v)
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(s.Err, "taskie: warning: %s\n", w)
	}
	printGroups(s.Out, v, o.verbose)
	return nil
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

// printGroups writes "wave 1: 1, 2, 4" per wave; verbose adds each task
// with its title and reasons.
func printGroups(w io.Writer, v groupsView, verbose bool) {
	if len(v.Waves) == 0 {
		fmt.Fprintf(w, "plan %s: no open task\n", v.Plan)
		return
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
}
