package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// stopper is one Stop hook call on a selected plan.
type stopper struct {
	e    Env
	in   Input
	cfg  config.Config
	p    *project.Plan
	log  *planLog
	sess *Session
	now  time.Time
	why  string // for the log line
	ts   *plan.Tasks
}

func (h *stopper) run() Result {
	s, serr := h.p.State()
	if serr == nil && !s.IsEnabled() {
		h.why = "automation paused"
		return Allow("")
	}
	if res, blocked := h.validate(); blocked {
		return res
	}
	if errors.Is(serr, state.ErrNotFound) {
		h.why = "no state.json: standalone plan"
		return Allow("")
	}
	if serr != nil {
		h.why = "state.json unreadable"
		return warnAllow(h.e, serr.Error()+" — automation skipped until it is fixed (`taskie validate`)")
	}
	if n := s.Next(); workflow.IsReview(n) || workflow.IsPostReview(n) {
		// One review per plan at a time: a second stop (another session, or
		// this one after its hook was killed) must not review, recover or
		// write the same files concurrently. A post-review may be detected
		// as done below, making the review due in this very stop.
		release, ok, err := state.TryReviewLock(h.p.Dir)
		defer release()
		if err != nil {
			return h.internal(err)
		}
		if !ok {
			h.why = "a review of this plan is already running"
			return Allow(fmt.Sprintf("taskie: a review of plan %q is already running (another stop or session); this stop is allowed.", h.p.ID))
		}
		h.p.ReviewLockHeld = true
	}
	h.ts, _, _ = h.p.Tasks()
	if repaired, res, ok := h.recoverAhead(s); ok {
		return res
	} else if repaired != nil {
		s = repaired
	}
	d := workflow.Decide(h.facts(s))
	h.why = d.Why
	if d.Save != nil {
		if err := h.commit(s, d.Save, "hook: "+d.Why); err != nil {
			return h.internal(err)
		}
		s = d.Save
	}
	switch d.Action {
	case workflow.Allow:
		return Allow(d.Message)
	case workflow.Remind:
		h.sess.LastReviewBlock = ptr(workflow.MarkOf(s))
		return Result{Block: true, Reason: h.blockMessage(s, "", "", true), needsMemory: true}
	}
	return h.review(s, d)
}

// validate blocks on plan violations, unless the same ones were already
// reported to this session in the current chain of blocks.
func (h *stopper) validate() (Result, bool) {
	var errs []string
	for _, v := range h.p.Validate() {
		if v.Severity == plan.SeverityError {
			errs = append(errs, v.String())
		}
	}
	if len(errs) == 0 {
		h.sess.Violations = ""
		return Result{}, false
	}
	fp := strings.Join(errs, "\n")
	list := "  - " + strings.Join(errs, "\n  - ")
	if h.in.StopHookActive && h.sess.Violations == fp {
		h.why = "same violations already reported"
		return Allow(fmt.Sprintf("taskie: plan %q still has %d validation problem(s), already reported; stop allowed. Run `taskie validate %s` to see them.", h.p.ID, len(errs), h.p.ID)), true
	}
	h.sess.Violations = fp
	h.why = "validation failed"
	return Result{Block: true, needsMemory: true, Reason: fmt.Sprintf(
		"taskie: plan %q (%s) breaks the plan format:\n%s\nFix every item, then end your turn again (`taskie validate %s` checks). To stop automation instead: `taskie pause --plan %s`.",
		h.p.ID, relPath(h.p.Repo.Root, h.p.Dir), list, h.p.ID, h.p.ID)}, true
}

func (h *stopper) facts(s *state.State) workflow.StopFacts {
	task, _ := strconv.Atoi(s.Task())
	f := workflow.StopFacts{
		State:        s,
		Active:       h.in.StopHookActive,
		AnyTaskFile:  h.p.AnyTaskFile(h.ts),
		PendingOther: project.PendingOther(h.ts, s.Task()),
		BlocksInRow:  h.sess.BlocksInRow,
		BlockCap:     h.cfg.BlockCap,
		Models:       h.cfg.Models,
	}
	if task > 0 {
		f.TaskFileExists = h.p.Exists(plan.TaskFile(task))
	}
	if workflow.IsReview(s.Phase) {
		f.PostReviewExists = plan.PostReviewFileExists(h.p.Dir, s.Phase, task, s.Iteration())
	}
	f.LastReviewBlock = h.sess.LastReviewBlock
	return f
}

