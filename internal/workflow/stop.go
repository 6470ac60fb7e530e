package workflow

import (
	"math"
	"slices"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
)

// Mark fingerprints the review cycle at one of the hook's review blocks, so
// that the next stop can tell whether the agent did the post-review since:
// while phase, task and iteration are unchanged, it did not.
type Mark struct {
	Phase     domain.Phase
	Task      domain.TaskID `json:"Task,string,omitempty"` // "3" in session memory, as before
	Iteration int
}

// MarkOf returns the fingerprint of a state.
func MarkOf(s *state.State) Mark {
	return Mark{Phase: s.Phase, Task: s.Task(), Iteration: s.Iteration()}
}

// StateProblem says why the hook has no usable state.json.
type StateProblem int

// State problems.
const (
	StateOK StateProblem = iota
	StateMissing
	StateUnreadable
)

// LockState is what the hook knows of the plan's review lock.
type LockState int

// Review lock states: the hook takes the lock only when Decide asks.
const (
	LockUnknown LockState = iota
	LockHeld
	LockBusy
)

// StopFacts is everything the Stop decision depends on (docs/hook.md), gathered
// once from one snapshot by the hook; Decide does no I/O.
type StopFacts struct {
	State        *state.State // nil when StateProblem is not StateOK
	StateProblem StateProblem

	Active bool // stop_hook_active: this stop follows a block

	// Violations are the plan's validation errors, one line each; Seen is
	// the fingerprint of those this session was last told about.
	Violations []string
	Seen       string

	// Untrusted is non-empty when the repository's config asks to run a
	// program the user has not trusted (docs/configuration.md#trust).
	Untrusted string

	// PostReviewExists: the post-review file of the current iteration exists.
	PostReviewExists bool
	// Reviews are the plan's review and post-review files: a review file
	// of the due iteration on disk without its state update is a crash to
	// recover from, as `taskie continue` would (Continue).
	Reviews ReviewFiles
	// Orphans are the reviews the log shows started and never finished
	// (their hook died): a file such a reviewer left is never adopted.
	// The shell reads them only when a review file of the next iteration
	// is on disk (OrphansMatter).
	Orphans []ReviewAt

	// TaskState is the current task's lifecycle state ("" without a
	// record) and CTOAttempts its CTO attempts so far (TaskLife): a task in
	// cto_intervention gets a CTO review, one in human_escalation no review.
	TaskState   lifecycle.State
	CTOAttempts int

	TaskFileExists bool // task-{current_task}.md exists
	AnyTaskFile    bool // a task file named in tasks.md exists
	PendingOther   bool // a pending task other than the current one remains

	// PlanBudget and TaskBudget are the review budgets spent
	// (ledger.CheckBudgets), for a review of no task and for a code review
	// of the current task; nil: not spent. The shell reads them (a scan of
	// the event log) only when budgets are set and they decide the stop
	// (BudgetMatters).
	PlanBudget, TaskBudget *ledger.BudgetOverrun

	LastReviewBlock *Mark // this session's last review block on this plan
	BlocksInRow     int
	BlockCap        int // 0 = no cap
	Models          []domain.Model
	Autopilot       bool

	Lock LockState
}

// StopAction says what the hook does.
type StopAction int

// Stop actions.
const (
	// Allow lets the agent stop (with a message when Reason says so).
	Allow StopAction = iota
	// Block keeps the agent working: a validation or reminder block.
	Block
	// RunReview runs the reviewer; AfterReview decides what follows.
	RunReview
	// TakeLock asks the hook to take the review lock and decide again.
	TakeLock
	// RunCTO runs the CTO review of a task in cto_intervention
	// (docs/lifecycle.md, "The CTO"); AfterCTO decides what follows.
	RunCTO
)

// Reason codes: why the hook decided what it did. Messages are rendered
// from them in one place (the hook's messages).
type Reason string

