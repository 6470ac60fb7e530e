package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
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
automated stays automated; use ` + "`taskie set next_phase null`" + ` to go standalone.

A finished task is refused: done in tasks.md (reopen it first with
` + "`taskie task status <task> pending`" + `), or completed or abandoned in its
lifecycle. Dependencies that are not done yet draw a warning naming them.`,
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
	models := implied.Models(p)
	var unmet []domain.TaskID
	_, st, err := changeWith(p, "task "+task.String()+" started", true, func(snap *store.Snapshot, cur *state.State) (store.Change, error) {
		if err := startable(snap, cur, task); err != nil {
			return store.Change{}, err
		}
		unmet = unmetDeps(snap, task)
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
	if len(unmet) > 0 {
		fmt.Fprintf(o.s.Err, "taskie: warning: task %s depends on %s, not done yet\n", task, joinIDs(unmet))
	}
	if o.asJSON {
		return writeJSON(o.s.Out, changed(p.ID, st))
	}
	fmt.Fprintf(o.s.Err, "task %s started: %s\n", task, describeState(st))
	return nil
}

// finishedStates are the lifecycle states a task is never started from.
var finishedStates = []lifecycle.State{lifecycle.Completed, lifecycle.Abandoned, "skipped"}

// startable refuses to start a task that is finished: done in tasks.md, or
// completed, abandoned or skipped in its lifecycle. Starting it would
// silently reopen finished work.
func startable(snap *store.Snapshot, cur *state.State, task domain.TaskID) error {
	r, ok := taskrec.Find(taskrec.OfFiles(snap.Tasks, cur), task)
	if !ok {
		return nil
	}
	if r.Row && r.Display == plan.StatusDone {
		return &exitError{code: ExitProblems, err: fmt.Errorf("task %s is done: starting it would reopen finished work", task),
			hint: fmt.Sprintf("to work on it again, reopen it first: `taskie task status %s pending`, then `taskie start %s`", task, task)}
	}
	if r.Recorded && slices.Contains(finishedStates, r.State) {
		return &exitError{code: ExitProblems, err: fmt.Errorf("task %s is %s in its lifecycle: a finished task does not start again", task, r.State),
			hint: "`taskie task show " + task.String() + "` shows its record; for more work on it, add a task with `taskie task add --title …`"}
	}
	return nil
}

// unmetDeps lists the dependencies of task that tasks.md marks neither done
// nor cancelled: the task may start (the user knows best), with a warning.
func unmetDeps(snap *store.Snapshot, task domain.TaskID) []domain.TaskID {
	rs := taskrec.OfFiles(snap.Tasks, snap.State)
	t, ok := taskrec.Find(rs, task)
	if !ok || !t.Row {
		return nil
	}
	var out []domain.TaskID
	for _, d := range t.Deps {
		if dt, ok := taskrec.Find(rs, d); !ok || !dt.Row || (dt.Display != plan.StatusDone && dt.Display != plan.StatusCancelled) {
			out = append(out, d)
		}
	}
	return out
}
