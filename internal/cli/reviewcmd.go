package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/reviewrun"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// reviewOpts are the options of `taskie review`.
type reviewOpts struct {
	s      *Streams
	g      *globals
	kind   string // plan, tasks, code, all-code; "" = the one that fits the phase
	task   string
	asJSON bool
}

func newReviewCmd(s *Streams, g *globals) *cobra.Command { return newReviewCmdWith(s, g, runReview) }

func newReviewCmdWith(s *Streams, g *globals, run func(*reviewOpts) error) *cobra.Command {
	o := &reviewOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "review [--kind plan|tasks|code|all-code] [--task T]",
		Short: "Run the independent reviewer now, from the shell, on a standalone plan",
		Long: `Run the independent reviewer (claude or codex, as configured) now, the way the
Stop hook would, and print its verdict. The review goes to the next review file
of its series (task-3-review-2.md, …); the phase becomes the review when that
is a legal move, with the iteration and the clean count, but next_phase stays
null: nothing runs at the agent's stops. Address the review in its
post-review file, record it with taskie done post-<kind>-review, and run
taskie review again; two PASS in a row are what the hook would call passed.
It runs through the hook's review runner: findings go to the review ledger
(taskie findings), and it refuses once budget_usd or review_budget is spent.

The kind defaults to the review that fits the plan's phase; code reviews are
of --task, else the current task. An automated plan (next_phase set) is
refused: the hook runs its reviews. Exit 0 on PASS, 1 on FAIL, 2 when the
review could not run (the reviewer's output is kept in .taskie/logs/).`,
		Example: "  taskie review --kind plan\n  taskie review --kind code --task 3\n  taskie review --json",
		Args:    exactArgs(0, "no arguments (use --kind and --task)"),
		RunE:    func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().StringVar(&o.kind, "kind", "", "plan, tasks, code or all-code (default: the review that fits the phase)")
	c.Flags().StringVar(&o.task, "task", "", "code review: the task (default: the current task)")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the verdict and the resulting state as JSON")
	return c
}

// reviewResultView is `taskie review --json`.
type reviewResultView struct {
	changedView
	Review     domain.Phase   `json:"review"`
	Task       string         `json:"task,omitempty"`
	Iteration  int            `json:"iteration"`
	Reviewer   string         `json:"reviewer"`
	Model      domain.Model   `json:"model"`
	Verdict    domain.Verdict `json:"verdict"`
	ReviewFile string         `json:"review_file"`
	CostUSD    float64        `json:"cost_usd"`
	DurationMS int64          `json:"duration_ms"`
	Recorded   bool           `json:"phase_recorded"` // the phase moved to the review
}

// reviewJob is one standalone review, decided before the reviewer runs.
type reviewJob struct {
	p     *store.Plan
	cfg   config.Config
	run   *reviewrun.Runner // the hook's runner: lock, reviewer, ledger
	job   reviewrun.Job
	files []string // the task files named in tasks.md
}

func runReview(o *reviewOpts) error {
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	j, err := planReview(p, o)
	if err != nil {
		return err
	}
	lock, ok, err := j.run.Lock()
	if err != nil {
		return err
	}
	if !ok {
		return usageErr(fmt.Errorf("a review of plan %s is running", p.ID), "wait for it to finish (`taskie status --watch` shows it), then run taskie review again")
	}
	// Closed, not unlocked: a reviewer that inherited the lock keeps it.
	defer lock.Release()
	done, err := j.run.Review(j.job, lock, j.files)
	if f := (*reviewrun.Failed)(nil); errors.As(err, &f) {
		hint := fmt.Sprintf("its output is in %s; `taskie doctor` checks the reviewer", f.Log)
		if f.OutOfBudget {
			hint = fmt.Sprintf("it used up its review_budget (%s); its output is in %s; raise \"review_budget\" in .taskie/config.json to review again", j.cfg.ReviewBudget.D(), f.Log)
		}
		return usageErr(fmt.Errorf("the %s reviewer failed (%s): %v", j.job.Kind, f.Kind, firstLineOf(f.Error())), hint)
	}
	if err != nil {
		return usageErr(err, "`taskie help config` lists the reviewers")
	}
	st, moved, err := j.record(done)
	if err != nil {
		return err
	}
	return printReview(o, j, done.Result, st, moved)
}