// recoverAhead handles a crash that left the review file of the due
// iteration on disk without the state update: the same repair as `taskie
// continue`. It returns the repaired state to go on with, or a final result.
func (h *stopper) recoverAhead(s *state.State) (*state.State, Result, bool) {
	review := s.Next()
	task, _ := strconv.Atoi(s.Task())
	if !workflow.IsReview(review) || workflow.StaleCycle(s) || !plan.ReviewFileExists(h.p.Dir, review, task, s.Iteration()+1) {
		return nil, Result{}, false
	}
	route := workflow.Continue(h.p.RouteFacts(s), h.cfg.Models)
	if route.Repair == nil {
		return nil, Result{}, false
	}
	if err := h.commit(s, route.Repair, "hook recovery: "+route.Why); err != nil {
		return nil, h.internal(err), true
	}
	h.why = "recovered: " + route.Why
	if route.Repair.Next() != workflow.PostReview(review) {
		return route.Repair, Result{}, false // post-review also done: go on to the next review
	}
	h.sess.LastReviewBlock = ptr(workflow.MarkOf(route.Repair))
	return nil, Result{Block: true, Reason: h.blockMessage(route.Repair, s.ReviewModel, "", false)}, true
}

func ptr[T any](v T) *T { return &v }

// commit writes next in place of s, unless state.json moved meanwhile. A
// failure to append the events after the state was saved is only logged:
// the change happened, and the agent must still be told about it.
func (h *stopper) commit(s, next *state.State, reason string, extra ...events.Event) error {
	err := h.p.Swap(s, next, "hook", reason, extra...)
	var ee *project.EventsError
	if errors.As(err, &ee) {
		h.log.info("events not appended", "error", ee.Error())
		fmt.Fprintln(h.e.Stderr, "taskie: warning: "+ee.Error())
		return nil
	}
	return err
}

// internal turns an unexpected error into an allow: never trap the user.
func (h *stopper) internal(err error) Result {
	h.why = "error: " + err.Error()
	return warnAllow(h.e, fmt.Sprintf("%v; stop allowed, state.json unchanged", err))
}

