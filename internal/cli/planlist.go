package cli

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// planListOpts are the options of `taskie plan list` and
// `taskie status --all`: the table of every plan.
type planListOpts struct {
	s      *Streams
	g      *globals
	asJSON bool
}

func newPlanListCmd(s *Streams, g *globals) *cobra.Command {
	return newPlanListCmdWith(s, g, runPlanList)
}

func newPlanListCmdWith(s *Streams, g *globals, run func(*planListOpts) error) *cobra.Command {
	o := &planListOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "list",
		Short: "Every plan: phase, next, task progress, review cycle, paused, owner",
		Long: `Print one row per plan: its phase, the next phase, tasks done/total, the review
cycle it is in, whether automation is paused and the agent session that owns it.
The default plan (the one commands act on without --plan) is marked *. On a
terminal the columns are aligned, with colour; piped, they are separated by
tabs, with the header first. Same as taskie status --all.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

// planRow is one plan of the table.
type planRow struct {
	ID      string        `json:"id"`
	Default bool          `json:"default"`
	State   string        `json:"state"` // ok, missing or unreadable (state.json)
	Problem string        `json:"problem,omitempty"`
	Phase   *domain.Phase `json:"phase"`
	Next    *domain.Phase `json:"next_phase"`
	Mode    string        `json:"mode"` // automated, standalone or done
	Tasks   taskCounts    `json:"tasks"`
	Review  *reviewView   `json:"review"`
	Paused  bool          `json:"paused"`
	Owner   string        `json:"owner"`
	Changed time.Time     `json:"changed"`
}

func runPlanList(o *planListOpts) error {
	r, err := o.g.repo()
	if err != nil {
		return err
	}
	rows, err := planRows(r, o.g.clock())
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(o.s.Out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(o.s.Err, "no plans yet: create one with `taskie plan new <id>`")
	}
	return printPlanTable(o.s, rows)
}

// planRows reads every plan of the project.
func planRows(r *plan.Repo, now clock.Clock) ([]planRow, error) {
	ids, err := r.Plans()
	if err != nil {
		return nil, err
	}
	def, _, _, _ := pickDefault(r)
	rows := []planRow{}
	for _, id := range ids {
		p, err := implied.Get(r, id, now)
		if err != nil {
			continue
		}
		rows = append(rows, planRowOf(p, id == def))
	}
	return rows, nil
}

func planRowOf(p *store.Plan, isDefault bool) planRow {
	row := planRow{ID: p.ID, Default: isDefault, State: "ok", Mode: "standalone", Changed: p.Repo.Mtime(p.ID)}
	if _, _, err := p.Tasks(); err == nil {
		v := &statusView{ByStatus: map[string]int{}}
		countTasks(v, planRecords(p, taskrec.Input{}))
		row.Tasks = v.Tasks
	}
	st, err := p.State()
	switch {
	case errors.Is(err, state.ErrNotFound):
		row.State = "missing"
		return row
	case err != nil:
		row.State, row.Problem = "unreadable", err.Error()
		return row
	}
	ph := st.Phase
	row.Phase, row.Next, row.Paused, row.Owner = &ph, st.NextPhase, !st.IsEnabled(), st.SessionID
	switch {
	case st.Phase == domain.Complete:
		row.Mode = "done"
	case st.Next() != "":
		row.Mode = "automated"
	}
	if rv := cycleReview(st); rv != "" {
		row.Review = &reviewView{Review: rv, Iteration: st.Iteration(), MaxReviews: st.MaxReviews,
			NextModel: st.ReviewModel, Clean: st.ConsecutiveClean, Needed: domain.CleanToPass}
	}
	return row
}

// printPlanTable prints the rows: aligned with colour on a terminal;
// piped, a header of the --json keys then tab-separated columns.
func printPlanTable(s *Streams, rows []planRow) error {
	t := table{cols: []string{"id", "default", "state", "problem", "phase", "next_phase", "mode", "tasks", "review", "paused", "owner", "changed"},
		heads: []string{"  PLAN", "PHASE", "NEXT", "TASKS", "REVIEW", "PAUSED", "OWNER"},
		paint: func(c palette, row, col int, text string) string {
			switch {
			case col == 1:
				return colorPhase(c, text, rows[row])
			case col == 5:
				return c.Yellow(text)
			case col == 0 && rows[row].Default:
				return c.Bold(text)
			}
			return text
		}}
	return t.print(s, len(rows), func(i int, tty bool) []string {
		if tty {
			return planCells(rows[i], true)
		}
		r := rows[i]
		phase, next, review := "-", "-", "-"
		if r.Phase != nil {
			phase = string(*r.Phase)
		}
		if r.Next != nil {
			next = string(*r.Next)
		}
		if rv := r.Review; rv != nil {
			review = fmt.Sprintf("%s %d/%d", rv.Review, rv.Iteration, rv.MaxReviews)
		}
		return []string{r.ID, strconv.FormatBool(r.Default), r.State, orNone(r.Problem), phase, next, r.Mode,
			fmt.Sprintf("%d/%d", r.Tasks.Done, r.Tasks.Total), review, strconv.FormatBool(r.Paused), orNone(r.Owner), rfc3339(r.Changed)}
	})
}

// planCells renders one row as plain text.
func planCells(r planRow, tty bool) []string {
	id := r.ID
	if tty {
		mark := "  "
		if r.Default {
			mark = "* "
		}
		id = mark + id
	}
	phase, next := "-", "-"
	switch r.State {
	case "missing":
		phase = "(no state.json)"
	case "unreadable":
		phase = "(state.json unreadable)"
	default:
		phase = string(*r.Phase)
		if r.Next != nil {
			next = string(*r.Next)
		}
	}
	tasks := fmt.Sprintf("%d/%d", r.Tasks.Done, r.Tasks.Total)
	if r.Tasks.Total == 0 {
		tasks = "-"
	}
	review := "-"
	if rv := r.Review; rv != nil {
		review = fmt.Sprintf("%s %d/%d", rv.Review, rv.Iteration, rv.MaxReviews)
	}
	paused := "-"
	if r.Paused {
		paused = "paused"
	}
	owner := r.Owner
	if owner == "" {
		owner = "-"
	} else if tty && len(owner) > 8 {
		owner = owner[:8] + "…"
	}
	return []string{id, phase, next, tasks, review, paused, owner}
}

// colorPhase colours a phase cell by mode: green when done, cyan when
// automated, red when state.json is missing or unreadable.
func colorPhase(c palette, text string, r planRow) string {
	switch {
	case r.State != "ok":
		return c.Red(text)
	case r.Mode == "done":
		return c.Green(text)
	case r.Mode == "automated":
		return c.Cyan(text)
	}
	return text
}