// planReview checks that a standalone review can run and decides its kind,
// task, iteration and model; the plan's review budgets must allow it.
func planReview(p *store.Plan, o *reviewOpts) (*reviewJob, error) {
	snap, err := p.Snapshot()
	if err != nil {
		return nil, err
	}
	st := snap.State
	if snap.StateErr != nil && !errors.Is(snap.StateErr, state.ErrNotFound) {
		return nil, stateErr(p, snap.StateErr)
	}
	if st != nil && st.Next() != "" {
		return nil, usageErr(fmt.Errorf("plan %s is automated (next_phase %s): the Stop hook runs its reviews", p.ID, st.Next()),
			"let the agent stop to run it, or make the plan standalone first: `taskie set next_phase null`")
	}
	cfg, err := implied.Config(p)
	if err != nil {
		return nil, usageErr(err, "`taskie help config` lists the settings")
	}
	if msg := cfg.TrustMessage(); msg != "" {
		return nil, usageErr(errors.New(msg), "read .taskie/config.json, then run `taskie trust`")
	}
	j := &reviewJob{p: p, cfg: cfg, files: snap.TaskFiles(), job: reviewrun.Job{Actor: "cli", Standalone: true}}
	if j.job.Kind, err = reviewKind(o.kind, st); err != nil {
		return nil, err
	}
	if err := j.pickTask(snap, o.task); err != nil {
		return nil, err
	}
	if err := j.checkFiles(snap); err != nil {
		return nil, err
	}
	kind, task := j.job.Kind, j.job.Task
	n := snap.Latest(kind, task) + 1
	if prev := n - 1; prev > 0 && !snap.PostExists(kind, task, prev) {
		post := plan.PostReviewFile(string(kind), int(task), prev)
		return nil, usageErr(fmt.Errorf("%s has no post-review yet", plan.ReviewFile(string(kind), int(task), prev)),
			fmt.Sprintf("write %s (what you changed for each finding, or that nothing needed changing) first", p.Path(post)))
	}
	models := cfg.Models
	if len(models) == 0 {
		models = domain.DefaultModels()
	}
	j.job.Iteration, j.job.Model = n, models[(n-1)%len(models)]
	j.job.Pick = review.Resolve(cfg.Reviewer, models, (n-1)%len(models))
	j.run = &reviewrun.Runner{Plan: p, Cfg: cfg, Now: o.s.Clock.Now(), Info: func(msg string, attrs ...any) {
		fmt.Fprintln(o.s.Err, append([]any{"taskie: warning: " + msg + ":"}, attrs...)...)
	}}
	if b := j.run.Budget(j.job.Task); b != nil {
		return nil, usageErr(fmt.Errorf("plan %s: %s, so %s %d does not run", p.ID, b, kind, n),
			"raise "+quoteKeys(b.Keys())+" in .taskie/config.json to review again")
	}
	return j, nil
}

// reviewKind reads --kind, or picks the review that fits the phase.
func reviewKind(kind string, st *state.State) (domain.Phase, error) {
	byName := map[string]domain.Phase{"plan": domain.PlanReview, "tasks": domain.TasksReview,
		"code": domain.CodeReview, "all-code": domain.AllCodeReview}
	if kind != "" {
		if k, ok := byName[kind]; ok {
			return k, nil
		}
		for _, k := range byName {
			if string(k) == kind { // --kind code-review
				return k, nil
			}
		}
		return "", usageErr(fmt.Errorf("unknown review kind %q%s", kind, didYouMean(kind, reviewKinds)), "kinds: plan, tasks, code, all-code")
	}
	if st == nil {
		return domain.PlanReview, nil
	}
	switch workflow.Stage(st.Phase) {
	case "Planning", "Plan review":
		return domain.PlanReview, nil
	case "Task creation", "Task review":
		return domain.TasksReview, nil
	case "Implementation":
		return domain.CodeReview, nil
	}
	return domain.AllCodeReview, nil
}