func (h *stopper) review(s *state.State, d workflow.StopDecision) Result {
	rv, err := review.New(h.cfg.Reviewer)
	if err != nil {
		return h.internal(err)
	}
	task, _ := strconv.Atoi(d.Task)
	req := review.Request{
		Kind: d.Review, PlanID: h.p.ID, Task: d.Task, Iteration: d.Iteration, Model: d.Model,
		Root: h.p.Repo.Root, PlanDir: h.p.Dir, ReviewFile: h.p.Path(plan.ReviewFile(d.Review, task, d.Iteration)),
		TaskFiles: h.p.TaskFiles(h.ts), Timeout: h.cfg.ReviewerTimeout.D(), Tools: h.cfg.AllowedTools,
		Command: h.cfg.ReviewerCommand,
	}
	meta := map[string]any{"review": d.Review, "iteration": d.Iteration, "model": d.Model, "reviewer": h.cfg.Reviewer}
	h.event(events.Event{Task: d.Task, Event: events.ReviewStarted, Actor: "hook", Meta: meta})
	ctx := h.e.Ctx
	if ctx == nil {
		// The agent's hook timeout or Ctrl-C kills the hook: take the
		// reviewer's process group down with it. Registered only here, as
		// signal handling costs start-up time on every other stop.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
	}
	_, statErr := os.Stat(req.ReviewFile)
	existed := statErr == nil
	res, err := rv.Review(ctx, req)
	if err != nil {
		if existed { // not this run's file: never remove it
			return h.failed(d, "", err)
		}
		return h.failed(d, req.ReviewFile, err)
	}
	next, out := workflow.Apply(s, d, res.Verdict, project.PendingOther(h.ts, s.Task()), h.cfg.Models)
	if h.in.SessionID != "" {
		next.SessionID = h.in.SessionID
	}
	fin := map[string]any{"review": d.Review, "iteration": d.Iteration, "model": d.Model, "verdict": res.Verdict,
		"cost_usd": res.CostUSD, "duration_ms": res.DurationMS, "reviewer_session": res.SessionID,
		"review_file": filepath.Base(req.ReviewFile), "wrote_file": res.WroteFile}
	err = h.commit(s, next, "hook: "+d.Review+" "+res.Verdict, events.Event{Task: d.Task, Event: events.ReviewFinished, Actor: "hook", Meta: fin})
	if errors.Is(err, project.ErrMoved) {
		// Something else changed state.json meanwhile (a `taskie set`, say).
		// If the review cycle itself did not move, the verdict still applies.
		if cur, lerr := h.p.State(); lerr == nil && workflow.MarkOf(cur) == workflow.MarkOf(s) && cur.Next() == s.Next() {
			s = cur
			next, out = workflow.Apply(s, d, res.Verdict, project.PendingOther(h.ts, s.Task()), h.cfg.Models)
			if h.in.SessionID != "" {
				next.SessionID = h.in.SessionID
			}
			err = h.commit(s, next, "hook: "+d.Review+" "+res.Verdict, events.Event{Task: d.Task, Event: events.ReviewFinished, Actor: "hook", Meta: fin})
		}
	}
	if err != nil {
		if errors.Is(err, project.ErrMoved) {
			// The cycle moved on: this review belongs to no cycle now. Keep
			// it in the log, out of the plan, so no stop adopts it later.
			if data, rerr := os.ReadFile(req.ReviewFile); rerr == nil && !strings.HasPrefix(h.keep(d, data), "(") {
				_ = os.Remove(req.ReviewFile)
			}
			fin["recorded"] = false
			h.event(events.Event{Task: d.Task, Event: events.ReviewFinished, Actor: "hook", Meta: fin})
			h.why = "state moved during the review"
			return warnAllow(h.e, fmt.Sprintf("the plan moved to another review cycle while the %s reviewer ran, so its verdict (%s) was not recorded and the review was moved to %s. Run `taskie continue` to see where the plan stands.",
				d.Review, res.Verdict, relPath(h.p.Repo.Root, h.log.dir)))
		}
		return h.internal(fmt.Errorf("%s written but not recorded: %w", relPath(h.p.Repo.Root, req.ReviewFile), err))
	}
	h.why = fmt.Sprintf("%s %d: %s", d.Review, d.Iteration, res.Verdict)
	if !out.Advanced {
		h.sess.LastReviewBlock = ptr(workflow.MarkOf(next))
		return Result{Block: true, Reason: h.blockMessage(next, d.Model, res.Verdict, false)}
	}
	if d.Review == workflow.CodeReview {
		h.markDone(d.Task)
	}
	return h.advanced(d.Review, out.Target)
}

// markDone sets the finished task's status to done in tasks.md.
func (h *stopper) markDone(task string) {
	err := state.WithLock(h.p.Dir, func() error {
		ts, _, err := h.p.Tasks()
		id, _ := strconv.Atoi(task)
		if err != nil || ts == nil || ts.SetStatus(id, plan.StatusDone) != nil {
			return err
		}
		return state.WriteFileAtomic(h.p.Path("tasks.md"), ts.Bytes())
	})
	if err != nil {
		h.log.info("marking task done", "task", task, "error", err.Error())
	}
}

