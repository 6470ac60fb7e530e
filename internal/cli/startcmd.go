package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// startOpts are the options of `taskie start`.
type startOpts struct {
	s      *Streams
	g      *globals
	task   string
	auto   bool
	asJSON bool
}

func newStartCmd(s *Streams, g *globals) *cobra.Command { return newStartCmdWith(s, g, runStart) }

func newStartCmdWith(s *Streams, g *globals, run func(*startOpts) error) *cobra.Command {
	o := &startOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "start <task>",
		Short: "Start implementing a task (marks it in-progress in tasks.md)",
		Long: `Start implementing a task: phase next-task (next-task-tdd on a tdd plan),
current_task set, the task marked in-progress in tasks.md. With --auto (or when
automation is waiting for the next task) the Stop hook reviews the code at the
agent's next stop, starting a fresh review cycle. A plan that is already
automated stays automated; use ` + "`taskie set next_phase null`" + ` to go standalone.`,
		Args: exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.auto, "auto", false, "automated mode: the code is reviewed at the next stop")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the plan's resulting state as JSON")
	return c
}

func runStart(o *startOpts) error {
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	task, err := p.TaskID(o.task)
	if err != nil {
		return usageErr(err, "")
	}
	models := p.Models()
	_, st, err := changeWith(p, "task "+task.String()+" started", true, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
		// An automated plan stays automated: starting a task never
		// silently switches the review loop off.
		n, err := workflow.Start(cur, task, o.auto || cur.Next() != "", models)
		if err != nil {
			return store.Change{}, usageErr(err, legalHint(cur))
		}
		return store.Change{State: n, Statuses: map[domain.TaskID]string{task: plan.StatusInProgress}}, nil
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(o.s.Out, changed(p.ID, st))
	}
	fmt.Fprintf(o.s.Err, "task %s started: %s\n", task, describeState(st))
	return nil
}
