// Package reviewrun is the one review runner: the Stop hook and `taskie
// review` both run a review through it (docs/architecture.md). It takes the
// plan's review lock, runs the reviewer, keeps a failed run's output in
// .taskie/logs/, and judges the answer with the cycle's review ledger
// (docs/ledger.md). The caller decides what the review does to state.json
// and commits the events it returns.
package reviewrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/store"
)

// Job is one review to run.
type Job struct {
	Kind      domain.Phase
	Task      domain.TaskID
	Iteration int
	Model     domain.Model // the rotation entry, as the events record it
	Pick      review.Pick  // the reviewer, model and effort it resolves to
	Actor     string       // "hook" or "cli"
	// Standalone marks the events of `taskie review`.
	Standalone bool
}

// Name is the job's review file, relative to the plan directory.
func (j Job) Name() string { return plan.ReviewFile(string(j.Kind), int(j.Task), j.Iteration) }

// run is what every event of the job carries.
func (j Job) run() events.ReviewRun {
	return events.ReviewRun{Review: string(j.Kind), Iteration: j.Iteration, Model: string(j.Model), Standalone: j.Standalone}
}

// started is the job's REVIEW_STARTED.
func (j Job) started() events.Event {
	return events.Event{Task: j.Task.String(), Event: events.ReviewStarted, Actor: j.Actor,
		Meta: events.Meta(events.ReviewStartedMeta{ReviewRun: j.run(), Reviewer: j.Pick.Reviewer})}
}

// Runner runs reviews of one plan.
type Runner struct {
	Plan *store.Plan
	Cfg  config.Config
	Now  time.Time // names the kept logs
	// Info writes a warning to the caller's log; nil drops it.
	Info func(msg string, attrs ...any)
	// Ctx, when set, bounds the review (tests); otherwise the review ends
	// when this process is interrupted.
	Ctx context.Context

	lr *ledgerlog.Reader
}

func (r *Runner) info(msg string, attrs ...any) {
	if r.Info != nil {
		r.Info(msg, attrs...)
	}
}

// Ledger folds the plan's event log for the review ledger, once. A log
// that cannot be read gives an empty ledger: the verdict alone decides,
// and the budget counts nothing, rather than trapping the user.
func (r *Runner) Ledger() *ledgerlog.Reader {
	if r.lr != nil {
		return r.lr
	}
	p := r.Plan
	lr, err := ledgerlog.Read(func(fn func(events.Event), warn func(string)) error { return p.Store.Scan(p.ID, fn, warn) },
		func(w string) { r.info("reading the review ledger", "warning", w) })
	if err != nil {
		r.info("reading the review ledger", "error", err.Error())
	}
	r.lr = lr
	return lr
}

// Budget says whether the plan's review budgets are spent, for a review
// of task (0: a review of no task): what the plan's and the task's reviews
// cost, the tokens they used and how long they ran, and how long the last
// review ran (review_budget). The log is the record, so the budgets hold
// across sessions and clients.
func (r *Runner) Budget(task domain.TaskID) *ledger.BudgetOverrun {
	s := r.Cfg.Ledger()
	if !s.HasBudgets() {
		return nil
	}
	lr := r.Ledger()
	key, spent := taskKey(task), ledger.Spent{}
	if key != "" {
		spent = lr.ByTask[key]
	}
	return ledger.CheckBudgets(s, lr.Spent, key, spent, lr.LastTook)
}

// taskKey is how the log names a task's reviews; "" for none.
func taskKey(task domain.TaskID) string {
	if task == 0 {
		return ""
	}
	return task.String()
}

// cost is what a finished review's event records of what it cost.
func cost(res review.Result, took time.Duration) events.ReviewCost {
	u := res.Usage
	c := events.ReviewCost{CostUSD: res.CostUSD, DurationMS: res.DurationMS, TookMS: took.Milliseconds(), ReviewerSession: res.SessionID}
	if u.Total() > 0 {
		c.Usage = events.Usage{Tokens: u.Total(), Input: max(u.Input, 0), Output: max(u.Output, 0),
			CacheRead: max(u.CacheRead, 0), CacheCreation: max(u.CacheCreation, 0)}
	}
	return c
}

