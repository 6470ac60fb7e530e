package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

func newDoneCmd(s *Streams, g *globals) *cobra.Command {
	var taskArg string
	var auto bool
	c := &cobra.Command{
		Use:   "done <phase>",
		Short: "Record that a phase is finished and set the next one",
		Long: `Record that the agent finished a phase (after writing the plan, creating the
tasks, implementing, or doing a post-review) and set next_phase per the phase
machine: in automated mode the review that follows, otherwise null.
Illegal moves are refused with the list of legal ones (see taskie diagram).`,
		Example: "  taskie done post-code-review\n  taskie done next-task --task 3",
		Args:    exactArgs(1, "a phase"),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := g.openPlan("")
			if err != nil {
				return err
			}
			phase := domain.Phase(args[0])
			var task domain.TaskID
			if taskArg != "" {
				if task, err = p.TaskID(taskArg); err != nil {
					return usageErr(err, "")
				}
			}
			models := p.Models()
			_, st, err := change(p, string(phase)+" done", true, func(cur *state.State) (*state.State, error) {
				if task != 0 {
					if cur, err = workflow.Set(cur, "current_task", task.String()); err != nil {
						return nil, usageErr(err, "")
					}
				}
				if err := postReviewWritten(p, cur, phase); err != nil {
					return nil, err
				}
				n, err := workflow.Record(cur, phase, auto, models)
				if err != nil {
					return nil, usageErr(err, "`taskie diagram` shows the phase machine")
				}
				return n, nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "recorded %s: phase %s, next %s\n", phase, st.Phase, orNull(st.Next()))
			return nil
		},
	}
	c.Flags().StringVar(&taskArg, "task", "", "the task the phase belongs to (sets current_task)")
	c.Flags().BoolVar(&auto, "auto", false, "automated mode: set next_phase even if it was null")
	return c
}

// postReviewWritten refuses to record a post-review whose file is missing:
// the next review would otherwise lose what the agent changed.
func postReviewWritten(p *project.Plan, s *state.State, phase domain.Phase) error {
	review := workflow.ReviewOf(phase)
	if review == "" || s.Iteration() == 0 {
		return nil
	}
	rv, task := string(review), int(s.Task())
	if plan.PostReviewFileExists(p.Dir, rv, task, s.Iteration()) {
		return nil
	}
	name := plan.PostReviewFile(rv, task, s.Iteration())
	return usageErr(fmt.Errorf("%s: %s is missing", phase, p.Path(name)),
		fmt.Sprintf("write %s (what you changed for each finding of %s) first, then run `taskie done %s` again",
			name, plan.ReviewFile(rv, task, s.Iteration()), phase))
}
