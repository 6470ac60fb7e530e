package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

func newSetCmd(s *Streams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "set <field> <value>",
		Short: "Set one state.json field, checked (use null to clear)",
		Long: "Set one field of state.json. Values are checked: phases must be legal moves,\n" +
			"task ids must exist in tasks.md, numbers must be ≥ 0.\nFields: " + strings.Join(workflow.Settable, ", "),
		Example: "  taskie set max_reviews 12\n  taskie set next_phase null",
		Args:    exactArgs(2, "a field and a value"),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := g.openPlan("")
			if err != nil {
				return err
			}
			field, value := args[0], args[1]
			if field == "current_task" && value != "null" && value != "" {
				id, err := p.TaskID(value)
				if err != nil {
					return usageErr(err, "")
				}
				value = id.String() // canonical: " 3 " is recorded as 3
			}
			_, _, err = changeWith(p, "set "+field, true, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
				n, err := workflow.Set(cur, field, value)
				if err != nil {
					return store.Change{}, usageErr(err, "")
				}
				return store.Change{State: n, Kind: events.FieldSet, Meta: map[string]any{"field": field, "value": value}}, nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "set %s = %s\n", field, value)
			return nil
		},
	}
}

func newPauseCmd(s *Streams, g *globals, resume bool) *cobra.Command {
	use, short, on := "pause", "Pause all automation for a plan (the hook only allows)", false
	if resume {
		use, short, on = "resume", "Resume automation after taskie pause, or a review cycle stopped for a human", true
	}
	return &cobra.Command{
		Use:   use + " [plan]",
		Short: short,
		Args:  maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := g.openPlan(firstArg(args))
			if err != nil {
				return err
			}
			kind := events.Paused
			if on {
				kind = events.Resumed
			}
			human := false
			_, _, err = changeWith(p, use, false, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
				n := cur.Clone()
				n.Enabled = &on
				c := store.Change{State: n, Kind: kind}
				if on && cur.NeedsHuman {
					// A human decided on a review cycle that did not converge (§19).
					human, n.NeedsHuman = true, false
					c.Events = resumeLedger(p, cur)
				}
				return c, nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "plan %s: automation %sd\n", p.ID, use)
			if human {
				fmt.Fprintf(s.Err, "plan %s: review cycle resumed after a human decision (needs_human cleared)\n", p.ID)
			}
			return nil
		},
	}
}
