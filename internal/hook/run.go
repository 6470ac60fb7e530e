package hook

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/reviewrun"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// stopper is one Stop hook call on a selected plan: it gathers the facts
// from one snapshot, asks workflow.Decide, and carries the decision out.
type stopper struct {
	e    Env
	in   Input
	cfg  config.Config
	p    *store.Plan
	log  *planLog
	sess *Session
	now  time.Time
	why  string // for the log line
	// logAttrs are more fields for the log line (the kept reviewer log).
	logAttrs []any
	// planFlag is " --plan <id>" in the commands taskie prints when the
	// project has several plans (plan choice listed them already).
	planFlag string

	lock *fsafe.Lock       // the review lock, when taken
	rr   *reviewrun.Runner // the review runner, with the log folded once
}

func (h *stopper) run() Result {
	snap, err := h.p.Snapshot()
	if err != nil {
		return h.internal(err)
	}
	f := h.facts(snap)
	if workflow.NeedsLock(f) {
		l, ok, err := h.runner().Lock()
		if err != nil {
			return h.internal(err)
		}
		f.Lock = workflow.LockBusy
		if ok {
			h.lock, f.Lock = l, workflow.LockHeld
			// Closed, not unlocked: a reviewer that inherited the lock keeps
			// it for as long as it (or a child of it) lives.
			defer l.Release()
			h.logFacts(&f)
		}
	}
	d := workflow.Decide(f)
	h.why = string(d.Reason)
	switch {
	case d.Violations != "":
		h.sess.Violations = d.Violations
	case len(f.Violations) == 0:
		h.sess.Violations = ""
	}
	v := h.view(snap, f)
	if d.Reason == workflow.RStateUnreadable {
		return warnAllow(h.e, snap.StateErr.Error()+" — automation skipped until it is fixed (`taskie validate`)")
	}
	// A review file of the iteration to run, left by a reviewer whose hook
	// was killed, is set aside before the review runs.
	orphan := d.Action == workflow.RunReview && snap.ReviewExists(d.Review, snap.State.Task(), d.Iteration) &&
		h.orphan(d.Review, snap.State.Task(), d.Iteration)
	if d.Save != nil {
		if err := h.p.Commit(snap, store.Change{Actor: "hook", Reason: "hook: " + d.SaveReason, State: d.Save, DuringReview: h.lock != nil}); err != nil {
			return h.internal(err)
		}
		if snap, err = h.p.Snapshot(); err != nil {
			return h.internal(err)
		}
		v.s = snap.State
	}
	if d.Mark != nil {
		h.sess.LastReviewBlock = d.Mark
	}
	if d.ToHuman != "" {
		h.toHuman(d.Task, d.ToHuman)
	}
	if d.Action == workflow.RunCTO {
		return h.cto(snap, d, v)
	}
	if d.Action != workflow.RunReview {
		return render(d, v)
	}
	return h.review(snap, d, orphan, v)
}

// facts gathers what the decision needs from the snapshot, once.
func (h *stopper) facts(snap *store.Snapshot) workflow.StopFacts {
	// Validation first: it lists the plan directory and keeps the names,
	// which the review files are then parsed from (no second listing).
	violations := snap.Validate(workflow.Lint)
	f := workflow.StopFacts{
		State:           snap.State,
		Active:          h.in.StopHookActive,
		Seen:            h.sess.Violations,
		Untrusted:       trustMessage(h.cfg),
		AnyTaskFile:     snap.HasTaskFile(),
		LastReviewBlock: h.sess.LastReviewBlock,
		BlocksInRow:     h.sess.BlocksInRow,
		BlockCap:        h.cfg.BlockCap,
		Models:          h.cfg.Models,
		Autopilot:       h.cfg.Autopilot,
		Reviews:         snap.Files(),
	}
	for _, v := range violations {
		if v.Severity == plan.SeverityError {
			f.Violations = append(f.Violations, v.String())
		}
	}
	switch {
	case errors.Is(snap.StateErr, state.ErrNotFound):
		f.StateProblem = workflow.StateMissing
	case snap.StateErr != nil:
		f.StateProblem = workflow.StateUnreadable
	}
	s := snap.State
	if s == nil {
		return f
	}
	task := s.Task()
	f.TaskState, f.CTOAttempts = workflow.TaskLife(s)
	f.PendingOther = snap.PendingOther(task)
	if task > 0 {
		f.TaskFileExists = snap.Exists(plan.TaskFile(int(task)))
	}
	if domain.IsReview(s.Phase) {
		f.PostReviewExists = snap.PostExists(s.Phase, task, s.Iteration())
	}
	return f
}