// Reasons.
const (
	RPaused          Reason = "paused"
	RInvalid         Reason = "validation-failed"
	RInvalidSeen     Reason = "validation-already-reported"
	RNoState         Reason = "no-state"
	RStateUnreadable Reason = "state-unreadable"
	RUntrusted       Reason = "config-untrusted"
	RReviewRunning   Reason = "review-running"
	RRecoveredBlock  Reason = "recovered-review-block"
	RPostOwedRemind  Reason = "post-review-owed-remind"
	RPostOwed        Reason = "post-review-owed"
	RNotReview       Reason = "next-not-review"
	RIllegalNext     Reason = "illegal-next-phase"
	RNoProgress      Reason = "no-progress"
	RBlockCap        Reason = "block-cap"
	RReviewsOff      Reason = "max-reviews-zero"
	RIterationRange  Reason = "iteration-out-of-range"
	RMaxReviews      Reason = "max-reviews-reached"
	RNoTask          Reason = "no-current-task"
	RNoTaskFile      Reason = "task-file-missing"
	RNoTaskFiles     Reason = "no-task-files"
	RReviewDue       Reason = "review-due"
	RLock            Reason = "review-lock-needed"
	RNeedsHuman      Reason = "needs-human"
	RBudget          Reason = "budget-spent"
	RCTOReview       Reason = "cto-review"
	RHumanEscalation Reason = "human-escalation"
)

// StopDecision is the outcome of Decide.
type StopDecision struct {
	Action StopAction
	Reason Reason
	// Save, when non-nil, is a state to commit before acting (post-review
	// auto-detection, a stale cycle reset, crash recovery, reviews off).
	Save       *state.State
	SaveReason string
	// Violations is the fingerprint to remember after a validation block.
	Violations string
	// Mark is the review cycle to remember as this session's last review
	// block (a reminder or a recovered review's block).
	Mark *Mark
	// The review to run, or the one a message is about.
	Review    domain.Phase
	Task      domain.TaskID
	Iteration int
	Model     domain.Model
	// Budget is the budget a review was refused for (RBudget).
	Budget *ledger.BudgetOverrun
	// ToHuman, when set, is the reason to hand the task to a human
	// (human_escalation) before acting: the review cap reached.
	ToHuman string
}

// Decide returns the Stop hook's decision for one plan (docs/hook.md steps 1,
// 4–10). The shell takes the review lock first when NeedsLock says so;
// without it (Lock unknown) Decide asks for it (TakeLock).
func Decide(f StopFacts) StopDecision {
	if d, done := beforeLock(f); done {
		return d
	}
	s := f.State
	n := s.Next()
	// One review per plan at a time: another stop must not review, recover
	// or write the same files concurrently.
	switch f.Lock {
	case LockUnknown:
		return StopDecision{Action: TakeLock, Reason: RLock}
	case LockBusy:
		return StopDecision{Reason: RReviewRunning, Review: n}
	}
	var save *state.State
	why := ""
	if recorded := postRecorded(f); recorded != nil {
		// The agent wrote the post-review without recording it.
		save, s, why = recorded, recorded, "post-review file found: recorded"
	}
	if StaleCycle(s) {
		save = s.Clone()
		ResetCycle(save, f.Models)
		s, why = save, "review due with another cycle's counters: fresh cycle"
	} else if d, done := recoverAhead(f, s); done {
		return d
	} else if d.Save != nil {
		save, s, why = d.Save, d.Save, d.SaveReason
	}
	d := decide(f, s)
	if d.Save == nil && save != nil {
		d.Save, d.SaveReason = save, why
	}
	return d
}

// NeedsLock reports whether the decision on these facts needs the plan's
// review lock: the shell takes it before deciding, so that Decide runs once.
func NeedsLock(f StopFacts) bool {
	_, done := beforeLock(f)
	return !done
}

