package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/review"
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
	p     *project.Plan
	cfg   config.Config
	kind  domain.Phase
	task  domain.TaskID
	n     int
	model domain.Model
	pick  review.Pick
	name  string // the review file, relative to the plan
}

func runReview(o *reviewOpts) error {
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	job, err := planReview(p, o)
	if err != nil {
		return err
	}
	lock, ok, err := p.Store.Root().TryLock(store.Rel(p.ID, store.ReviewLockName))
	if err != nil {
		return err
	}
	if !ok {
		return usageErr(fmt.Errorf("a review of plan %s is running", p.ID), "wait for it to finish (`taskie status --watch` shows it), then run taskie review again")
	}
	defer lock.Release()
	_ = review.ClearLease(p.Store.Root(), store.Rel(p.ID, store.ReviewLockName))
	res, err := job.run(lock.File())
	if err != nil {
		return err
	}
	st, moved, err := job.record(res)
	if err != nil {
		return err
	}
	return printReview(o, job, res, st, moved)
}

// planReview checks that a standalone review can run and decides its kind,
// task, iteration and model.
func planReview(p *project.Plan, o *reviewOpts) (*reviewJob, error) {
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
	cfg, err := p.Config()
	if err != nil {
		return nil, usageErr(err, "`taskie help config` lists the settings")
	}
	if msg := cfg.TrustMessage(); msg != "" {
		return nil, usageErr(errors.New(msg), "read .taskie/config.json, then run `taskie trust`")
	}
	j := &reviewJob{p: p, cfg: cfg}
	if j.kind, err = reviewKind(o.kind, st); err != nil {
		return nil, err
	}
	if err := j.pickTask(snap, o.task); err != nil {
		return nil, err
	}
	if err := j.checkFiles(snap); err != nil {
		return nil, err
	}
	j.n = snap.Latest(j.kind, j.task) + 1
	if prev := j.n - 1; prev > 0 && !snap.PostExists(j.kind, j.task, prev) {
		post := plan.PostReviewFile(string(j.kind), int(j.task), prev)
		return nil, usageErr(fmt.Errorf("%s has no post-review yet", plan.ReviewFile(string(j.kind), int(j.task), prev)),
			fmt.Sprintf("write %s (what you changed for each finding, or that nothing needed changing) first", p.Path(post)))
	}
	models := cfg.Models
	if len(models) == 0 {
		models = domain.DefaultModels()
	}
	j.model = models[(j.n-1)%len(models)]
	j.pick = review.Resolve(cfg.Reviewer, models, (j.n-1)%len(models))
	j.name = plan.ReviewFile(string(j.kind), int(j.task), j.n)
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
	if j.kind != domain.CodeReview {
		if arg != "" {
			return usageErr(fmt.Errorf("--task is for code reviews; a %s is about the whole plan", j.kind), "drop --task, or use --kind code")
		}
		return nil
	}
	if arg != "" {
		id, err := snap.TaskID(arg)
		if err != nil {
			return usageErr(err, "")
		}
		j.task = id
		return nil
	}
	if snap.State != nil && snap.State.Task() != 0 {
		j.task = snap.State.Task()
		return nil
	}
	return usageErr(errors.New("a code review needs a task, and the plan has no current task"), "name it: taskie review --kind code --task <T>")
}

// checkFiles refuses a review of a file that does not exist.
func (j *reviewJob) checkFiles(snap *store.Snapshot) error {
	need := map[domain.Phase]string{domain.PlanReview: "plan.md", domain.TasksReview: "tasks.md",
		domain.CodeReview: plan.TaskFile(int(j.task)), domain.AllCodeReview: "tasks.md"}[j.kind]
	if !snap.Exists(need) {
		return usageErr(fmt.Errorf("%s: %s is missing: nothing to review", j.kind, j.p.Path(need)), "write it first")
	}
	if (j.kind == domain.TasksReview || j.kind == domain.AllCodeReview) && !snap.HasTaskFile() {
		return usageErr(fmt.Errorf("%s needs a task file (task-T.md) of a task listed in tasks.md", j.kind), "write the task files first")
	}
	return nil
}

