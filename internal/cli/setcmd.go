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

// setOpts are the options of `taskie set`.
type setOpts struct {
	s            *Streams
	g            *globals
	field, value string
	asJSON       bool
}

func newSetCmd(s *Streams, g *globals) *cobra.Command { return newSetCmdWith(s, g, runSet) }

func newSetCmdWith(s *Streams, g *globals, run func(*setOpts) error) *cobra.Command {
	o := &setOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "set <field> <value>",
		Short: "Set one state.json field, checked (use null to clear)",
		Long: "Set one field of state.json. Values are checked: phases must be legal moves,\n" +
			"task ids must exist in tasks.md, numbers must be ≥ 0.\nFields: " + strings.Join(workflow.Settable, ", "),
		Example: "  taskie set max_reviews 12\n  taskie set next_phase null",
		Args:    exactArgs(2, "a field and a value"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.field, o.value = args[0], args[1]
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the plan's resulting state as JSON")
	return c
}

func runSet(o *setOpts) error {
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	field, value := o.field, o.value
	if field == "current_task" && value != "null" && value != "" {
		id, err := p.TaskID(value)
		if err != nil {
			return usageErr(err, "")
		}
		value = id.String() // canonical: " 3 " is recorded as 3
	}
	human := false
	_, st, err := changeWith(p, "set "+field, true, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
		n, err := workflow.Set(cur, field, value)
		if err != nil {
			return store.Change{}, usageErr(err, "")
		}
		c := store.Change{State: n, Kind: events.FieldSet, Meta: events.Meta(events.FieldSetMeta{Field: field, Value: value})}
		if cur.NeedsHuman && !n.NeedsHuman {
			// The change left a cycle stopped for a human: moving on is
			// the decision, recorded as `taskie resume` records one.
			human = true
			c.Events = resumeLedger(p, cur, "moved on: taskie set "+field+" "+value)
		}
		return c, nil
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(o.s.Out, changed(p.ID, st))
	}
	fmt.Fprintf(o.s.Err, "set %s = %s\n", field, value)
	if human {
		fmt.Fprintf(o.s.Err, "plan %s: left the review cycle that stopped for a human (needs_human cleared)\n", p.ID)
	}
	return nil
}

// pauseOpts are the options of `taskie pause` and `taskie resume`.
type pauseOpts struct {
	s      *Streams
	g      *globals
	resume bool
	plan   string
	asJSON bool
}

func newPauseCmd(s *Streams, g *globals, resume bool) *cobra.Command {
	return newPauseCmdWith(s, g, resume, runPause)
}

func newPauseCmdWith(s *Streams, g *globals, resume bool, run func(*pauseOpts) error) *cobra.Command {
	o := &pauseOpts{s: s, g: g, resume: resume}
	use, short := "pause", "Pause all automation for a plan (the hook only allows)"
	if resume {
		use, short = "resume", "Resume automation after taskie pause, or a review cycle stopped for a human"
	}
	c := &cobra.Command{
		Use:   use + " [plan]",
		Short: short,
		Args:  maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.plan = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the plan's resulting state as JSON")
	return c
}

func runPause(o *pauseOpts) error {
	use, on, kind := "pause", o.resume, events.Paused
	if on {
		use, kind = "resume", events.Resumed
	}
	p, err := o.g.openPlan(o.plan)
	if err != nil {
		return err
	}
	human := false
	_, st, err := changeWith(p, use, false, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
		n := cur.Clone()
		n.Enabled = &on
		c := store.Change{State: n, Kind: kind}
		if on && cur.NeedsHuman {
			// A human decided on a review cycle that did not converge (docs/ledger.md).
			human, n.NeedsHuman = true, false
			c.Events = resumeLedger(p, cur, "taskie resume")
		}
		return c, nil
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(o.s.Out, changed(p.ID, st))
	}
	fmt.Fprintf(o.s.Err, "plan %s: automation %sd\n", p.ID, use)
	if human {
		fmt.Fprintf(o.s.Err, "plan %s: review cycle resumed after a human decision (needs_human cleared)\n", p.ID)
	}
	return nil
}
