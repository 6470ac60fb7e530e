package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/ledger/ledgerlog"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// stopper is one Stop hook call on a selected plan: it gathers the facts
// from one snapshot, asks workflow.Decide, and carries the decision out.
type stopper struct {
	e    Env
	in   Input
	cfg  config.Config
	p    *project.Plan
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
	lr   *ledgerlog.Reader // the event log folded for the review ledger, once read
}

func (h *stopper) run() Result {
	snap, err := h.p.Snapshot()
	if err != nil {
		return h.internal(err)
	}
	f := h.facts(snap)
	d := workflow.Decide(f)
	if d.Action == workflow.TakeLock {
		l, ok, err := h.takeReviewLock()
		if err != nil {
			return h.internal(err)
		}
		f.Lock = workflow.LockBusy
		if ok {
			h.lock, f.Lock = l, workflow.LockHeld
			// Closed, not unlocked: a reviewer that inherited the lock keeps
			// it for as long as it (or a child of it) lives.
			defer l.Release()
		}
		d = workflow.Decide(f)
	}
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
	if d.Action != workflow.RunReview {
		return render(d, v)
	}
	return h.review(snap, d, f.OrphanAhead(d.Review, d.Iteration), v)
}

// orphanLockWait bounds the wait for the review lock after the group of
// an orphaned review was killed: its processes close the lock as they die.
const orphanLockWait = 3 * time.Second

// takeReviewLock takes the plan's review lock. When another holds it, the
// review may be an orphan: its hook is gone (kill -9, the OOM killer) and
// what the reviewer started still holds the lock with nobody to enforce
// its timeout. Once its deadline passed, its process group is ended
// (review.EndOrphan) and the lock taken, so this stop reviews again.
// The lock's content, the last holder's lease, is cleared at once.
func (h *stopper) takeReviewLock() (*fsafe.Lock, bool, error) {
	root, rel := h.p.Store.Root(), store.Rel(h.p.ID, store.ReviewLockName)
	l, ok, err := root.TryLock(rel)
	if err != nil || !ok {
		if err != nil {
			return nil, false, err
		}
		r := review.EndOrphan(root, rel, h.now)
		if !r.Ended {
			return nil, false, nil
		}
		h.log.info("review", "why", "orphaned review: "+r.Why)
		if l, err = root.Lock(rel, orphanLockWait); err != nil {
			h.log.info("review", "why", "orphaned review: the lock is still held: "+err.Error())
			return nil, false, nil
		}
	}
	if err := review.ClearLease(root, rel); err != nil {
		h.log.info("review", "why", "clearing the review lease: "+err.Error())
	}
	return l, true, nil
}

// recordLease writes the running reviewer's lease into the lock file, for
// a later stop to end it if this hook dies.
func (h *stopper) recordLease(l review.Lease) {
	if err := review.WriteLease(h.p.Store.Root(), store.Rel(h.p.ID, store.ReviewLockName), l); err != nil {
		h.log.info("review", "why", "recording the review lease: "+err.Error())
	}
}

// facts gathers what the decision needs from the snapshot, once.
func (h *stopper) facts(snap *store.Snapshot) workflow.StopFacts {
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
		Budget:          h.budget,
	}
	f.Route = func(s *state.State) workflow.Route {
		rf := snap.RouteFacts(s)
		rf.Orphan, rf.Agent = h.orphan, h.in.Agent
		return workflow.Continue(rf, h.cfg.Models)
	}
	for _, v := range snap.Validate() {
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
	f.PendingOther = snap.PendingOther(task)
	if task > 0 {
		f.TaskFileExists = snap.Exists(plan.TaskFile(int(task)))
	}
	if workflow.IsReview(s.Phase) {
		f.PostReviewExists = snap.PostExists(s.Phase, task, s.Iteration())
	}
	f.ReviewAhead = func(review domain.Phase, n int) bool { return snap.ReviewExists(review, task, n) }
	f.OrphanAhead = func(review domain.Phase, n int) bool {
		return snap.ReviewExists(review, task, n) && h.orphan(review, task, n)
	}
	return f
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
	started := false
	for _, e := range evs {
		if e.Meta == nil || e.Meta["review"] != string(review) || e.Task != task.String() || fmt.Sprint(e.Meta["iteration"]) != strconv.Itoa(it) {
			continue
		}
		switch e.Event {
		case events.ReviewStarted:
			started = true
		case events.ReviewFinished, events.ReviewFailed:
			started = false
		}
	}
	return started
}