// beforeLock decides the stops that need no review lock: paused, invalid,
// no state, no review cycle, with a human, untrusted.
func beforeLock(f StopFacts) (StopDecision, bool) {
	s := f.State
	if s != nil && !s.IsEnabled() {
		return StopDecision{Reason: RPaused}, true
	}
	if len(f.Violations) > 0 {
		fp := joinLines(f.Violations)
		if f.Active && f.Seen == fp {
			return StopDecision{Reason: RInvalidSeen, Violations: fp}, true
		}
		return StopDecision{Action: Block, Reason: RInvalid, Violations: fp}, true
	}
	switch f.StateProblem {
	case StateMissing:
		return StopDecision{Reason: RNoState}, true
	case StateUnreadable:
		return StopDecision{Reason: RStateUnreadable}, true
	}
	n := s.Next()
	if !domain.IsReview(n) && !domain.IsPostReview(n) {
		return StopDecision{Reason: RNotReview, Review: n}, true
	}
	if f.TaskState == lifecycle.HumanEscalation && s.Task() > 0 && inCodeCycle(n) {
		// The task is with a human (docs/lifecycle.md, "The CTO"): no
		// review, no reminder, until `taskie task resolve`.
		return StopDecision{Reason: RHumanEscalation, Review: domain.CodeReview, Task: s.Task(), Iteration: s.Iteration()}, true
	}
	if s.NeedsHuman {
		// The review ledger found the cycle going round (docs/ledger.md): no
		// review, no reminder, until a human decides (taskie resume).
		review := n
		if !domain.IsReview(n) {
			review = domain.ReviewOf(n)
		}
		return StopDecision{Reason: RNeedsHuman, Review: review, Task: s.Task(), Iteration: s.Iteration()}, true
	}
	if f.Untrusted != "" && domain.IsReview(n) {
		return StopDecision{Reason: RUntrusted}, true
	}
	return StopDecision{}, false
}

// postRecorded is the state with the post-review the agent wrote recorded,
// when it wrote it without recording it; nil otherwise.
func postRecorded(f StopFacts) *state.State {
	s := f.State
	review := s.Phase
	if !domain.IsReview(review) || s.Next() != domain.PostReview(review) || !f.PostReviewExists {
		return nil
	}
	n := s.Clone()
	n.Phase, n.NextPhase = domain.PostReview(review), state.Opt(review)
	return n
}

// BudgetMatters reports whether the budgets spent decide this stop: the
// decision on these facts, with every budget spent, refuses a review for
// it. Only then does the shell read them (a scan of the event log).
func BudgetMatters(f StopFacts) bool {
	spent := &ledger.BudgetOverrun{}
	f.PlanBudget, f.TaskBudget, f.Lock = spent, spent, LockHeld
	return Decide(f).Reason == RBudget
}

// OrphansMatter reports whether a review file of the next iteration is on
// disk: only then does the shell read which reviews were orphaned.
func OrphansMatter(f StopFacts) bool { return reviewAhead(f.State, f.Reviews) }

// reviewAhead reports whether a review file of the iteration after s's is
// on disk, for the review due or the one s is in.
func reviewAhead(s *state.State, reviews ReviewFiles) bool {
	if s == nil || s.Iteration() < 0 || s.Iteration() == math.MaxInt {
		return false
	}
	for _, r := range []domain.Phase{s.Next(), s.Phase} {
		if domain.IsReview(r) && reviews.Review(r, s.Task(), s.Iteration()+1) {
			return true
		}
	}
	return false
}

// recoverAhead handles a review file of the due iteration that is on disk
// without its state update: a hook killed after its reviewer wrote it.
// A file whose reviewer never finished is not a review: the hook moves it
// to the log and reviews again. Otherwise it does what `taskie continue`
// does. done means the decision is final.
func recoverAhead(f StopFacts, s *state.State) (StopDecision, bool) {
	review := s.Next()
	n := s.Iteration() + 1
	if !domain.IsReview(review) || !Legal(s.Phase, review) || !IterationInRange(s) || s.Iteration() >= s.MaxReviews || !f.Reviews.Review(review, s.Task(), n) {
		return StopDecision{}, false
	}
	if f.orphaned(review, s.Task(), n) {
		return StopDecision{}, false // the shell sets the orphan aside before the review runs
	}
	route := Continue(RouteFacts{State: s, Reviews: f.Reviews, Orphans: f.Orphans}, f.Models)
	if route.Repair == nil {
		return StopDecision{}, false
	}
	if route.Repair.Next() != domain.PostReview(review) {
		// Post-review also done: go on to the next review.
		return StopDecision{Save: route.Repair, SaveReason: "recovered: " + route.Why}, false
	}
	m := MarkOf(route.Repair)
	return StopDecision{Action: Block, Reason: RRecoveredBlock, Save: route.Repair, SaveReason: "recovered: " + route.Why,
		Mark: &m, Review: review, Task: s.Task(), Iteration: route.Repair.Iteration(), Model: s.ReviewModel}, true
}

