package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
)

type validateView struct {
	Plan       string           `json:"plan"`
	Valid      bool             `json:"valid"`
	Violations []plan.Violation `json:"violations"`
}

func newValidateCmd(s *Streams, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "validate [plan]",
		Short: "Check plan directories against the rules (every plan when none is named)",
		Long: `Check a plan directory (every plan when none is named, or --plan) against the
nine rules of the plan format and print every violation with its file.
Exit 1 when there are errors; warnings (state.json) alone exit 0.`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			plans, err := plansToValidate(g, firstArg(args))
			if err != nil {
				return err
			}
			views := make([]validateView, 0, len(plans))
			bad := false
			for _, p := range plans {
				vs := p.Validate()
				if vs == nil {
					vs = []plan.Violation{}
				}
				views = append(views, validateView{Plan: p.ID, Valid: !plan.HasErrors(vs), Violations: vs})
				bad = bad || plan.HasErrors(vs)
			}
			if asJSON {
				if err := writeJSON(s.Out, views); err != nil {
					return err
				}
			} else {
				printViolations(s, views)
			}
			if bad {
				return errProblems
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func plansToValidate(g *globals, id string) ([]*project.Plan, error) {
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
	var out []*project.Plan
	for _, id := range ids {
		p, err := project.Get(r, id)
		if err != nil {
			return nil, usageErr(err, "")
		}
		out = append(out, p)
	}
	return out, nil
}

func printViolations(s *Streams, views []validateView) {
	for _, v := range views {
		if len(v.Violations) == 0 {
			fmt.Fprintf(s.Out, "%s: ok\n", v.Plan)
			continue
		}
		for _, x := range v.Violations {
			fmt.Fprintf(s.Out, "%s: %s\n", v.Plan, x)
		}
	}
}