// logFacts adds, once this stop holds the review lock, what only the
// event log tells, and reads it only when it can matter: the orphaned
// reviews when a review file of the next iteration is on disk, the budgets
// spent when budgets are set and decide the stop (a scan of the whole log).
func (h *stopper) logFacts(f *workflow.StopFacts) {
	if workflow.OrphansMatter(*f) {
		f.Orphans = OrphanedReviews(h.p.Store.Tail(h.p.ID))
	}
	if h.cfg.Ledger().HasBudgets() && workflow.BudgetMatters(*f) {
		f.PlanBudget, f.TaskBudget = h.runner().Budget(0), h.runner().Budget(f.State.Task())
	}
}

// orphan reports that the review file of an iteration was left by a
// reviewer whose hook died: the log shows its start and no end.
func (h *stopper) orphan(review domain.Phase, task domain.TaskID, it int) bool {
	return Orphaned(h.p.Store.Tail(h.p.ID), review, task, it)
}

// Orphaned reports that the last review of an iteration the event log
// shows was started and never finished nor failed: its hook was killed
// (or still runs, which only the review lock tells). A file such a
// reviewer wrote is no review. evs are the log's last events, oldest first.
func Orphaned(evs []events.Event, review domain.Phase, task domain.TaskID, it int) bool {
	return slices.Contains(OrphanedReviews(evs), workflow.ReviewAt{Review: review, Task: task, N: it})
}

// OrphanedReviews lists the reviews Orphaned reports, in the order they
// were last started.
func OrphanedReviews(evs []events.Event) []workflow.ReviewAt {
	var open []workflow.ReviewAt
	for _, e := range evs {
		if e.Event != events.ReviewStarted && e.Event != events.ReviewFinished && e.Event != events.ReviewFailed {
			continue
		}
		run, err := events.MetaOf[events.ReviewRun](e)
		task, terr := domain.ParseTaskID(e.Task)
		if e.Task == "" {
			task, terr = 0, nil
		}
		if terr != nil || task.String() != e.Task || !e.HasMeta("iteration") || events.BadMeta(err, "iteration") {
			continue
		}
		at := workflow.ReviewAt{Review: domain.Phase(run.Review), Task: task, N: run.Iteration}
		open = slices.DeleteFunc(open, func(o workflow.ReviewAt) bool { return o == at })
		if e.Event == events.ReviewStarted {
			open = append(open, at)
		}
	}
	return open
}

func (h *stopper) view(snap *store.Snapshot, f workflow.StopFacts) view {
	v := view{plan: h.p.ID, planFlag: h.planFlag, root: h.p.Repo.Root, dir: h.p.Dir, s: snap.State, autopilot: h.cfg.Autopilot,
		violations: f.Violations, untrusted: h.cfg.AwaitingTrust(), blocksInRow: f.BlocksInRow, blockCap: f.BlockCap, pendingOther: f.PendingOther,
		agent: h.in.Agent}
	v.ledger = h.currentLedger
	return v
}

// internal turns an unexpected error into an allow: never trap the user.
func (h *stopper) internal(err error) Result {
	h.why = "error: " + err.Error()
	return warnAllow(h.e, fmt.Sprintf("%v; stop allowed, state.json unchanged", err))
}