// orphaned reports that iteration n of a review was started and never
// finished (Orphans).
func (f StopFacts) orphaned(review domain.Phase, task domain.TaskID, n int) bool {
	return slices.Contains(f.Orphans, ReviewAt{Review: review, Task: task, N: n})
}

// StaleCycle reports a review due with another cycle's counters: next_phase
// set by hand to a review after a different review or after completion
// (e.g. all-code-review on a complete plan). Such a review starts a fresh
// cycle. Implementation phases belong to their task's code-review cycle
// (`taskie done continue-task` mid-cycle keeps it).
func StaleCycle(s *state.State) bool {
	r, p := s.Next(), s.Phase
	if !domain.IsReview(r) || p == r || p == domain.PostReview(r) || (s.Iteration() == 0 && s.ConsecutiveClean == 0) {
		return false
	}
	return domain.IsReview(p) || domain.IsPostReview(p) || p == domain.Complete
}

// decide is the decision once the review lock is held and the state is
// as recorded: each step either answers or hands on to the next.
func decide(f StopFacts, s *state.State) StopDecision {
	for _, step := range []func(StopFacts, *state.State) (StopDecision, bool){notDue, reviewsCapped, reviewMissing} {
		if d, done := step(f, s); done {
			return d
		}
	}
	return runReview(f, s)
}

// notDue answers a stop at which no review is due: an illegal iteration,
// a post-review owed, no progress since the last block, the block cap.
func notDue(f StopFacts, s *state.State) (StopDecision, bool) {
	review := s.Next()
	if (domain.IsReview(review) || domain.IsPostReview(review)) && s.MaxReviews != 0 && !IterationInRange(s) {
		// Illegal: no file number (review or post-review) may come from it.
		// (With reviews off no number is used: the review is skipped.)
		r := review
		if !domain.IsReview(r) {
			r = domain.ReviewOf(r)
		}
		return StopDecision{Reason: RIterationRange, Review: r, Iteration: s.Iteration()}, true
	}
	if r := domain.ReviewOf(review); r != "" && r == s.Phase {
		// Re-sent only at the first stop of a turn: within a chain of
		// blocks (or if the session memory cannot be kept) it must not loop.
		if !f.Active && (f.LastReviewBlock == nil || *f.LastReviewBlock != MarkOf(s)) {
			m := MarkOf(s)
			return StopDecision{Action: Block, Reason: RPostOwedRemind, Mark: &m, Review: r, Task: s.Task(), Iteration: s.Iteration()}, true
		}
		return StopDecision{Reason: RPostOwed, Review: review, Iteration: s.Iteration()}, true
	}
	switch {
	case !domain.IsReview(review):
		return StopDecision{Reason: RNotReview, Review: review}, true
	case !Legal(s.Phase, review):
		return StopDecision{Reason: RIllegalNext, Review: review}, true
	case f.Active && f.LastReviewBlock != nil && *f.LastReviewBlock == MarkOf(s):
		return StopDecision{Reason: RNoProgress, Review: s.Phase}, true
	case f.BlockCap > 0 && f.BlocksInRow >= f.BlockCap:
		return StopDecision{Reason: RBlockCap}, true
	}
	return StopDecision{}, false
}