// budgetAfter is the overrun once a review that used add is counted; the
// last review's run time is not judged here (review_budget stops a
// review that used it all, see Failed.OutOfBudget).
func (r *Runner) budgetAfter(task domain.TaskID, add ledger.Spent) *ledger.BudgetOverrun {
	s := r.Cfg.Ledger()
	if !s.HasBudgets() {
		return nil
	}
	s.ReviewBudget = 0
	lr := r.Ledger()
	key, spent := taskKey(task), ledger.Spent{}
	if key != "" {
		spent = lr.ByTask[key]
	}
	plan := ledger.Spent{USD: lr.Spent.USD + add.USD, Tokens: lr.Spent.Tokens + add.Tokens, Time: lr.Spent.Time + add.Time}
	spent = ledger.Spent{USD: spent.USD + add.USD, Tokens: spent.Tokens + add.Tokens, Time: spent.Time + add.Time}
	return ledger.CheckBudgets(s, plan, key, spent, 0)
}

// orphanLockWait bounds the wait for the review lock after the group of
// an orphaned review was killed: its processes close the lock as they die.
const orphanLockWait = 3 * time.Second

// Lock takes the plan's review lock. When another holds it, the review may
// be an orphan: its runner is gone (kill -9, the OOM killer) and what the
// reviewer started still holds the lock with nobody to enforce its
// timeout. Once its deadline passed, its process group is ended
// (review.EndOrphan) and the lock taken, so this run reviews again. The
// lock's content, the last holder's lease, is cleared at once. Release the
// lock by closing it: a reviewer that inherited it keeps it while it lives.
func (r *Runner) Lock() (*fsafe.Lock, bool, error) {
	root, rel := r.Plan.Store.Root(), store.Rel(r.Plan.ID, store.ReviewLockName)
	l, ok, err := root.TryLock(rel)
	if err != nil || !ok {
		if err != nil {
			return nil, false, err
		}
		// The lease is a real process's (started and timed on the real
		// clock): TASKIE_NOW must not end or spare it.
		o := review.EndOrphan(root, rel, time.Now())
		if !o.Ended {
			return nil, false, nil
		}
		r.info("review", "why", "orphaned review: "+o.Why)
		if l, err = root.Lock(rel, orphanLockWait); err != nil {
			r.info("review", "why", "orphaned review: the lock is still held: "+err.Error())
			return nil, false, nil
		}
	}
	if err := review.ClearLease(root, rel); err != nil {
		r.info("review", "why", "clearing the review lease: "+err.Error())
	}
	return l, true, nil
}

// Done is a review that ran: what the caller commits and reports.
type Done struct {
	Result review.Result
	Took   time.Duration
	Series ledgerlog.Series
	// Found are the ledger events of the review's findings; After the
	// cycle's ledger with them, Assessment the ledger's judgement.
	Found      []ledger.Event
	After      ledger.Ledger
	Assessment ledger.Assessment
	// Finished is the meta of its REVIEW_FINISHED event.
	Finished events.ReviewFinishedMeta
	job      Job
}

// Events are the review's REVIEW_FINISHED and FINDING_* events, to commit
// with what the review does to state.json.
func (d *Done) Events() []events.Event {
	fin := events.Event{Task: d.job.Task.String(), Event: events.ReviewFinished, Actor: d.job.Actor, Meta: events.Meta(d.Finished)}
	return append([]events.Event{fin}, ledgerlog.ToLog(d.Series, d.Found)...)
}

// Failed is a review that did not finish; REVIEW_FAILED is logged.
type Failed struct {
	Kind string // a review.Fail* kind, or "error"
	Err  error
	Log  string // the kept output, relative to the project root
	// OutOfBudget: the reviewer's timeout was the review_budget, which
	// the timeout used up.
	OutOfBudget bool
}

func (f *Failed) Error() string { return f.Err.Error() }