func (h *stopper) review(snap *store.Snapshot, d workflow.StopDecision, orphan bool, v view) Result {
	job := reviewrun.Job{Kind: d.Review, Task: d.Task, Iteration: d.Iteration, Model: d.Model, Actor: "hook",
		Pick: review.Resolve(h.cfg.Reviewer, h.cfg.Models, max(0, slices.Index(h.cfg.Models, d.Model)))}
	if orphan {
		// A reviewer whose hook was killed wrote it: not this cycle's review.
		h.runner().SetAside(job, "left by a reviewer whose hook was killed")
	}
	s := snap.State
	done, err := h.runner().Review(job, h.lock, snap.TaskFiles())
	var f *reviewrun.Failed
	if errors.As(err, &f) {
		return h.failed(d, f)
	}
	if err != nil {
		return h.internal(err)
	}
	res, a := done.Result, done.Assessment
	record := func(snap *store.Snapshot) (workflow.ReviewResult, error) {
		rr := workflow.AfterReview(snap.State, d, workflow.Finished{Verdict: res.Verdict, Ledger: &a}, snap.PendingOther(snap.State.Task()), h.cfg.Models, h.cfg.Autopilot, h.in.SessionID)
		evs := done.Events()
		if rr.NeedsHuman {
			evs = append(evs, ledgerlog.NeedsHumanEvent(done.Series, d.Iteration, a))
		}
		c := store.Change{Actor: "hook", Reason: "hook: " + string(d.Review) + " " + string(res.Verdict), State: rr.Save, DuringReview: true, Events: evs}
		if rr.MarkDone != 0 {
			c.Statuses = map[domain.TaskID]string{rr.MarkDone: plan.StatusDone}
		}
		return rr, h.p.Commit(snap, c)
	}
	rr, err := record(snap)
	if errors.Is(err, store.ErrMoved) {
		// Something else changed state.json meanwhile (a `taskie set`, say).
		// If the review cycle itself did not move, the verdict still applies.
		h.p.Reload()
		if cur, lerr := h.p.Snapshot(); lerr == nil && workflow.VerdictStillApplies(s, cur.State) {
			rr, err = record(cur)
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrMoved) {
			// The cycle moved on: this review belongs to no cycle now. Keep
			// it in the log, out of the plan, so no stop adopts it later.
			logPath := h.runner().SetAside(job, "its cycle moved on while the reviewer ran")
			done.Finished.Recorded = new(false)
			h.runner().Event(events.Event{Task: d.Task.String(), Event: events.ReviewFinished, Actor: "hook", Meta: events.Meta(done.Finished)})
			h.why = "state moved during the review"
			return warnAllow(h.e, fmt.Sprintf("the plan moved to another review cycle while the %s reviewer ran, so its verdict (%s) was not recorded and the review was moved to %s. Run `taskie continue` to see where the plan stands.",
				d.Review, res.Verdict, logPath))
		}
		return h.internal(fmt.Errorf("%s written but not recorded: %w", relPath(h.p.Repo.Root, h.p.Path(job.Name())), err))
	}
	h.why = fmt.Sprintf("%s %d: %s", d.Review, d.Iteration, res.Verdict)
	if rr.ToHuman != "" {
		h.toHuman(d.Task, rr.ToHuman)
	}
	return h.reviewed(v, d, res.Verdict, rr, done.After, a)
}

// runner is the review runner of this stop: one fold of the log for the
// ledger, the budget and the review.
func (h *stopper) runner() *reviewrun.Runner {
	if h.rr == nil {
		h.rr = &reviewrun.Runner{Plan: h.p, Cfg: h.cfg, Now: h.now, Info: h.log.info, Ctx: h.e.Ctx}
	}
	return h.rr
}