// run runs the reviewer; a failure is logged like the hook logs it.
func (j *reviewJob) run(hold *os.File) (review.Result, error) {
	rv, err := review.New(j.pick.Reviewer)
	if err != nil {
		return review.Result{}, usageErr(err, "`taskie help config` lists the reviewers")
	}
	req := review.Request{Kind: j.kind, PlanID: j.p.ID, Task: j.task, Iteration: j.n, Model: j.pick.Model,
		Root: j.p.Repo.Root, PlanDir: j.p.Dir, ReviewFile: j.p.Path(j.name), Timeout: j.cfg.ReviewerTimeout.D(),
		Tools: j.cfg.AllowedTools, Command: j.pick.Program(j.cfg.Reviewer, j.cfg.ReviewerCommand), Effort: j.pick.Effort, HoldLock: hold,
		Lease: func(l review.Lease) {
			_ = review.WriteLease(j.p.Store.Root(), store.Rel(j.p.ID, store.ReviewLockName), l)
		}}
	if snap, err := j.p.Snapshot(); err == nil {
		req.TaskFiles = snap.TaskFiles()
	}
	meta := map[string]any{"review": string(j.kind), "iteration": j.n, "model": string(j.model), "reviewer": j.pick.Reviewer, "standalone": true}
	_ = j.p.Store.Append(j.p.ID, events.Event{Task: j.task.String(), Event: events.ReviewStarted, Actor: "cli", Meta: meta})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	res, err := rv.Review(ctx, req)
	if err == nil {
		return res, nil
	}
	kind, raw := "error", []byte(err.Error())
	var f *review.Failure
	if errors.As(err, &f) {
		kind, raw = f.Kind, append([]byte(f.Msg+"\n\n"), f.Raw...)
	}
	root, rel := j.p.Store.Root(), store.Rel(j.p.ID, j.name)
	switch partial, rerr := root.ReadFileLimit(rel, partialReviewLimit); {
	case rerr == nil:
		raw = append(append(raw, "\n\n--- review file left by the failed run ---\n"...), partial...)
		_ = root.Remove(rel)
	case errors.Is(rerr, fsafe.ErrTooLarge):
		raw = append(raw, "\n\n--- review file left by the failed run: not kept, "+rerr.Error()+" ---\n"...)
		_ = root.Remove(rel)
	}
	log := j.keep(raw)
	_ = j.p.Store.Append(j.p.ID, events.Event{Task: j.task.String(), Event: events.ReviewFailed, Actor: "cli",
		Meta: map[string]any{"review": string(j.kind), "iteration": j.n, "model": string(j.model), "failure": kind, "log": log, "standalone": true}})
	return res, usageErr(fmt.Errorf("the %s reviewer failed (%s): %v", j.kind, kind, firstLineOf(err.Error())),
		fmt.Sprintf("its output is in %s; `taskie doctor` checks the reviewer", log))
}

// partialReviewLimit bounds the review file a failed reviewer left, which
// goes into the failure's log.
const partialReviewLimit = 4 << 20

// keep writes a failed reviewer's output to .taskie/logs/ and returns its
// path relative to the project.
func (j *reviewJob) keep(raw []byte) string {
	rel := filepath.Join(".taskie", "logs", fmt.Sprintf("%s-%s-%d-%s.log", j.p.ID, j.kind, j.n, time.Now().UTC().Format("20060102T150405Z")))
	if j.task != 0 {
		rel = filepath.Join(".taskie", "logs", fmt.Sprintf("%s-%s-task%s-%d-%s.log", j.p.ID, j.kind, j.task, j.n, time.Now().UTC().Format("20060102T150405Z")))
	}
	root := j.p.Store.Root()
	if err := root.MkdirAll(filepath.Join(".taskie", "logs"), 0o755); err != nil {
		return "(no log: " + err.Error() + ")"
	}
	f, err := root.CreateExclusive(rel, 0o644)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	_, _ = f.Write(raw)
	f.Close()
	return filepath.ToSlash(rel)
}

