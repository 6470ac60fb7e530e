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
			_, st, err := changeWith(p, "task "+task.String()+" started", true, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
				// An automated plan stays automated: starting a task never
				// silently switches the review loop off.
				n, err := workflow.Start(cur, task, auto || cur.Next() != "", models)
				if err != nil {
					return store.Change{}, usageErr(err, "")
				}
				return store.Change{State: n, Statuses: map[domain.TaskID]string{task: plan.StatusInProgress}}, nil
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
