package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// findingsOpts are the options of `taskie findings`.
type findingsOpts struct {
	s      *Streams
	g      *globals
	plan   string
	open   bool
	asJSON bool
}

// findingsView is `taskie findings --json`.
type findingsView struct {
	Plan   string       `json:"plan"`
	Review domain.Phase `json:"review,omitempty"` // "" outside every review cycle
	Task   string       `json:"task,omitempty"`
	// Iteration is the last review that reported findings.
	Iteration int              `json:"iteration"`
	Trend     []int            `json:"trend"`
	Findings  []ledger.Finding `json:"findings"`
}

func newFindingsCmd(s *Streams, g *globals) *cobra.Command {
	return newFindingsCmdWith(s, g, runFindings)
}

func newFindingsCmdWith(s *Streams, g *globals, run func(*findingsOpts) error) *cobra.Command {
	o := &findingsOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "findings [plan]",
		Short: "List the findings of the current review cycle (the review ledger)",
		Long: `List the findings that the reviewers of the current review cycle reported
with their stable ids (F1, F2, …), severity, status and the note
of their last change. Status "fixed?" is a finding the post-review marked
fixed that no reviewer has confirmed yet. Record what the post-review did with
one with ` + "`taskie finding fixed|declined`" + `.

On a terminal: a table and the cycle's trend; piped: a header of the keys of
a finding in --json (id, severity, title, file, line, status, opened, note,
by, reopened), then one tab-separated row per finding.`,
		Example: "  taskie findings --open\n  taskie findings --json",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.plan = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.open, "open", false, "only the open findings")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func runFindings(o *findingsOpts) error {
	s := o.s
	p, err := o.g.openPlan(o.plan)
	if err != nil {
		return err
	}
	st, err := p.State()
	if err != nil {
		return stateErr(p, err)
	}
	r, err := readLedger(p)
	if err != nil {
		return err
	}
	sr, l, inCycle := r.Current(st)
	if o.asJSON {
		return writeJSON(s.Out, findingsJSON(p.ID, sr, inCycle, l, o.open))
	}
	if !s.TTY {
		v := findingsJSON(p.ID, sr, inCycle, l, o.open)
		return findingsTable.print(s, len(v.Findings), func(i int, _ bool) []string {
			f := v.Findings[i]
			line := "-"
			if f.Line > 0 {
				line = strconv.Itoa(f.Line)
			}
			return []string{f.ID, string(f.Severity), f.Title, orNone(f.File), line, string(f.Status), strconv.Itoa(f.Opened),
				orNone(f.Note), orNone(f.By), strconv.Itoa(f.Reopened)}
		})
	}
	rows := ledger.Table(l, o.open)
	switch {
	case !inCycle:
		fmt.Fprintf(s.Err, "plan %s is in no review cycle: no findings to show\n", p.ID)
		return nil
	case len(l.Findings()) == 0:
		fmt.Fprintf(s.Err, "%s: no findings recorded in this review cycle\n", sr)
		return nil
	}
	fmt.Fprintf(s.Out, "%s, review %d: %s open\n\n", sr, l.Iteration(), ledger.TrendString(l))
	if len(rows) == 0 {
		fmt.Fprintln(s.Out, "(none open)")
		return nil
	}
	t := findingsTable
	t.heads = ledger.Header()
	return t.print(s, len(rows), func(i int, _ bool) []string { return rows[i] })
}

// findingsTable prints the findings; piped, its columns are the keys of
// each finding of --json.
var findingsTable = table{cols: []string{"id", "severity", "title", "file", "line", "status", "opened", "note", "by", "reopened"}}

func findingsJSON(plan string, sr ledgerlog.Series, inCycle bool, l ledger.Ledger, open bool) findingsView {
	v := findingsView{Plan: plan, Iteration: l.Iteration(), Trend: ledger.Trend(l), Findings: []ledger.Finding{}}
	if inCycle {
		v.Review, v.Task = sr.Review, sr.Task.String()
	}
	for _, f := range l.Findings() {
		if !open || f.Status == ledger.Open {
			v.Findings = append(v.Findings, f)
		}
	}
	return v
}