func (h *stopper) advanced(review, target string) Result {
	what := map[string]string{
		workflow.CreateTasks:     "create the tasks",
		workflow.CompleteTask:    "start the next task",
		workflow.CompleteTaskTDD: "start the next task test-first",
		workflow.AllCodeReview:   "run the final all-code review (end your turn)",
		workflow.Complete:        "record the plan as complete",
	}[target]
	if h.cfg.Autopilot {
		return Result{Block: true, Reason: fmt.Sprintf("taskie: %s passed (two clean reviews in a row). Autopilot is on: run `taskie continue%s` now and do what it says (%s).", review, h.p.PlanFlag(), what)}
	}
	return Allow(fmt.Sprintf("taskie: %s passed (two clean reviews in a row). Run /taskie:continue-plan to %s.", review, what))
}

// failed keeps the reviewer's output in a log and allows: state unchanged.
// A review file the failed run left behind goes into the log too, so the
// next stop retries the review instead of taking a partial file for one.
func (h *stopper) failed(d workflow.StopDecision, reviewFile string, err error) Result {
	var f *review.Failure
	raw := []byte(err.Error())
	kind := "error"
	if errors.As(err, &f) {
		raw, kind = append([]byte(f.Msg+"\n\n"), f.Raw...), f.Kind
	}
	if partial, rerr := os.ReadFile(reviewFile); rerr == nil {
		raw = append(append(raw, "\n\n--- review file left by the failed run ("+filepath.Base(reviewFile)+") ---\n"...), partial...)
		if os.Remove(reviewFile) != nil {
			raw = append(raw, "\n(could not remove it)\n"...)
		}
	}
	logPath := h.keep(d, raw)
	h.event(events.Event{Task: d.Task, Event: events.ReviewFailed, Actor: "hook",
		Meta: map[string]any{"review": d.Review, "iteration": d.Iteration, "model": d.Model, "failure": kind, "log": relPath(h.p.Repo.Root, logPath)}})
	h.why = fmt.Sprintf("%s %d failed: %s", d.Review, d.Iteration, kind)
	return warnAllow(h.e, fmt.Sprintf("the %s reviewer failed (%s): %v. state.json is unchanged; the reviewer's output is in %s. Fix it (`taskie doctor`) and stop again to retry.",
		d.Review, kind, firstLine(err.Error()), relPath(h.p.Repo.Root, logPath)))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// keep writes a reviewer's raw output to a new log file (never overwritten).
func (h *stopper) keep(d workflow.StopDecision, raw []byte) string {
	name := fmt.Sprintf("%s-%s-%d-%s", h.p.ID, d.Review, d.Iteration, h.now.UTC().Format("20060102T150405Z"))
	if d.Task != "" {
		name = fmt.Sprintf("%s-%s-task%s-%d-%s", h.p.ID, d.Review, d.Task, d.Iteration, h.now.UTC().Format("20060102T150405Z"))
	}
	for i := 0; ; i++ {
		p := filepath.Join(h.log.dir, name+".log")
		if i > 0 {
			p = filepath.Join(h.log.dir, fmt.Sprintf("%s-%d.log", name, i))
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "(could not write a log: " + err.Error() + ")"
		}
		_, _ = f.Write(raw)
		f.Close()
		return p
	}
}

// event appends events under the plan lock; failures only go to the log.
func (h *stopper) event(evs ...events.Event) {
	for i := range evs {
		evs[i].Plan = h.p.ID
	}
	if err := state.WithLock(h.p.Dir, func() error { return events.Append(h.p.Dir, evs...) }); err != nil {
		h.log.info("appending events", "error", err.Error())
	}
}

func (h *stopper) blockMessage(s *state.State, model, verdict string, reminder bool) string {
	review, n := s.Phase, s.Iteration()
	task, _ := strconv.Atoi(s.Task())
	root := h.p.Repo.Root
	return BlockMessage(BlockData{
		Plan: h.p.ID, Task: s.Task(), Review: review, Model: model, Verdict: verdict, Reminder: reminder,
		Iteration: n, NextIteration: n + 1, Clean: s.ConsecutiveClean,
		ReviewFile: relPath(root, h.p.Path(plan.ReviewFile(review, task, n))),
		PostFile:   relPath(root, h.p.Path(plan.PostReviewFile(review, task, n))),
		StateFile:  relPath(root, state.Path(h.p.Dir)),
		PlanFlag:   h.p.PlanFlag(),
	})
}