func (h *stopper) view(snap *store.Snapshot, f workflow.StopFacts) view {
	v := view{plan: h.p.ID, planFlag: h.planFlag, root: h.p.Repo.Root, dir: h.p.Dir, s: snap.State,
		violations: f.Violations, untrusted: f.Untrusted, blocksInRow: f.BlocksInRow, blockCap: f.BlockCap, pendingOther: f.PendingOther,
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
	pick := review.Resolve(h.cfg.Reviewer, h.cfg.Models, max(0, slices.Index(h.cfg.Models, d.Model)))
	rv, err := review.New(pick.Reviewer)
	if err != nil {
		return h.internal(err)
	}
	s := snap.State
	name := plan.ReviewFile(string(d.Review), int(d.Task), d.Iteration)
	if orphan {
		// A reviewer whose hook was killed wrote it: not this cycle's review.
		h.setAside(d, name, "left by a reviewer whose hook was killed")
	}
	series := ledgerlog.SeriesOf(d.Review, d.Task)
	before := h.cycleLedger(series, d.Iteration)
	settings := h.cfg.Ledger()
	req := review.Request{
		Kind: d.Review, PlanID: h.p.ID, Task: d.Task, Iteration: d.Iteration, Model: d.Model,
		Root: h.p.Repo.Root, PlanDir: h.p.Dir, ReviewFile: h.p.Path(name),
		TaskFiles: snap.TaskFiles(), Timeout: ledger.ReviewTimeout(settings, h.cfg.ReviewerTimeout.D()), Tools: h.cfg.AllowedTools,
		Command: pick.Program(h.cfg.Reviewer, h.cfg.ReviewerCommand), Effort: pick.Effort, HoldLock: h.lock.File(), Lease: h.recordLease, Findings: ledger.ForReviewer(before),
	}
	if pick.Reviewer != h.cfg.Reviewer || pick.Model != d.Model {
		req.Model = pick.Model
	}
	meta := map[string]any{"review": string(d.Review), "iteration": d.Iteration, "model": string(d.Model), "reviewer": pick.Reviewer}
	h.event(events.Event{Task: d.Task.String(), Event: events.ReviewStarted, Actor: "hook", Meta: meta})
	ctx := h.e.Ctx
	if ctx == nil {
		// The agent's hook timeout or Ctrl-C kills the hook: take the
		// reviewer's process group down with it. Registered only here, as
		// signal handling costs start-up time on every other stop.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
	}
	_, statErr := h.p.Store.Root().Lstat(store.Rel(h.p.ID, name))
	existed := statErr == nil
	start := time.Now()
	res, err := rv.Review(ctx, req)
	took := time.Since(start)
	if err != nil {
		return h.failed(d, name, !existed, err, took, settings.ReviewBudget > 0 && req.Timeout == settings.ReviewBudget)
	}
	found, after, a := h.judge(before, d.Iteration, res, settings)
	fin := map[string]any{"review": string(d.Review), "iteration": d.Iteration, "model": string(d.Model), "verdict": string(res.Verdict),
		"cost_usd": res.CostUSD, "duration_ms": res.DurationMS, "took_ms": took.Milliseconds(), "reviewer_session": res.SessionID,
		"review_file": name, "wrote_file": res.WroteFile, "clean": a.Clean}
	if a.Tracked {
		fin["rule"] = string(a.Reason)
	}
	record := func(snap *store.Snapshot) (workflow.ReviewResult, error) {
		rr := workflow.AfterReview(snap.State, d, workflow.Finished{Verdict: res.Verdict, Ledger: &a}, snap.PendingOther(snap.State.Task()), h.cfg.Models, h.cfg.Autopilot, h.in.SessionID)
		evs := append([]events.Event{{Task: d.Task.String(), Event: events.ReviewFinished, Actor: "hook", Meta: fin}}, ledgerlog.ToLog(series, found)...)
		if rr.NeedsHuman {
			evs = append(evs, ledgerlog.NeedsHumanEvent(series, d.Iteration, a))
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
			logPath := h.setAside(d, name, "its cycle moved on while the reviewer ran")
			fin["recorded"] = false
			h.event(events.Event{Task: d.Task.String(), Event: events.ReviewFinished, Actor: "hook", Meta: fin})
			h.why = "state moved during the review"
			return warnAllow(h.e, fmt.Sprintf("the plan moved to another review cycle while the %s reviewer ran, so its verdict (%s) was not recorded and the review was moved to %s. Run `taskie continue` to see where the plan stands.",
				d.Review, res.Verdict, logPath))
		}
		return h.internal(fmt.Errorf("%s written but not recorded: %w", relPath(h.p.Repo.Root, req.ReviewFile), err))
	}
	h.why = fmt.Sprintf("%s %d: %s", d.Review, d.Iteration, res.Verdict)
	return h.reviewed(v, d, res.Verdict, rr, after, a)
}

// judge records a review's findings in the cycle's ledger and applies the
// ledger's rules (SPEC §19): the events to append, the ledger after them,
// and the assessment. A reviewer that reports no findings adds no event
// and its verdict alone decides.
func (h *stopper) judge(before ledger.Ledger, it int, res review.Result, s ledger.Settings) ([]ledger.Event, ledger.Ledger, ledger.Assessment) {
	found := ledger.Record(before, it, res.Answer())
	after := before
	for _, e := range found {
		after = ledger.Fold(after, e)
	}
	return found, after, ledger.Assess(after, it, res.Verdict, s, h.ledgerLog().SpentUSD+res.CostUSD)
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
		return Allow(fmt.Sprintf("taskie: %s %d: %s, recorded. The %s", d.Review, d.Iteration, verdict, msg))
	}
	if !rr.Outcome.Advanced {
		h.sess.LastReviewBlock = rr.Mark
		bd := blockData(v, rr.Save, d.Model, verdict, false)
		bd.Judged, bd.Findings = judged(verdict, a, rr.Save.ConsecutiveClean), openList(l)
		if a.BudgetExceeded != nil {
			bd.Budget = a.BudgetExceeded.String()
		}
		return Result{Block: true, Reason: BlockMessage(bd)}
	}
	return advanced(v, d.Review, rr.Outcome.Target, h.cfg.Autopilot)
}