// Review runs job under lock (held by the caller, handed to the reviewer):
// REVIEW_STARTED is logged, the reviewer runs with the cycle's findings to
// re-check, and its answer is judged by the ledger. A failed run is a
// *Failed.
func (r *Runner) Review(job Job, lock *fsafe.Lock, taskFiles []string) (*Done, error) {
	rv, err := review.New(job.Pick.Reviewer)
	if err != nil {
		return nil, err
	}
	p, name := r.Plan, job.Name()
	series := ledgerlog.SeriesOf(job.Kind, job.Task)
	before := ledger.Ledger{} // the first review of a cycle starts afresh
	if job.Iteration > 1 {
		before = r.Ledger().Ledger(series)
	}
	settings := r.Cfg.Ledger()
	req := review.Request{
		Kind: job.Kind, PlanID: p.ID, Task: job.Task, Iteration: job.Iteration, Model: job.Pick.Model,
		Root: p.Repo.Root, PlanDir: p.Dir, ReviewFile: p.Path(name),
		TaskFiles: taskFiles, Timeout: ledger.ReviewTimeout(settings, r.Cfg.ReviewerTimeout.D()), Tools: r.Cfg.AllowedTools,
		Command: job.Pick.Program(r.Cfg.Reviewer, r.Cfg.ReviewerCommand), Effort: job.Pick.Effort, HoldLock: lock.File(),
		Lease: r.recordLease, Findings: ledger.ForReviewer(before),
	}
	r.Event(job.started())
	ctx := r.Ctx
	if ctx == nil {
		// The agent's hook timeout or Ctrl-C kills this process: take the
		// reviewer's process group down with it. Registered only here, as
		// signal handling costs start-up time on every other stop.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
	}
	_, statErr := p.Store.Root().Lstat(store.Rel(p.ID, name))
	existed := statErr == nil
	start := time.Now()
	res, err := rv.Review(ctx, req)
	took := time.Since(start)
	if err != nil {
		return nil, r.failed(job, !existed, err, took, settings.ReviewBudget > 0 && req.Timeout == settings.ReviewBudget)
	}
	d := &Done{Result: res, Took: took, Series: series, job: job}
	d.Found = ledger.Record(before, job.Iteration, res.Answer())
	d.After = before
	for _, e := range d.Found {
		d.After = ledger.Fold(d.After, e)
	}
	d.Assessment = ledger.Assess(d.After, job.Iteration, res.Verdict, settings, r.Ledger().SpentUSD+res.CostUSD)
	// With this review counted: its block says when no further review follows.
	d.Assessment.BudgetExceeded = r.budgetAfter(job.Task, ledger.Spent{USD: res.CostUSD, Tokens: res.Usage.Total(), Time: took})
	wrote, clean := res.WroteFile, d.Assessment.Clean
	d.Finished = events.ReviewFinishedMeta{ReviewRun: job.run(), Verdict: string(res.Verdict), ReviewCost: cost(res, took),
		ReviewFile: name, WroteFile: &wrote, Clean: &clean}
	if d.Assessment.Tracked {
		d.Finished.Rule = string(d.Assessment.Reason)
	}
	return d, nil
}

// recordLease writes the running reviewer's lease into the lock file, for
// a later run to end it if this process dies.
func (r *Runner) recordLease(l review.Lease) {
	if err := review.WriteLease(r.Plan.Store.Root(), store.Rel(r.Plan.ID, store.ReviewLockName), l); err != nil {
		r.info("review", "why", "recording the review lease: "+err.Error())
	}
}

// partialReviewLimit bounds the review file a failed reviewer left, which
// goes into the failure's log.
const partialReviewLimit = 4 << 20

// failed keeps the reviewer's output in a log and logs REVIEW_FAILED. A
// review file the failed run left behind (ours) goes into the log too, so
// the next run retries the review instead of taking a partial file for one.
func (r *Runner) failed(job Job, ours bool, err error, took time.Duration, outOfBudget bool) *Failed {
	var f *review.Failure
	raw := []byte(err.Error())
	kind := "error"
	if errors.As(err, &f) {
		raw, kind = append([]byte(f.Msg+"\n\n"), f.Raw...), f.Kind
	}
	if ours {
		root, rel := r.Plan.Store.Root(), store.Rel(r.Plan.ID, job.Name())
		switch partial, rerr := root.ReadFileLimit(rel, partialReviewLimit); {
		case rerr == nil:
			raw = append(append(raw, "\n\n--- review file left by the failed run ("+job.Name()+") ---\n"...), partial...)
		case errors.Is(rerr, fsafe.ErrTooLarge):
			raw = append(raw, "\n\n--- review file left by the failed run ("+job.Name()+"): not kept, "+rerr.Error()+" ---\n"...)
		default:
			ours = false
		}
		if ours && root.Remove(rel) != nil {
			raw = append(raw, "\n(could not remove it)\n"...)
		}
	}
	log := r.Keep(job, raw)
	r.Event(events.Event{Task: job.Task.String(), Event: events.ReviewFailed, Actor: job.Actor,
		Meta: events.Meta(events.ReviewFailedMeta{ReviewRun: job.run(), Failure: kind, Log: log, TookMS: took.Milliseconds()})})
	return &Failed{Kind: kind, Err: err, Log: log, OutOfBudget: kind == review.FailTimeout && outOfBudget}
}

// SetAside moves a review file that is no review of this cycle (an
// orphaned reviewer's, one whose cycle moved on) into the log directory,
// headed by why; it returns where it went, relative to the project root.
func (r *Runner) SetAside(job Job, why string) string {
	rel := store.Rel(r.Plan.ID, job.Name())
	data, err := r.Plan.Store.Root().ReadFile(rel)
	if err != nil {
		return "(nothing to keep)"
	}
	log := r.Keep(job, append([]byte("--- "+job.Name()+": "+why+" ---\n"), data...))
	if !strings.HasPrefix(log, "(") {
		_ = r.Plan.Store.Root().Remove(rel)
	}
	return log
}

