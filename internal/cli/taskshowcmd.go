package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// taskShowOpts are the options of `taskie task show`.
type taskShowOpts struct {
	s      *Streams
	g      *globals
	task   string
	asJSON bool
}

func newTaskShowCmd(s *Streams, g *globals) *cobra.Command {
	o := &taskShowOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "show <task> [--json]",
		Short: "Show a task's whole record: row, lifecycle, claim, result, review cycle, commits",
		Long: `Show everything taskie holds about one task: its row of tasks.md (every
column), its lifecycle state and time in it, failures per state and CTO attempts
(as ` + "`taskie query`" + ` reads them), its claim (holder, lease), its latest result,
the review cycle when it is the current task (phase, iteration, open findings)
and the commits its results named. Reads only.`,
		Example: "  taskie task show 3\n  taskie task show 3 --json",
		Args:    exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return runTaskShow(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the record as JSON")
	return c
}

// taskShowView is `taskie task show --json`.
type taskShowView struct {
	Plan      string            `json:"plan"`
	Task      string            `json:"task"`
	Title     string            `json:"title"`
	Status    string            `json:"status"`
	DependsOn []string          `json:"depends_on"`
	Files     []string          `json:"files"`
	Row       map[string]string `json:"row"`
	TaskFile  string            `json:"task_file,omitempty"` // "" when missing
	Lifecycle *queryView        `json:"lifecycle"`           // nil: no record
	Claim     *claimStatusView  `json:"claim"`
	Result    *resultView       `json:"result"`
	Review    *taskReviewView   `json:"review,omitempty"` // the current task only
	Commits   []string          `json:"commits"`

	header []string // the row's columns in table order, for the text
}

// taskReviewView is the review cycle of the current task.
type taskReviewView struct {
	Phase      string        `json:"phase"`
	Next       string        `json:"next_phase,omitempty"`
	Iteration  int           `json:"iteration"`
	MaxReviews int           `json:"max_reviews"`
	Open       int           `json:"open_findings"`
	Findings   []openFinding `json:"findings"`
	Trend      []int         `json:"trend,omitempty"`
}

// openFinding is one open finding of the current cycle.
type openFinding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
}

func runTaskShow(o *taskShowOpts) error {
	cp, err := o.g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	p := cp.p
	task, err := p.TaskID(o.task)
	if err != nil {
		return usageErr(err, "")
	}
	ts, _, err := p.Tasks()
	if err != nil {
		return err
	}
	row, _ := ts.Find(int(task))
	recs := planRecords(p, taskrec.Input{})
	rec, _ := taskrec.Find(recs, task)
	lv := newTaskListView(rec)
	v := taskShowView{Plan: p.ID, Task: lv.Task, Title: rec.Title, Status: lv.Status, DependsOn: lv.DependsOn,
		Files: append([]string{}, row.Files...), Row: row.CellMap(), header: ts.Header, Commits: []string{}}
	if p.Exists(plan.TaskFile(int(task))) {
		v.TaskFile = store.Rel(p.ID, plan.TaskFile(int(task)))
	}
	now := p.Store.Now()
	if lv.State != "" {
		timeouts, err := lifecycleTimeouts(p)
		if err != nil {
			warnTimeouts(o.s, p)
			timeouts = lifecycle.DefaultTimeouts()
		}
		q := newQueryView(rec.Life, now, timeouts, taskrec.ReadyAt(recs))
		v.Lifecycle = &q
	}
	for _, c := range planClaims(p) {
		if c.Task == task.String() {
			v.Claim = &c
			break
		}
	}
	if err := showResultAndCommits(cp, task, &v); err != nil {
		return err
	}
	if st, err := p.State(); err == nil && st != nil && st.Task() == task {
		v.Review = reviewOfTask(cp, st)
	}
	if o.asJSON {
		return writeJSON(o.s.Out, v)
	}
	printTaskShow(o.s.Out, v)
	return nil
}

