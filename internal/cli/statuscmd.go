package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/needs"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

type statusView struct {
	// NeedsYou is what needs a human (docs/needs-you.md): every plan's
	// when status names no plan.
	NeedsYou    []needsView   `json:"needs_you,omitempty"`
	Plan        string        `json:"plan"`
	HasState    bool          `json:"has_state"`
	Stage       string        `json:"stage"`
	Phase       string        `json:"phase"` // a phase, or "(no state.json)"
	NextPhase   *domain.Phase `json:"next_phase"`
	Mode        string        `json:"mode"`
	Paused      bool          `json:"paused"`
	TDD         bool          `json:"tdd"`
	CurrentTask *string       `json:"current_task"` // as state.json writes it
	// TaskState is the current task's lifecycle state when it waits on
	// someone other than its agent (cto_intervention, human_escalation),
	// and TaskNext what happens next; "" otherwise.
	TaskState string         `json:"task_state,omitempty"`
	TaskNext  string         `json:"task_next,omitempty"`
	TaskTitle string         `json:"task_title,omitempty"`
	Review    *reviewView    `json:"review,omitempty"`
	Tasks     taskCounts     `json:"tasks"`
	ByStatus  map[string]int `json:"tasks_by_status"`
	// Running is the review in progress, if any.
	Running *runningView `json:"running_review,omitempty"`
	// LastHook is the hook's last decision when it failed or refused.
	LastHook *hookDecisionView `json:"last_hook_problem,omitempty"`
	// Claims are the agents' claims on tasks, with their leases (docs/parallel.md).
	Claims []claimStatusView `json:"claims,omitempty"`
	// You is the agent name this runner's commands use (docs/parallel.md).
	You string `json:"-"`
	// Wave is where a plan run with claims stands in its waves.
	Wave *waveStatus `json:"wave,omitempty"`
	// Timeouts are the tasks at 80 % of their lifecycle timeout or more (docs/lifecycle.md#timeouts).
	Timeouts []lifecycleAlert `json:"lifecycle_timeouts,omitempty"`
	// HandEdits are tasks.md Status cells that do not render their task's
	// lifecycle state (docs/lifecycle.md): one line each, how to settle it.
	HandEdits []string `json:"status_hand_edits,omitempty"`
	// ledgerStatus: needs_human, the cycle's findings trend, what reviews cost (docs/ledger.md).
	ledgerStatus
	// ReviewTime is how many reviews ran, how long they took and what they
	// cost, over the plan's whole life; nil before the first review.
	ReviewTime *reviewTotals `json:"review_totals,omitempty"`
}

type reviewView struct {
	Review     domain.Phase `json:"review"`
	Iteration  int          `json:"iteration"`
	MaxReviews int          `json:"max_reviews"`
	NextModel  domain.Model `json:"next_model"`
	Clean      int          `json:"consecutive_clean"`
	Needed     int          `json:"clean_needed"`
}

// waveStatus is "wave 2 of 4": the lowest of the plan's waves with an
// unfinished task (0 when all are finished), of how many.
type waveStatus struct {
	Current int `json:"current"`
	Total   int `json:"total"`
}

type taskCounts struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// statusOpts are the options of `taskie status`.
type statusOpts struct {
	s      *Streams
	g      *globals
	ctx    context.Context // ends --watch
	plan   string
	asJSON bool
	watch  bool
	all    bool
	check  bool
}

// ExitNeedsYou is the exit code of `taskie status --check` when something
// needs a human.
const ExitNeedsYou = 3

func newStatusCmd(s *Streams, g *globals) *cobra.Command { return newStatusCmdWith(s, g, runStatus) }

func newStatusCmdWith(s *Streams, g *globals, run func(*statusOpts) error) *cobra.Command {
	o := &statusOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "status [plan]",
		Short: "Show where a plan stands: phase, task, review cycle, progress",
		Long: `Show where a plan stands: phase, task, review cycle, task progress, a review
that is running right now, and the hook's last decision when it failed or
refused. --watch redraws whenever it changes, until interrupted. --all prints
one row per plan instead (as taskie plan list).

It starts with what needs you (docs/needs-you.md): every plan's when no plan
is named. --check exits 3 when that list is not empty (for scripts and CI).`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx, o.plan = cmd.Context(), firstArg(args)
			if o.check && o.watch {
				return usageErr(errors.New("--check prints once: it takes no --watch"), "usage: taskie status [plan] --check")
			}
			if o.all && (len(args) > 0 || o.watch) {
				return usageErr(errors.New("--all shows every plan: it takes no plan and no --watch"), "usage: taskie status --all [--json]")
			}
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&o.watch, "watch", false, "redraw on every change until interrupted")
	c.Flags().BoolVar(&o.all, "all", false, "a table of every plan: phase, next, tasks, review cycle, paused, owner")
	c.Flags().BoolVar(&o.check, "check", false, "exit 3 when something needs you")
	return c
}

