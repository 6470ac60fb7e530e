package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// doneOpts are the options of `taskie done`.
type doneOpts struct {
	s      *Streams
	g      *globals
	phase  string
	task   string
	auto   bool
	asJSON bool
}

func newDoneCmd(s *Streams, g *globals) *cobra.Command { return newDoneCmdWith(s, g, runDone) }

func newDoneCmdWith(s *Streams, g *globals, run func(*doneOpts) error) *cobra.Command {
	o := &doneOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "done <phase>",
		Short: "Record that a phase is finished and set the next one",
		Long: `Record that the agent finished a phase (after writing the plan, creating the
tasks, implementing, or doing a post-review) and set next_phase per the phase
machine: in automated mode the review that follows, otherwise none.
Illegal moves are refused with the list of legal ones (taskie diagram, or
taskie help phases).`,
		Example: "  taskie done post-code-review\n  taskie done next-task --task 3",
		Args:    exactArgs(1, "a phase"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.phase = args[0]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.task, "task", "", "the task the phase belongs to (sets current_task)")
	c.Flags().BoolVar(&o.auto, "auto", false, "automated mode: set next_phase even if it was null")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the plan's resulting state as JSON")
	return c
}

func runDone(o *doneOpts) error {
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	phase := domain.Phase(o.phase)
	var task domain.TaskID
	if o.task != "" {
		if task, err = p.TaskID(o.task); err != nil {
			return usageErr(err, "")
		}
	}
	models := implied.Models(p)
	_, st, err := change(p, string(phase)+" done", true, func(cur *state.State) (*state.State, error) {
		if task != 0 {
			if cur, err = workflow.Set(cur, "current_task", task.String()); err != nil {
				return nil, usageErr(err, "")
			}
		}
		if err := postReviewWritten(p, cur, phase); err != nil {
			return nil, err
		}
		n, err := workflow.Record(cur, phase, o.auto, models)
		if err != nil {
			return nil, usageErr(err, legalHint(cur))
		}
		return n, nil
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(o.s.Out, changed(p.ID, st))
	}
	fmt.Fprintf(o.s.Err, "recorded %s: %s\n", phase, describeState(st))
	return nil
}

// legalHint points to the phase machine; the error itself lists the
// legal moves.
func legalHint(*state.State) string {
	return "`taskie diagram` shows the phase machine (`taskie help phases` explains it)"
}

// postReviewWritten refuses to record a post-review whose file is missing:
// the next review would otherwise lose what the agent changed.
func postReviewWritten(p *store.Plan, s *state.State, phase domain.Phase) error {
	review := domain.ReviewOf(phase)
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