// showResultAndCommits fills the latest result and the commits every
// complete result of the task named, oldest first.
func showResultAndCommits(cp *coordPlan, task domain.TaskID, v *taskShowView) error {
	res, err := cp.results()
	if err != nil {
		return dbErr(err)
	}
	if e, ok := res.latest[task]; ok {
		m := resultOf(e)
		v.Result = &resultView{Result: parallel.Result{Task: task, Commit: m.Commit, Status: resultStatus(e)}, Agent: e.Actor, At: e.TS,
			Note: m.Note, Action: m.Action, Attempt: m.Attempt}
	}
	return cp.c.ScanEvents(cp.ctx, cp.key, func(e events.Event) {
		if e.Event != store.EventTaskResult || e.Task != task.String() {
			return
		}
		if c := resultOf(e).Commit; c != "" && !slices.Contains(v.Commits, c) {
			v.Commits = append(v.Commits, c)
		}
	})
}

// reviewOfTask is the review cycle of the current task: the state's phase
// and iteration, and the open findings of the cycle's ledger.
func reviewOfTask(cp *coordPlan, st *state.State) *taskReviewView {
	r := &taskReviewView{Phase: string(st.Phase), Next: string(st.Next()), Iteration: st.Iteration(), MaxReviews: st.MaxReviews, Findings: []openFinding{}}
	lr, err := readLedger(cp.p)
	if err != nil {
		return r
	}
	if _, l, ok := lr.Current(st); ok {
		r.Trend = ledger.Trend(l)
		for _, f := range l.Findings() {
			if f.Status == ledger.Open {
				r.Findings = append(r.Findings, openFinding{ID: f.ID, Severity: string(f.Severity), Title: f.Title})
			}
		}
		r.Open = len(r.Findings)
	}
	return r
}

func printTaskShow(w io.Writer, v taskShowView) {
	fmt.Fprintf(w, "task %s: %s\n", v.Task, oneLineCell(v.Title))
	for _, h := range v.header {
		if val, ok := v.Row[h]; ok {
			fmt.Fprintf(w, "  %s: %s\n", h, orNone(val))
		}
	}
	if v.TaskFile != "" {
		fmt.Fprintf(w, "file:       %s\n", v.TaskFile)
	}
	if l := v.Lifecycle; l != nil {
		fmt.Fprintf(w, "lifecycle:  %s for %s (since %s", l.State, domain.ShortDuration(time.Duration(l.InState)*time.Second), l.Since)
		if l.Timeout > 0 {
			fmt.Fprintf(w, "; timeout %s, %s", domain.ShortDuration(time.Duration(l.Timeout)*time.Second), l.Level)
		}
		fmt.Fprintln(w, ")")
		fmt.Fprintf(w, "failures:   %s\n", failures(*l))
	} else {
		fmt.Fprintln(w, "lifecycle:  - (no record: tasks.md marks it finished)")
	}
	if c := v.Claim; c != nil {
		left := "expires in " + c.ExpiresIn
		if !c.Live {
			left = c.ExpiresIn
		}
		fmt.Fprintf(w, "claim:      %s, %s (%s)\n", c.Agent, left, c.Expires.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "claim:      -")
	}
	if r := v.Result; r != nil {
		line := parallel.ResultRef(r.Task, r.Commit, r.Status)
		if r.Agent != "" {
			line += " by " + r.Agent
		}
		if r.Note != "" {
			line += ": " + r.Note
		}
		fmt.Fprintf(w, "result:     %s\n", line)
	} else {
		fmt.Fprintln(w, "result:     -")
	}
	if r := v.Review; r != nil {
		next := r.Next
		if next == "" {
			next = "null"
		}
		fmt.Fprintf(w, "review:     current task: phase %s → %s, iteration %d of %d, %d open finding(s)\n", r.Phase, next, r.Iteration, r.MaxReviews, r.Open)
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %s %s: %s\n", f.ID, f.Severity, oneLineCell(f.Title))
		}
	}
	fmt.Fprintf(w, "commits:    %s\n", orNone(strings.Join(v.Commits, ", ")))
}