// reviewsCapped answers a review due with reviews off (skipped) or past
// max_reviews.
func reviewsCapped(f StopFacts, s *state.State) (StopDecision, bool) {
	review := s.Next()
	if s.MaxReviews == 0 {
		n := s.Clone()
		n.Phase, n.NextPhase, n.PhaseIteration = review, state.Opt(AdvanceTarget(review, s.TDD, f.PendingOther)), state.Int(0)
		if n.Next() == domain.AllCodeReview {
			n.Phase = domain.CodeReview
			ResetCycle(n, f.Models)
		}
		return StopDecision{Save: n, SaveReason: "max_reviews is 0: " + string(review) + " skipped", Reason: RReviewsOff, Review: review}, true
	}
	if s.Iteration()+1 > s.MaxReviews {
		d := StopDecision{Reason: RMaxReviews, Review: review, Iteration: s.MaxReviews}
		if review == domain.CodeReview && s.Task() > 0 {
			// The cap ends the task's cycle without a pass: a human decides.
			d.Task, d.ToHuman = s.Task(), "max_reviews reached"
		}
		return d, true
	}
	return StopDecision{}, false
}

// reviewMissing answers a review that lacks what it reviews (its task, a
// task file) or its budget.
func reviewMissing(f StopFacts, s *state.State) (StopDecision, bool) {
	review := s.Next()
	switch {
	case review == domain.CodeReview && s.Task() == 0:
		return StopDecision{Reason: RNoTask, Review: review}, true
	case review == domain.CodeReview && !f.TaskFileExists:
		return StopDecision{Reason: RNoTaskFile, Review: review, Task: s.Task()}, true
	case (review == domain.TasksReview || review == domain.AllCodeReview) && !f.AnyTaskFile:
		return StopDecision{Reason: RNoTaskFiles, Review: review}, true
	}
	b := f.PlanBudget
	if review == domain.CodeReview {
		b = f.TaskBudget
	}
	if b != nil {
		return StopDecision{Reason: RBudget, Review: review, Task: s.Task(), Iteration: s.Iteration() + 1, Budget: b}, true
	}
	return StopDecision{}, false
}

// runReview runs the review due: the CTO's for a task in cto_intervention
// (a human's once its attempts are used up), else the rotation's next.
func runReview(f StopFacts, s *state.State) StopDecision {
	review := s.Next()
	if review == domain.CodeReview && f.TaskState == lifecycle.CTOIntervention {
		if f.CTOAttempts >= lifecycle.MaxCTOAttempts {
			return StopDecision{Reason: RHumanEscalation, Review: review, Task: s.Task(), Iteration: s.Iteration(),
				ToHuman: "CTO attempts used up"}
		}
		// The strongest model of the rotation reviews the whole cycle.
		return StopDecision{Action: RunCTO, Reason: RCTOReview, Review: review, Task: s.Task(), Iteration: f.CTOAttempts + 1, Model: FirstModel(f.Models)}
	}
	model := s.ReviewModel
	if model == "" {
		model = FirstModel(f.Models)
	}
	return StopDecision{Action: RunReview, Reason: RReviewDue, Review: review, Task: s.Task(), Iteration: s.Iteration() + 1, Model: model}
}

func joinLines(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += "\n"
		}
		out += x
	}
	return out
}

// AdvanceTarget returns next_phase when a review cycle passes (docs/state-machine.md).
func AdvanceTarget(review domain.Phase, tdd, pendingOther bool) domain.Phase {
	switch review {
	case domain.PlanReview:
		return domain.CreateTasks
	case domain.TasksReview:
		return TaskTarget(tdd)
	case domain.CodeReview:
		if pendingOther {
			return TaskTarget(tdd)
		}
		return domain.AllCodeReview
	case domain.AllCodeReview:
		return domain.Complete
	}
	return ""
}

// Outcome says what a review did to the plan.
type Outcome struct {
	Advanced bool
	Target   domain.Phase // next_phase after an advance
	Clean    int          // consecutive_clean after the review
}