// Keep writes a reviewer's raw output to a new log file (never
// overwritten) and returns its path relative to the project root, or why
// there is none in parentheses.
func (r *Runner) Keep(job Job, raw []byte) string {
	name := fmt.Sprintf("%s-%s-%d-%s", r.Plan.ID, job.Kind, job.Iteration, r.Now.UTC().Format("20060102T150405Z"))
	if job.Task != 0 {
		name = fmt.Sprintf("%s-%s-task%s-%d-%s", r.Plan.ID, job.Kind, job.Task, job.Iteration, r.Now.UTC().Format("20060102T150405Z"))
	}
	root := r.Plan.Store.Root()
	if err := root.MkdirAll(filepath.Join(".taskie", "logs"), 0o755); err != nil {
		return "(could not write a log: " + err.Error() + ")"
	}
	for i := range 1000 {
		rel := filepath.Join(".taskie", "logs", name+".log")
		if i > 0 {
			rel = filepath.Join(".taskie", "logs", fmt.Sprintf("%s-%d.log", name, i))
		}
		f, err := root.CreateExclusive(rel, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "(could not write a log: " + err.Error() + ")"
		}
		_, _ = f.Write(raw)
		f.Close()
		return rel
	}
	return "(could not write a log: too many logs of this review)"
}

// Event appends events under the plan lock; a failure only goes to the
// log.
func (r *Runner) Event(evs ...events.Event) {
	if err := r.Plan.Store.Append(r.Plan.ID, evs...); err != nil {
		r.info("appending events", "error", err.Error())
	}
}

// CTODone is a CTO review that ran: its decision, and the meta of its
// REVIEW_FINISHED event.
type CTODone struct {
	Result   review.Result
	Decision review.CTODecision
	Took     time.Duration
	Finished events.ReviewFinishedMeta
	job      Job
}

// Event is the CTO review's REVIEW_FINISHED, to commit with what its
// decision does.
func (d *CTODone) Event() events.Event {
	return events.Event{Task: d.job.Task.String(), Event: events.ReviewFinished, Actor: d.job.Actor, Meta: events.Meta(d.Finished)}
}

// CTO runs the CTO review of job.Task (docs/lifecycle.md, "The CTO") under
// lock: job.Kind is review.CTOReview and job.Iteration the CTO attempt.
// The reviewer reads the task, the plan, cycle (the review and post-review
// files of the task's code-review cycle) and the review ledger's history
// of each finding, and answers a decision; it writes no file. A failed run
// is a *Failed, as for a review.
func (r *Runner) CTO(job Job, lock *fsafe.Lock, cycle []string, escalation string) (*CTODone, error) {
	rv, err := review.New(job.Pick.Reviewer)
	if err != nil {
		return nil, err
	}
	p := r.Plan
	settings := r.Cfg.Ledger()
	req := review.Request{
		Kind: review.CTOReview, PlanID: p.ID, Task: job.Task, Iteration: job.Iteration, Model: job.Pick.Model,
		Root: p.Repo.Root, PlanDir: p.Dir,
		Timeout: ledger.ReviewTimeout(settings, r.Cfg.ReviewerTimeout.D()), Tools: r.Cfg.AllowedTools,
		Command: job.Pick.Program(r.Cfg.Reviewer, r.Cfg.ReviewerCommand), Effort: job.Pick.Effort, HoldLock: lock.File(),
		Lease: r.recordLease, Cycle: cycle, Escalation: escalation,
		History: r.Ledger().History(ledgerlog.SeriesOf(domain.CodeReview, job.Task)),
	}
	r.Event(job.started())
	ctx := r.Ctx
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
	}
	start := time.Now()
	res, err := rv.Review(ctx, req)
	took := time.Since(start)
	if err != nil {
		return nil, r.failed(job, false, err, took, settings.ReviewBudget > 0 && req.Timeout == settings.ReviewBudget)
	}
	d := &CTODone{Result: res, Decision: *res.CTO, Took: took, job: job}
	d.Finished = events.ReviewFinishedMeta{ReviewRun: job.run(), Decision: d.Decision.Decision, ReviewCost: cost(res, took),
		CTOFile: plan.CTOFile(int(job.Task), job.Iteration), RollbackTo: d.Decision.RollbackTo}
	return d, nil
}