// reviewed answers the stop once a review is recorded: paused, a human
// needed, the block for the post-review, or the advance.
func (h *stopper) reviewed(v view, d workflow.StopDecision, verdict domain.Verdict, rr workflow.ReviewResult, l ledger.Ledger, a ledger.Assessment) Result {
	if rr.Paused {
		return Allow(fmt.Sprintf("taskie: %s %d: %s, recorded; automation was paused while the reviewer ran, so the agent is not asked to act on it (`taskie resume%s` goes on).", d.Review, d.Iteration, verdict, v.planFlag))
	}
	if rr.NeedsHuman {
		h.why += ", needs a human"
		msg := strings.TrimPrefix(needsHumanMessage(v, d.Review, whyGoingRound(a.Reason, a.Threshold), indent(ledger.Describe(l, a.Going))), "taskie: the ")
		if rr.ToHuman != "" {
			msg += fmt.Sprintf(" Task %s is with a human now (human_escalation): `taskie task resolve %s --actor human%s` and `taskie resume%s` review again; `taskie task abandon %s --actor human%s` gives it up.",
				d.Task, d.Task, v.planFlag, v.planFlag, d.Task, v.planFlag)
		}
		return Allow(fmt.Sprintf("taskie: %s %d: %s, recorded. The %s", d.Review, d.Iteration, verdict, msg))
	}
	if !rr.Outcome.Advanced {
		h.sess.LastReviewBlock = rr.Mark
		bd := blockData(v, rr.Save, d.Model, verdict, false)
		bd.Judged, bd.Findings = judged(verdict, a, rr.Save.ConsecutiveClean), openList(l)
		if a.BudgetExceeded != nil {
			bd.Budget = a.BudgetExceeded.String()
		}
		// The lifecycle moved with the review's commit: the plan as written.
		if st, err := h.p.State(); err == nil && d.Review == domain.CodeReview {
			life, _ := workflow.TaskLife(st)
			bd.CTO = life == lifecycle.CTOIntervention
		}
		return Result{Block: true, Reason: BlockMessage(bd)}
	}
	if d.Review == domain.CodeReview {
		v.taskDone = h.completedTask(d.Task)
	}
	return advanced(v, d.Review, rr.Outcome.Target, h.cfg.Autopilot)
}

// completedTask names task when the plan as written records it completed
// (a pass outside git completes it at once); "" otherwise.
func (h *stopper) completedTask(task domain.TaskID) string {
	st, err := h.p.State()
	if err != nil || st == nil {
		return ""
	}
	recs, err := taskrec.Records(st)
	if err != nil {
		return ""
	}
	if t, ok := recs[task]; ok && t.State == lifecycle.Completed {
		return task.String()
	}
	return ""
}

// failed allows with the reviewer's reason and where its output is kept:
// state unchanged, the next stop retries.
func (h *stopper) failed(d workflow.StopDecision, f *reviewrun.Failed) Result {
	// The reviewer's own reason and its kept output, for `taskie status`
	// and `taskie continue` (claude -p never shows the allow's message).
	h.why = fmt.Sprintf("%s %d failed (%s): %s", d.Review, d.Iteration, f.Kind, firstLine(f.Error()))
	h.logAttrs = append(h.logAttrs, "review_log", filepath.ToSlash(f.Log))
	if f.OutOfBudget {
		return warnAllow(h.e, fmt.Sprintf("the %s reviewer used up its review_budget (%s) and was stopped: %v. state.json is unchanged; the reviewer's output is in %s. No further review runs while the last one took its whole budget: raise \"review_budget\" in .taskie/config.json to review again.",
			d.Review, h.cfg.ReviewBudget.D(), firstLine(f.Error()), f.Log))
	}
	return warnAllow(h.e, fmt.Sprintf("the %s reviewer failed (%s): %v. state.json is unchanged; the reviewer's output is in %s. Fix it (`taskie doctor`) and stop again to retry.",
		d.Review, f.Kind, firstLine(f.Error()), f.Log))
}

// trustMessage is non-empty when config ignored settings that run a
// program because the repository's config file is not trusted.
func trustMessage(c config.Config) string { return c.TrustMessage() }

// takeOver records that this session now drives the plan (docs/hook.md): a
// new session continuing a plan whose previous session ended its turn.
func (h *stopper) takeOver(previous, why string) {
	err := h.p.Update(func(s *store.Snapshot) (store.Change, error) {
		if s.State == nil || s.State.SessionID == h.in.SessionID || !s.State.IsEnabled() || s.State.Next() == "" {
			return store.Change{}, nil // nothing to drive: nothing to take over
		}
		n := s.State.Clone()
		n.SessionID = h.in.SessionID
		return store.Change{Actor: "hook", Kind: events.OwnerChanged, State: n,
			Reason: "session " + h.in.SessionID + " takes the plan over (" + why + ")", Meta: events.Meta(events.OwnerChangedMeta{Previous: previous})}, nil
	})
	if err != nil {
		h.log.info("taking the plan over", "error", err.Error())
	}
}