// apply records a finished review that was clean or not.
func apply(s *state.State, d StopDecision, isClean bool, pendingOther bool, models []domain.Model) (*state.State, Outcome) {
	n := s.Clone()
	clean := 0
	if isClean {
		clean = s.ConsecutiveClean + 1
	}
	n.Phase = d.Review
	n.PhaseIteration = state.Int(d.Iteration)
	n.ConsecutiveClean = clean
	n.ReviewModel = NextModel(models, d.Model)
	if clean < domain.CleanToPass {
		n.NextPhase = state.Opt(domain.PostReview(d.Review))
		return n, Outcome{Clean: clean}
	}
	target := AdvanceTarget(d.Review, s.TDD, pendingOther)
	n.NextPhase = state.Opt(target)
	if target == domain.AllCodeReview {
		ResetCycle(n, models)
	}
	return n, Outcome{Advanced: true, Target: target, Clean: clean}
}

// ReviewResult is what the hook does once a review has finished.
type ReviewResult struct {
	// Save is the state to commit.
	Save *state.State
	// Outcome of the cycle.
	Outcome Outcome
	// MarkDone is the task whose cycle passed: tasks.md says done.
	MarkDone domain.TaskID
	// Block: not advancing (the post-review is due), or autopilot at an
	// advance boundary. Otherwise allow with the advance message.
	Block bool
	// Mark is the review cycle to remember as this session's last block.
	Mark *Mark
	// Paused: automation was paused while the reviewer ran; the verdict
	// is recorded but the agent is not blocked.
	Paused bool
	// NeedsHuman: the review ledger found the cycle going round; the state
	// says so (needs_human) and the agent is not blocked: a human decides.
	NeedsHuman bool
	// ToHuman, when set, is the reason to hand the reviewed task to a
	// human (human_escalation): its code-review cycle does not converge.
	ToHuman string
}

// Finished is a finished review as AfterReview judges it.
type Finished struct {
	// Verdict is PASS, FAIL or "" for unreadable.
	Verdict domain.Verdict
	// Ledger is the review ledger's assessment of the review (docs/ledger.md):
	// with it, a review is clean when the ledger says so (verdict PASS and
	// nothing open at or above block_severity, or the severity ratchet).
	// nil: the verdict alone decides.
	Ledger *ledger.Assessment
}

// Clean reports whether the review counts towards the clean reviews that
// end the cycle.
func (f Finished) Clean() bool {
	if f.Ledger != nil {
		return f.Ledger.Clean
	}
	return f.Verdict == domain.Pass
}

// AfterReview decides what a finished review does (docs/hook.md steps 13–14,
// docs/ledger.md). owner, when not "", becomes the plan's session_id.
func AfterReview(s *state.State, d StopDecision, fin Finished, pendingOther bool, models []domain.Model, autopilot bool, owner string) ReviewResult {
	next, out := apply(s, d, fin.Clean(), pendingOther, models)
	if owner != "" {
		next.SessionID = owner
	}
	r := ReviewResult{Save: next, Outcome: out}
	if fin.Ledger != nil && fin.Ledger.NeedsHuman && !out.Advanced {
		next.NeedsHuman, r.NeedsHuman = true, true
		r.Paused = !s.IsEnabled()
		if d.Review == domain.CodeReview && d.Task > 0 {
			r.ToHuman = "the review cycle does not converge"
		}
		return r
	}
	if !s.IsEnabled() {
		r.Paused = true
		if out.Advanced && d.Review == domain.CodeReview {
			r.MarkDone = d.Task
		}
		return r
	}
	if !out.Advanced {
		m := MarkOf(next)
		r.Block, r.Mark = true, &m
		return r
	}
	if d.Review == domain.CodeReview {
		r.MarkDone = d.Task
	}
	r.Block = autopilot
	return r
}

// VerdictStillApplies reports whether a review started on state from can
// be recorded on state cur that changed meanwhile (a harmless `taskie set`):
// the review cycle itself did not move.
func VerdictStillApplies(from, cur *state.State) bool {
	return cur != nil && MarkOf(cur) == MarkOf(from) && cur.Next() == from.Next()
}

// ResetCycle starts a fresh review cycle: a cycle that stopped for a
// human (needs_human) is left behind with its findings.
func ResetCycle(s *state.State, models []domain.Model) {
	s.PhaseIteration = state.Int(0)
	s.ConsecutiveClean = 0
	s.NeedsHuman = false
	s.ReviewModel = FirstModel(models)
}
