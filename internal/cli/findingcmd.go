package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

func newFindingCmd(s *Streams, g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "finding",
		Short: "Record what the post-review did with a review finding (fixed or declined)",
		Long: `Record, during the post-review, what was done with one finding of the current
review cycle, by its id (` + "`taskie findings`" + ` lists them): fixed, with an
optional note on what changed, or declined, with the reason. The next reviewer
re-checks both: a fixed finding it still finds is reopened; a declined one
stays in front of it with your reason.`,
		RunE: unknownSubcommand, // help, or the nearest subcommand
	}
	c.AddCommand(newFindingFixedCmd(s, g), newFindingDeclinedCmd(s, g))
	return c
}

// findingOpts are the options of `taskie finding fixed` and `taskie
// finding declined`.
type findingOpts struct {
	s       *Streams
	g       *globals
	decline bool // declined, else fixed
	id      string
	text    string // fixed: --note; declined: --why
	asJSON  bool
}

// findingView is `taskie finding fixed|declined --json`: the finding after
// the change, as `taskie findings --json` shows it, with its review cycle.
type findingView struct {
	Plan      string         `json:"plan"`
	Review    domain.Phase   `json:"review"`
	Task      string         `json:"task,omitempty"`
	Iteration int            `json:"iteration"`
	Finding   ledger.Finding `json:"finding"`
}

func newFindingFixedCmd(s *Streams, g *globals) *cobra.Command {
	return newFindingFixedCmdWith(s, g, runFinding)
}

func newFindingFixedCmdWith(s *Streams, g *globals, run func(*findingOpts) error) *cobra.Command {
	o := &findingOpts{s: s, g: g}
	c := &cobra.Command{
		Use:     "fixed <id>",
		Short:   "Mark a finding fixed",
		Example: `  taskie finding fixed F3 --note "nil check added, test in cache_test.go"`,
		Args:    exactArgs(1, "a finding id (F1, F2, …)"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.id = args[0]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.text, "note", "", "what changed")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the finding after the change as JSON")
	return c
}

func newFindingDeclinedCmd(s *Streams, g *globals) *cobra.Command {
	return newFindingDeclinedCmdWith(s, g, runFinding)
}

func newFindingDeclinedCmdWith(s *Streams, g *globals, run func(*findingOpts) error) *cobra.Command {
	o := &findingOpts{s: s, g: g, decline: true}
	c := &cobra.Command{
		Use:     "declined <id> --why <reason>",
		Short:   "Decline a finding, with the reason",
		Example: `  taskie finding declined F4 --why "generated file, not edited by hand"`,
		Args:    exactArgs(1, "a finding id (F1, F2, …)"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.id = args[0]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.text, "why", "", "why the finding is not changed (required)")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the finding after the change as JSON")
	return c
}

// runFinding appends the post-review's event for one finding of the
// current cycle, under the plan lock.
func runFinding(o *findingOpts) error {
	id, text, decline := o.id, o.text, o.decline
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	var e ledger.Event
	var series ledgerlog.Series
	var after ledger.Ledger
	err = p.Update(func(snap *store.Snapshot) (store.Change, error) {
		if snap.State == nil {
			return store.Change{}, stateErr(p, snap.StateErr)
		}
		r, err := readLedger(p)
		if err != nil {
			return store.Change{}, err
		}
		sr, l, ok := r.Current(snap.State)
		if !ok {
			return store.Change{}, usageErr(fmt.Errorf("plan %s is in no review cycle: no finding to record", p.ID), "")
		}
		if e, err = findingEvent(l, id, text, decline); err != nil {
			return store.Change{}, err
		}
		series, after = sr, ledger.Fold(l, e)
		return store.Change{Actor: "cli", Events: ledgerlog.ToLog(sr, []ledger.Event{e})}, nil
	})
	if err != nil {
		return err
	}
	what := "fixed"
	if decline {
		what = "declined"
	}
	fmt.Fprintf(o.s.Err, "%s: %s %s\n", series, e.ID, what)
	if o.asJSON {
		f, _ := after.Find(e.ID)
		return writeJSON(o.s.Out, findingView{Plan: p.ID, Review: series.Review, Task: series.Task.String(),
			Iteration: after.Iteration(), Finding: f})
	}
	return nil
}

// findingEvent asks the ledger for the event; a refusal is a usage error.
func findingEvent(l ledger.Ledger, id, text string, decline bool) (ledger.Event, error) {
	fn := ledger.Fix
	if decline {
		fn = ledger.Decline
	}
	e, err := fn(l, id, text)
	switch {
	case errors.Is(err, ledger.ErrUnknownFinding):
		return e, usageErr(err, "`taskie findings` lists this cycle's findings")
	case errors.Is(err, ledger.ErrNoReason):
		return e, usageErr(err, `taskie finding declined `+id+` --why "…"`)
	case err != nil:
		return e, usageErr(err, "")
	}
	return e, nil
}

// resumeLedger returns the FINDINGS_RESUMED event of a human's decision
// after a cycle stopped for one (`taskie resume`, or a `taskie set` that
// moved on; note says which): non-convergence is counted afresh. A log
// that cannot be read gives an event at iteration 0, still a decision.
func resumeLedger(p *store.Plan, st *state.State, note string) []events.Event {
	sr, ok := ledgerlog.Current(st)
	if !ok {
		return nil
	}
	var l ledger.Ledger
	if r, err := readLedger(p); err == nil {
		_, l, _ = r.Current(st)
	}
	return ledgerlog.ToLog(sr, []ledger.Event{ledger.Resume(l, note)})
}
