package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

func newPlanCmd(s *Streams, g *globals) *cobra.Command {
	c := &cobra.Command{Use: "plan", Short: "Create and list plans"}
	c.AddCommand(newPlanNewCmd(s, g), newPlanListCmd(s, g))
	return c
}

type planNewOpts struct{ tdd, auto bool }

func newPlanNewCmd(s *Streams, g *globals) *cobra.Command {
	o := &planNewOpts{}
	c := &cobra.Command{
		Use:   "new <id>",
		Short: "Create a plan: .taskie/plans/<id>/ with plan.md and state.json",
		Long: `Create a plan directory with a plan.md to fill in and a state.json in phase
new-plan. With --auto the Stop hook reviews the plan at the agent's next stop
(automated mode); without it the plan is standalone (next_phase null).`,
		Args: exactArgs(1, "a plan id"),
		RunE: func(_ *cobra.Command, args []string) error { return runPlanNew(s, g, args[0], o) },
	}
	c.Flags().BoolVar(&o.tdd, "tdd", false, "implement tasks test-first")
	c.Flags().BoolVar(&o.auto, "auto", false, "automated mode: reviews run at the next stop")
	return c
}

func runPlanNew(s *Streams, g *globals, id string, o *planNewOpts) error {
	if err := plan.ValidID(id); err != nil {
		return usageErr(err, "")
	}
	cwd, err := g.cwd()
	if err != nil {
		return err
	}
	r, err := plan.Find(cwd)
	if errors.Is(err, plan.ErrNoTaskie) {
		if _, err := initProject(cwd); err != nil {
			return err
		}
		r, err = plan.Find(cwd)
	}
	if err != nil {
		return err
	}
	dir, err := r.PlanDir(id)
	if err != nil {
		return usageErr(err, "")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if os.IsExist(err) {
			return usageErr(fmt.Errorf("plan %q already exists at %s", id, dir), "pick another id, or continue it with `taskie continue --plan "+id+"`")
		}
		return err
	}
	cfg, err := config.Load(r.TaskieDir())
	if err != nil {
		return usageErr(err, "fix .taskie/config.json; `taskie config` shows the effective values")
	}
	fs, err := store.Open(r)
	if err != nil {
		return err
	}
	defer fs.Close()
	p, err := project.With(fs, id)
	if err != nil {
		return err
	}
	_, st, err := changeWith(p, "plan created", true, func(*store.Snapshot, *state.State) (store.Change, error) {
		n := state.New()
		n.TDD, n.MaxReviews, n.ReviewModel = o.tdd, cfg.MaxReviews, workflow.FirstModel(cfg.Models)
		if o.auto {
			n.NextPhase = state.Opt(domain.PlanReview)
			n.PhaseIteration = state.Int(0)
		}
		return store.Change{State: n, Files: map[string][]byte{"plan.md": []byte("# Plan: " + id + "\n\n")},
			Events: []events.Event{{Event: events.PlanCreated, Actor: "cli", Meta: map[string]any{"tdd": o.tdd, "auto": o.auto}}}}, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%s\n", dir)
	fmt.Fprintf(s.Err, "created plan %s (phase %s, next %s): write the plan in %s\n", id, st.Phase, orNull(st.Next()), filepath.Join(dir, "plan.md"))
	return nil
}

func orNull[T ~string](s T) string {
	if s == "" {
		return "null"
	}
	return string(s)
}

func newPlanListCmd(s *Streams, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the plans with their phase",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			r, err := g.repo()
			if err != nil {
				return err
			}
			ids, err := r.Plans()
			if err != nil {
				return err
			}
			type row struct {
				ID    string        `json:"id"`
				Phase domain.Phase  `json:"phase"`
				Next  *domain.Phase `json:"next_phase"`
			}
			rows := []row{}
			for _, id := range ids {
				p, err := project.Get(r, id)
				if err != nil {
					continue
				}
				rw := row{ID: id, Phase: "?"}
				if st, err := p.State(); err == nil {
					rw.Phase, rw.Next = st.Phase, st.NextPhase
				}
				rows = append(rows, rw)
			}
			if asJSON {
				return writeJSON(s.Out, rows)
			}
			for _, rw := range rows {
				next := "null"
				if rw.Next != nil {
					next = string(*rw.Next)
				}
				fmt.Fprintf(s.Out, "%s\t%s\t%s\n", rw.ID, rw.Phase, next)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
