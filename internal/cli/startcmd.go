package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

func newStartCmd(s *Streams, g *globals) *cobra.Command {
	var auto bool
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
			p, err := g.openPlan("")
			if err != nil {
				return err
			}
			task, err := p.TaskID(args[0])
			if err != nil {
				return usageErr(err, "")
			}
			models := p.Models()
			_, st, err := change(p, "task "+task+" started", true, func(cur *state.State) (*state.State, error) {
				// An automated plan stays automated: starting a task never
				// silently switches the review loop off.
				n, err := workflow.Start(cur, task, auto || cur.Next() != "", models)
				if err != nil {
					return nil, usageErr(err, "")
				}
				return n, setTaskStatus(p, task, plan.StatusInProgress)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "task %s started: phase %s, next %s\n", task, st.Phase, orNull(st.Next()))
			return nil
		},
	}
	c.Flags().BoolVar(&auto, "auto", false, "automated mode: the code is reviewed at the next stop")
	return c
}

// setTaskStatus rewrites one status cell of tasks.md, keeping the rest.
func setTaskStatus(p *project.Plan, task, status string) error {
	ts, _, err := p.Tasks()
	if err != nil || ts == nil {
		return err
	}
	id, _ := strconv.Atoi(task)
	if t, ok := ts.Find(id); !ok || t.StatusNorm() == status {
		return nil
	}
	if err := ts.SetStatus(id, status); err != nil {
		return err
	}
	return state.WriteFileAtomic(p.Path("tasks.md"), ts.Bytes())
}