// setAside moves a review file that is no review of this cycle into the
// log directory; it returns where it went.
func (h *stopper) setAside(d workflow.StopDecision, name, why string) string {
	data, err := h.p.Store.Root().ReadFile(store.Rel(h.p.ID, name))
	if err != nil {
		return "(nothing to keep)"
	}
	logPath := h.keep(d, append([]byte("--- "+name+": "+why+" ---\n"), data...))
	if logPath[0] != '(' {
		_ = h.p.Store.Root().Remove(store.Rel(h.p.ID, name))
	}
	return relPath(h.p.Repo.Root, logPath)
}

// failed keeps the reviewer's output in a log and allows: state unchanged.
// A review file the failed run left behind goes into the log too, so the
// next stop retries the review instead of taking a partial file for one.
//
// took is how long the reviewer ran; outOfBudget says its timeout was the
// review_budget, which a timeout then used up.
func (h *stopper) failed(d workflow.StopDecision, name string, ours bool, err error, took time.Duration, outOfBudget bool) Result {
	var f *review.Failure
	raw := []byte(err.Error())
	kind := "error"
	if errors.As(err, &f) {
		raw, kind = append([]byte(f.Msg+"\n\n"), f.Raw...), f.Kind
	}
	if ours {
		if partial, rerr := h.p.Store.Root().ReadFile(store.Rel(h.p.ID, name)); rerr == nil {
			raw = append(append(raw, "\n\n--- review file left by the failed run ("+name+") ---\n"...), partial...)
			if h.p.Store.Root().Remove(store.Rel(h.p.ID, name)) != nil {
				raw = append(raw, "\n(could not remove it)\n"...)
			}
		}
	}
	logPath := h.keep(d, raw)
	h.event(events.Event{Task: d.Task.String(), Event: events.ReviewFailed, Actor: "hook",
		Meta: map[string]any{"review": string(d.Review), "iteration": d.Iteration, "model": string(d.Model), "failure": kind,
			"log": relPath(h.p.Repo.Root, logPath), "took_ms": took.Milliseconds()}})
	// The reviewer's own reason and its kept output, for `taskie status`
	// and `taskie continue` (claude -p never shows the allow's message).
	h.why = fmt.Sprintf("%s %d failed (%s): %s", d.Review, d.Iteration, kind, firstLine(err.Error()))
	h.logAttrs = append(h.logAttrs, "review_log", filepath.ToSlash(relPath(h.p.Repo.Root, logPath)))
	if kind == review.FailTimeout && outOfBudget {
		return warnAllow(h.e, fmt.Sprintf("the %s reviewer used up its review_budget (%s) and was stopped: %v. state.json is unchanged; the reviewer's output is in %s. No further review runs while the last one took its whole budget: raise \"review_budget\" in .taskie/config.json to review again.",
			d.Review, h.cfg.ReviewBudget.D(), firstLine(err.Error()), relPath(h.p.Repo.Root, logPath)))
	}
	return warnAllow(h.e, fmt.Sprintf("the %s reviewer failed (%s): %v. state.json is unchanged; the reviewer's output is in %s. Fix it (`taskie doctor`) and stop again to retry.",
		d.Review, kind, firstLine(err.Error()), relPath(h.p.Repo.Root, logPath)))
}