// record commits REVIEW_FINISHED and, when the phase may move to the
// review, the review's place in state.json; next_phase stays null.
func (j *reviewJob) record(res review.Result) (*state.State, bool, error) {
	fin := map[string]any{"review": string(j.kind), "iteration": j.n, "model": string(j.model), "verdict": string(res.Verdict),
		"cost_usd": res.CostUSD, "duration_ms": res.DurationMS, "reviewer_session": res.SessionID,
		"review_file": j.name, "wrote_file": res.WroteFile, "standalone": true}
	var st *state.State
	moved := false
	err := j.p.Update(func(s *store.Snapshot) (store.Change, error) {
		c := store.Change{Actor: "cli", Reason: fmt.Sprintf("review: %s %d %s (standalone)", j.kind, j.n, res.Verdict), DuringReview: true,
			Events: []events.Event{{Task: j.task.String(), Event: events.ReviewFinished, Actor: "cli", Meta: fin}}}
		st, moved = s.State, false
		if s.State != nil && s.State.Next() == "" && workflow.Legal(s.State.Phase, j.kind) {
			st, moved = j.advance(s.State, res.Verdict), true
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
// count and the next model; next_phase stays null.
func (j *reviewJob) advance(cur *state.State, v domain.Verdict) *state.State {
	n := cur.Clone()
	sameCycle := (cur.Phase == j.kind || cur.Phase == workflow.PostReview(j.kind)) && cur.Task() == j.task
	n.Phase, n.NextPhase, n.PhaseIteration = j.kind, nil, state.Int(j.n)
	if j.kind == domain.CodeReview {
		n.CurrentTask = state.Opt(j.task)
	}
	switch {
	case v != domain.Pass:
		n.ConsecutiveClean = 0
	case sameCycle:
		n.ConsecutiveClean = cur.ConsecutiveClean + 1
	default:
		n.ConsecutiveClean = 1
	}
	n.ReviewModel = workflow.NextModel(j.cfg.Models, j.model)
	return n
}

func printReview(o *reviewOpts, j *reviewJob, res review.Result, st *state.State, moved bool) error {
	rel := filepath.ToSlash(filepath.Join(".taskie", "plans", j.p.ID, j.name))
	if o.asJSON {
		v := reviewResultView{changedView: changed(j.p.ID, st), Review: j.kind, Iteration: j.n, Reviewer: j.pick.Reviewer,
			Model: j.model, Verdict: res.Verdict, ReviewFile: rel, CostUSD: res.CostUSD, DurationMS: res.DurationMS, Recorded: moved}
		if j.task != 0 {
			v.Task = j.task.String()
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
		what := fmt.Sprintf("%s %d", j.kind, j.n)
		if j.task != 0 {
			what += " of task " + j.task.String()
		}
		fmt.Fprintf(o.s.Out, "%s: %s (%s %s, %s%s)\n", what, verdict, j.pick.Reviewer, j.model,
			(time.Duration(res.DurationMS) * time.Millisecond).Round(time.Second), costText(res.CostUSD))
		fmt.Fprintf(o.s.Out, "review: %s\n", rel)
		post := plan.PostReviewFile(string(j.kind), int(j.task), j.n)
		if moved {
			fmt.Fprintf(o.s.Err, "next: write %s (what you changed for each finding), then `taskie done %s`; clean reviews in a row: %d/%d\n",
				post, workflow.PostReview(j.kind), st.ConsecutiveClean, domain.CleanToPass)
		} else {
			fmt.Fprintf(o.s.Err, "next: write %s before the next review (the phase stays %s: %s is no legal move from it)\n", post, phaseOf(st), j.kind)
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

func reviewTotalsOf(p *project.Plan) *reviewTotals {
	t := &reviewTotals{}
	_ = p.Store.Scan(p.ID, func(e events.Event) {
		switch e.Event {
		case events.ReviewFinished:
			t.Reviews++
			if v, ok := e.Meta["cost_usd"].(float64); ok {
				t.CostUSD += v
			}
			if v, ok := e.Meta["duration_ms"].(float64); ok {
				t.DurationMS += int64(v)
			}
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