func runStatus(o *statusOpts) error {
	if o.all {
		if o.check {
			r, err := o.g.repo()
			if err != nil {
				return err
			}
			items, err := needsOf(r, nil, o.g.clock())
			if err != nil {
				return err
			}
			if !o.asJSON {
				printNeedsTop(o.s.Out, items)
			}
			if err := runPlanList(&planListOpts{s: o.s, g: o.g, asJSON: o.asJSON}); err != nil {
				return err
			}
			return needsExit(items)
		}
		return runPlanList(&planListOpts{s: o.s, g: o.g, asJSON: o.asJSON})
	}
	p, err := o.g.openPlan(o.plan)
	if err != nil {
		return err
	}
	warnTimeouts(o.s, p)
	if o.watch {
		return watchStatus(o.ctx, o.s, p, o.asJSON)
	}
	// Named: that plan's items; else every plan's.
	var only *store.Plan
	if o.plan != "" || o.g.plan != "" {
		only = p
	}
	items, err := needsOf(p.Repo, only, o.g.clock(), p)
	if err != nil {
		return err
	}
	v, err := buildStatus(p)
	if err != nil {
		return err
	}
	v.NeedsYou = needsViews(items)
	if w := claimsWarning(p); w != "" {
		fmt.Fprintf(o.s.Err, "taskie: warning: %s\n", w)
	}
	if o.asJSON {
		if err := writeJSON(o.s.Out, v); err != nil {
			return err
		}
	} else {
		printNeedsTop(o.s.Out, items)
		printStatus(o.s.Out, v, o.s.TTY)
	}
	if o.check {
		return needsExit(items)
	}
	return nil
}