// keep writes a reviewer's raw output to a new log file (never overwritten).
func (h *stopper) keep(d workflow.StopDecision, raw []byte) string {
	name := fmt.Sprintf("%s-%s-%d-%s", h.p.ID, d.Review, d.Iteration, h.now.UTC().Format("20060102T150405Z"))
	if d.Task != 0 {
		name = fmt.Sprintf("%s-%s-task%s-%d-%s", h.p.ID, d.Review, d.Task, d.Iteration, h.now.UTC().Format("20060102T150405Z"))
	}
	root := h.p.Store.Root()
	if err := root.MkdirAll(filepath.Join(".taskie", "logs"), 0o755); err != nil {
		return "(could not write a log: " + err.Error() + ")"
	}
	for i := 0; i < 1000; i++ {
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
		return root.Path(rel)
	}
	return "(could not write a log: too many logs of this review)"
}

// event appends events under the plan lock; failures only go to the log.
func (h *stopper) event(evs ...events.Event) {
	if err := h.p.Store.Append(h.p.ID, evs...); err != nil {
		h.log.info("appending events", "error", err.Error())
	}
}

// trustMessage is non-empty when config ignored settings that run a
// program because the repository's config file is not trusted.
func trustMessage(c config.Config) string { return c.TrustMessage() }

// takeOver records that this session now drives the plan (SPEC §5.2): a
// new session continuing a plan whose previous session ended its turn.
func (h *stopper) takeOver(previous, why string) {
	err := h.p.Update(func(s *store.Snapshot) (store.Change, error) {
		if s.State == nil || s.State.SessionID == h.in.SessionID || !s.State.IsEnabled() || s.State.Next() == "" {
			return store.Change{}, nil // nothing to drive: nothing to take over
		}
		n := s.State.Clone()
		n.SessionID = h.in.SessionID
		return store.Change{Actor: "hook", Kind: events.OwnerChanged, State: n,
			Reason: "session " + h.in.SessionID + " takes the plan over (" + why + ")", Meta: map[string]any{"previous": previous}}, nil
	})
	if err != nil {
		h.log.info("taking the plan over", "error", err.Error())
	}
}