// pickTask sets the task of a code review: --task, else current_task.
func (j *reviewJob) pickTask(snap *store.Snapshot, arg string) error {
	if j.job.Kind != domain.CodeReview {
		if arg != "" {
			return usageErr(fmt.Errorf("--task is for code reviews; a %s is about the whole plan", j.job.Kind), "drop --task, or use --kind code")
		}
		return nil
	}
	if arg != "" {
		id, err := snap.TaskID(arg)
		if err != nil {
			return usageErr(err, "")
		}
		j.job.Task = id
		return nil
	}
	if snap.State != nil && snap.State.Task() != 0 {
		j.job.Task = snap.State.Task()
		return nil
	}
	return usageErr(errors.New("a code review needs a task, and the plan has no current task"), "name it: taskie review --kind code --task <T>")
}

// checkFiles refuses a review of a file that does not exist.
func (j *reviewJob) checkFiles(snap *store.Snapshot) error {
	need := map[domain.Phase]string{domain.PlanReview: "plan.md", domain.TasksReview: "tasks.md",
		domain.CodeReview: plan.TaskFile(int(j.job.Task)), domain.AllCodeReview: "tasks.md"}[j.job.Kind]
	if !snap.Exists(need) {
		return usageErr(fmt.Errorf("%s: %s is missing: nothing to review", j.job.Kind, j.p.Path(need)), "write it first")
	}
	if (j.job.Kind == domain.TasksReview || j.job.Kind == domain.AllCodeReview) && !snap.HasTaskFile() {
		return usageErr(fmt.Errorf("%s needs a task file (task-T.md) of a task listed in tasks.md", j.job.Kind), "write the task files first")
	}
	return nil
}

// record commits the review's events (REVIEW_FINISHED, its findings in
// the ledger) and, when the phase may move to the review, the review's
// place in state.json; next_phase stays null.
func (j *reviewJob) record(done *reviewrun.Done) (*state.State, bool, error) {
	var st *state.State
	moved := false
	err := j.p.Update(func(s *store.Snapshot) (store.Change, error) {
		c := store.Change{Actor: "cli", Reason: fmt.Sprintf("review: %s %d %s (standalone)", j.job.Kind, j.job.Iteration, done.Result.Verdict),
			DuringReview: true, Events: done.Events()}
		st, moved = s.State, false
		if s.State != nil && s.State.Next() == "" && workflow.Legal(s.State.Phase, j.job.Kind) {
			st, moved = j.advance(s.State, done.Assessment.Clean), true
			c.State = st
		}
		return c, nil
	})
	if err != nil {
		return nil, false, err
	}
	return st, moved, nil
}

// advance puts the state in the review: phase, task, iteration, clean
// count (the ledger's clean rule, as in the hook) and the next model;
// next_phase stays null.
func (j *reviewJob) advance(cur *state.State, clean bool) *state.State {
	n := cur.Clone()
	kind, task := j.job.Kind, j.job.Task
	sameCycle := (cur.Phase == kind || cur.Phase == domain.PostReview(kind)) && cur.Task() == task
	n.Phase, n.NextPhase, n.PhaseIteration = kind, nil, state.Int(j.job.Iteration)
	if kind == domain.CodeReview {
		n.CurrentTask = state.Opt(task)
	}
	switch {
	case !clean:
		n.ConsecutiveClean = 0
	case sameCycle:
		n.ConsecutiveClean = cur.ConsecutiveClean + 1
	default:
		n.ConsecutiveClean = 1
	}
	n.ReviewModel = workflow.NextModel(j.cfg.Models, j.job.Model)
	return n
}

