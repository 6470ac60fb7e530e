package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

type validateView struct {
	Plan       string           `json:"plan"`
	Valid      bool             `json:"valid"`
	Violations []plan.Violation `json:"violations"`
	// Notes say what the files will say at the next write (a task's
	// commit seen); not violations.
	Notes []string `json:"notes,omitempty"`
}

// validateOpts are the options of `taskie validate`.
type validateOpts struct {
	s      *Streams
	g      *globals
	id     string
	asJSON bool
}

func newValidateCmd(s *Streams, g *globals) *cobra.Command {
	return newValidateCmdWith(s, g, runValidate)
}

func newValidateCmdWith(s *Streams, g *globals, run func(*validateOpts) error) *cobra.Command {
	o := &validateOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "validate [plan]",
		Short: "Check plan directories against the rules (every plan when none is named)",
		Long: `Check a plan directory (every plan when none is named, or --plan) against the
rules of the plan format and print every violation with its file and rule
number; ` + "`taskie help validation`" + ` lists the rules. Exit 1 when anything is
wrong, a malformed or illegal state.json included. The Stop hook blocks on the
other rules only: a bad state.json (rule 8, reported as a warning) makes it
skip automation, never trap the agent.`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.id = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func runValidate(o *validateOpts) error {
	plans, err := plansToValidate(o.g, o.id)
	if err != nil {
		return err
	}
	views := make([]validateView, 0, len(plans))
	bad := false
	for _, p := range plans {
		vs := append(implied.Validate(p), lifecycleViolations(o.s, p)...)
		vs = append(vs, handEditViolations(p)...)
		if vs == nil {
			vs = []plan.Violation{}
		}
		views = append(views, validateView{Plan: p.ID, Valid: len(vs) == 0, Violations: vs, Notes: seenCommits(p)})
		bad = bad || len(vs) > 0
	}
	if o.asJSON {
		if err := writeJSON(o.s.Out, views); err != nil {
			return err
		}
	} else {
		printViolations(o.s, views)
	}
	if !bad {
		return nil
	}
	if !o.asJSON {
		fmt.Fprintf(o.s.Err, "%s `taskie help validation` explains each rule; a bad state.json can be rebuilt with `taskie recover --write --force`\n", o.s.errs().Yellow("taskie: hint:"))
	}
	return errProblems
}

func plansToValidate(g *globals, id string) ([]*store.Plan, error) {
	if id == "" {
		id = g.plan
	}
	r, err := g.repo()
	if err != nil {
		return nil, err
	}
	ids := []string{id}
	if id == "" {
		if ids, err = r.Plans(); err != nil {
			return nil, err
		}
	}
	var out []*store.Plan
	for _, id := range ids {
		p, err := getPlan(r, id, g.clock())
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		fmt.Fprintln(g.s.Err, "no plans yet: create one with `taskie plan new <id>`")
	}
	return out, nil
}

func printViolations(s *Streams, views []validateView) {
	c := s.out()
	for _, v := range views {
		for _, n := range v.Notes {
			defer fmt.Fprintf(s.Out, "%s: note: %s\n", v.Plan, n)
		}
		if len(v.Violations) == 0 {
			fmt.Fprintf(s.Out, "%s: %s\n", v.Plan, c.Green("ok"))
			continue
		}
		for _, x := range v.Violations {
			line := x.String()
			if x.Severity == plan.SeverityWarning {
				line = c.Yellow(line)
			} else {
				line = c.Red(line)
			}
			fmt.Fprintf(s.Out, "%s: %s\n", v.Plan, line)
		}
	}
}

// handEditViolations are the Status cells of tasks.md that do not render
// their task's lifecycle state: edits by hand, read as requested moves
// (docs/lifecycle.md). Warnings: the next commit makes the move when it is
// legal; until then they say how to settle it.
func handEditViolations(p *store.Plan) []plan.Violation {
	var out []plan.Violation
	for _, d := range cellDivergences(p) {
		line := 0
		if ts, _, err := p.Tasks(); err == nil && ts != nil {
			if t, ok := ts.Find(int(d.Task)); ok {
				line = t.Line
			}
		}
		out = append(out, plan.Violation{Rule: lifecycleRule, File: "tasks.md", Line: line, Severity: plan.SeverityWarning, Msg: d.String()})
	}
	return out
}

// cellDivergences lists the Status cells of tasks.md that do not render
// their task's lifecycle record (lifecycle.Divergences); none when either
// file is missing or does not read.
func cellDivergences(p *store.Plan) []lifecycle.Divergence {
	snap, err := p.Snapshot()
	if err != nil || snap.State == nil || snap.Tasks == nil {
		return nil
	}
	recs, err := taskrec.Records(snap.State)
	if err != nil || len(recs) == 0 {
		return nil
	}
	var out []lifecycle.Divergence
	for _, r := range taskrec.Fold(taskrec.Input{Tasks: snap.Tasks, Records: recs}) {
		if r.Diverged {
			out = append(out, lifecycle.Divergence{Task: r.ID, Cell: r.Cell, State: r.State})
		}
	}
	slices.SortFunc(out, func(a, b lifecycle.Divergence) int { return int(a.Task - b.Task) })
	return out
}