// needsExit is --check's exit: 3 when something needs you.
func needsExit(items []needs.Item) error {
	if len(items) == 0 {
		return nil
	}
	return &exitError{code: ExitNeedsYou, err: errSilent}
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func buildStatus(p *store.Plan) (*statusView, error) {
	v := &statusView{Plan: p.ID, ByStatus: map[string]int{}}
	v.Running = runningReview(p, time.Now())
	v.Claims = planClaims(p)
	v.You = whoAmI(p)
	recs := planRecords(p, taskrec.Input{})
	v.Timeouts = lifecycleAlerts(p, recs)
	for _, d := range cellDivergences(p) {
		v.HandEdits = append(v.HandEdits, d.String())
	}
	v.HandEdits = append(v.HandEdits, seenCommits(p)...)
	if v.Running == nil {
		v.LastHook = lastHookProblem(p)
	}
	if _, _, err := p.Tasks(); err != nil {
		return nil, err
	}
	countTasks(v, recs)
	if cur, total, ok := implied.Wave(p); ok {
		v.Wave = &waveStatus{Current: cur, Total: total}
	}
	v.ReviewTime = reviewTotalsOf(p)
	st, err := p.State()
	if errors.Is(err, state.ErrNotFound) {
		v.Stage, v.Phase, v.Mode = "Unknown", "(no state.json)", "standalone"
		return v, nil
	}
	if err != nil {
		return nil, stateErr(p, err)
	}
	v.HasState = true
	v.ledgerStatus = ledgerStatusOf(p, st)
	v.Stage, v.Phase, v.NextPhase = workflow.Stage(st.Phase), string(st.Phase), st.NextPhase
	if st.CurrentTask != nil {
		t := st.CurrentTask.String()
		v.CurrentTask = &t
	}
	v.Paused, v.TDD, v.Mode = !st.IsEnabled(), st.TDD, "standalone"
	if st.Next() != "" {
		v.Mode = "automated"
	}
	if st.Phase == domain.Complete {
		v.Mode = "done"
	}
	if r, ok := taskrec.Find(recs, st.Task()); ok && st.Task() != 0 {
		v.TaskTitle = r.Title
		v.TaskState, v.TaskNext = escalationNext(st, r)
	}
	if r := cycleReview(st); r != "" {
		v.Review = &reviewView{Review: r, Iteration: st.Iteration(), MaxReviews: st.MaxReviews,
			NextModel: st.ReviewModel, Clean: st.ConsecutiveClean, Needed: domain.CleanToPass}
	}
	return v, nil
}

// escalationNext names the escalation the current task r is in and what
// happens next (docs/lifecycle.md, "The CTO"); "" when it is in none.
func escalationNext(st *state.State, r taskrec.Record) (string, string) {
	if !r.Recorded {
		return "", ""
	}
	switch r.State {
	case lifecycle.CTOIntervention:
		if st.Phase == domain.PostCodeReview || st.Next() == domain.PostCodeReview {
			return string(r.State), "the CTO review runs at the next stop, once the post-review is recorded (`taskie done post-code-review`)"
		}
		return string(r.State), "the CTO review runs at the next stop"
	case lifecycle.HumanEscalation:
		return string(r.State), fmt.Sprintf("a human decides: `taskie task resolve %d --actor human` resumes it", r.ID)
	}
	return "", ""
}

// cycleReview names the review cycle a state is in, "" when none.
func cycleReview(st *state.State) domain.Phase {
	for _, p := range []domain.Phase{st.Next(), st.Phase} {
		if domain.IsReview(p) {
			return p
		}
		if r := domain.ReviewOf(p); r != "" {
			return r
		}
	}
	return ""
}

// countTasks counts tasks.md's rows by their one status (the Status cell
// that renders the task's record): a task whose commit has been seen
// counts as done already, as its record says (the next change writes the
// cell).
func countTasks(v *statusView, rs []taskrec.Record) {
	for _, r := range rs {
		if !r.Row {
			continue
		}
		st := r.Display
		v.ByStatus[st]++
		if st == plan.StatusCancelled {
			continue
		}
		v.Tasks.Total++
		if st == plan.StatusDone {
			v.Tasks.Done++
		}
	}
}

func printStatus(w io.Writer, v *statusView, tty bool) {
	fmt.Fprintf(w, "plan:    %s\n", v.Plan)
	fmt.Fprintf(w, "stage:   %s\n", v.Stage)
	fmt.Fprintf(w, "phase:   %s\n", phaseLine(v))
	if v.CurrentTask != nil {
		title := ""
		if v.TaskTitle != "" {
			title = " — " + v.TaskTitle
		}
		esc := ""
		if v.TaskState != "" {
			esc = fmt.Sprintf(" [%s: %s]", v.TaskState, v.TaskNext)
		}
		fmt.Fprintf(w, "task:    %s%s%s\n", *v.CurrentTask, title, esc)
	}
	if r := v.Review; r != nil {
		fmt.Fprintf(w, "review:  %s iteration %d/%d, next model %s, clean %d/%d\n",
			r.Review, r.Iteration, r.MaxReviews, r.NextModel, r.Clean, r.Needed)
	}
	if r := v.Running; r != nil {
		task := ""
		if r.Task != "" {
			task = " (task " + r.Task + ")"
		}
		fmt.Fprintf(w, "running: %s iteration %d%s, model %s, reviewer %s, started %s, %s ago\n",
			r.Review, r.Iteration, task, r.Model, r.Reviewer, r.Started.Local().Format("15:04:05"), r.Elapsed)
	}
	if h := v.LastHook; h != nil {
		fmt.Fprintf(w, "hook:    %s %s at %s: %s (%s)\n", h.what(), h.Decision, h.Time.Local().Format("15:04:05"), h.Why, h.see(v.Plan))
	}
	fmt.Fprintf(w, "tasks:   %s\n", progress(v.Tasks.Done, v.Tasks.Total, tty))
	if wv := v.Wave; wv != nil && wv.Current > 0 {
		fmt.Fprintf(w, "wave:    %d of %d\n", wv.Current, wv.Total)
	} else if wv != nil {
		fmt.Fprintf(w, "wave:    all %d done\n", wv.Total)
	}
	v.ledgerStatus.print(w)
	if t := v.ReviewTime; t != nil {
		fmt.Fprintf(w, "reviews: %s\n", t.text())
	}
	if len(v.Claims) > 0 { // which claims are this runner's
		fmt.Fprintf(w, "you are: %s\n", v.You)
	}
	printClaims(w, v.Claims)
	printLifecycleAlerts(w, v.Timeouts)
	for _, h := range v.HandEdits {
		fmt.Fprintf(w, "tasks.md: %s\n", h)
	}
}

// progress renders "3/6 done", with a bar on a terminal.
func progress(done, total int, tty bool) string {
	text := fmt.Sprintf("%d/%d done", done, total)
	if total == 0 {
		return "none yet (write tasks.md: a table with Id and Status columns; `taskie help validation`)"
	}
	if !tty {
		return text
	}
	const width = 20
	filled := done * width / total
	return "[" + strings.Repeat("█", filled) + strings.Repeat("░", width-filled) + "] " + text
}