func printReview(o *reviewOpts, j *reviewJob, res review.Result, st *state.State, moved bool) error {
	rel := filepath.ToSlash(filepath.Join(".taskie", "plans", j.p.ID, j.job.Name()))
	if o.asJSON {
		v := reviewResultView{changedView: changed(j.p.ID, st), Review: j.job.Kind, Iteration: j.job.Iteration, Reviewer: j.job.Pick.Reviewer,
			Model: j.job.Model, Verdict: res.Verdict, ReviewFile: rel, CostUSD: res.CostUSD, DurationMS: res.DurationMS, Recorded: moved}
		if j.job.Task != 0 {
			v.Task = j.job.Task.String()
		}
		if err := writeJSON(o.s.Out, v); err != nil {
			return err
		}
	} else {
		c := o.s.out()
		verdict := c.Green(string(res.Verdict))
		if res.Verdict != domain.Pass {
			verdict = c.Red(string(res.Verdict))
		}
		what := fmt.Sprintf("%s %d", j.job.Kind, j.job.Iteration)
		if j.job.Task != 0 {
			what += " of task " + j.job.Task.String()
		}
		fmt.Fprintf(o.s.Out, "%s: %s (%s %s, %s%s)\n", what, verdict, j.job.Pick.Reviewer, j.job.Model,
			(time.Duration(res.DurationMS) * time.Millisecond).Round(time.Second), costText(res.CostUSD))
		fmt.Fprintf(o.s.Out, "review: %s\n", rel)
		post := plan.PostReviewFile(string(j.job.Kind), int(j.job.Task), j.job.Iteration)
		if moved {
			fmt.Fprintf(o.s.Err, "next: write %s (what you changed for each finding), then `taskie done %s`; clean reviews in a row: %d/%d\n",
				post, domain.PostReview(j.job.Kind), st.ConsecutiveClean, domain.CleanToPass)
		} else {
			fmt.Fprintf(o.s.Err, "next: write %s before the next review (the phase stays %s: %s is no legal move from it)\n", post, phaseOf(st), j.job.Kind)
		}
	}
	if res.Verdict != domain.Pass {
		return exitCode(ExitProblems)
	}
	return nil
}

func phaseOf(st *state.State) string {
	if st == nil {
		return "unset (no state.json)"
	}
	return string(st.Phase)
}

// costText renders a cost for a message: ", $0.12", or "" when unknown.
func costText(usd float64) string {
	if usd <= 0 {
		return ""
	}
	return fmt.Sprintf(", $%.2f", usd)
}

func firstLineOf(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// reviewTotals sums a plan's finished reviews from its event log: how
// many ran, what they cost and how long they took (`taskie status`).
type reviewTotals struct {
	Reviews    int     `json:"reviews"`
	Failed     int     `json:"failed"`
	CostUSD    float64 `json:"cost_usd"`
	DurationMS int64   `json:"duration_ms"`
	Duration   string  `json:"duration"`
}

func reviewTotalsOf(p *store.Plan) *reviewTotals {
	t := &reviewTotals{}
	_ = p.Store.Scan(p.ID, func(e events.Event) {
		switch e.Event {
		case events.ReviewFinished:
			t.Reviews++
			m, _ := events.MetaOf[events.ReviewFinishedMeta](e)
			t.CostUSD += m.CostUSD
			t.DurationMS += m.DurationMS
		case events.ReviewFailed:
			t.Failed++
		}
	}, func(string) {})
	if t.Reviews == 0 && t.Failed == 0 {
		return nil
	}
	t.Duration = (time.Duration(t.DurationMS) * time.Millisecond).Round(time.Second).String()
	return t
}

// text renders the totals for `taskie status`; the cost is on the
// ledger's "spent:" line.
func (t *reviewTotals) text() string {
	s := fmt.Sprintf("%d run, %s of reviewer time", t.Reviews, t.Duration)
	if t.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", t.Failed)
	}
	return s
}

// quoteKeys names settings for a hint: "a" or "b".
func quoteKeys(keys []string) string {
	var out string
	for i, k := range keys {
		if i > 0 {
			out += " or "
		}
		out += fmt.Sprintf("%q", k)
	}
	return out
}
