package workflow

import (
	"fmt"

	"github.com/taskie-dev/taskie/internal/state"
)

// Mark fingerprints the review cycle at one of the hook's review blocks, so
// that the next stop can tell whether the agent did the post-review since:
// while phase, task and iteration are unchanged, it did not.
type Mark struct {
	Phase, Task string
	Iteration   int
}

// MarkOf returns the fingerprint of a state.
func MarkOf(s *state.State) Mark {
	return Mark{Phase: s.Phase, Task: s.Task(), Iteration: s.Iteration()}
}

// StopFacts is what the Stop hook's decision depends on (SPEC §5 steps 5–10).
// The hook's shell gathers it from the files; Decide does no I/O.
type StopFacts struct {
	State  *state.State
	Active bool // stop_hook_active: this stop follows a block
	// PostReviewExists: the post-review file of the current iteration exists.
	PostReviewExists bool
	// TaskFileExists: task-{current_task}.md exists.
	TaskFileExists bool
	// AnyTaskFile: at least one task file named in tasks.md exists.
	AnyTaskFile bool
	// PendingOther: a pending task other than the current one remains.
	PendingOther bool
	// LastReviewBlock is the review cycle at this session's last review
	// block on this plan; nil when there was none.
	LastReviewBlock *Mark
	BlocksInRow     int // consecutive blocks in this session
	BlockCap        int // 0 = no cap
	Models          []string
}

// StopAction says what the hook does.
type StopAction int

const (
	// Allow lets the agent stop.
	Allow StopAction = iota
	// RunReview runs the reviewer, then Apply decides.
	RunReview
	// Remind blocks again with the block message of the current review:
	// a post-review is owed and this session never received that block
	// (another session's stop, a crash, a repair by `taskie continue`).
	Remind
)

// StopDecision is the outcome of Decide.
type StopDecision struct {
	Action StopAction
	// Save, when non-nil, is a state to write before anything else
	// (post-review auto-detection, reviews disabled).
	Save *state.State
	// Message is the systemMessage shown on allow ("" = none).
	Message string
	// Why is one line for the log.
	Why string
	// The review to run.
	Review, Task string
	Iteration    int
	Model        string
}

// Decide returns the Stop hook's decision for a plan whose files validated.
func Decide(f StopFacts) StopDecision {
	s := f.State
	if !s.IsEnabled() {
		return StopDecision{Why: "automation paused"}
	}
	var save *state.State
	if review := s.Phase; IsReview(review) && s.Next() == PostReview(review) && f.PostReviewExists {
		save = s.Clone()
		save.Phase, save.NextPhase = PostReview(review), state.Str(review)
		s = save
	}
	if StaleCycle(s) {
		save = s.Clone()
		ResetCycle(save, f.Models)
		s = save
	}
	d := decide(f, s)
	if d.Save == nil {
		d.Save = save
	}
	return d
}

// StaleCycle reports a review due with another cycle's counters: next_phase
// set by hand to a review after a different review or after completion
// (e.g. all-code-review on a complete plan). Such a review starts a fresh
// cycle. Implementation phases belong to their task's code-review cycle
// (`taskie done continue-task` mid-cycle keeps it).
func StaleCycle(s *state.State) bool {
	r, p := s.Next(), s.Phase
	if !IsReview(r) || p == r || p == PostReview(r) || (s.Iteration() == 0 && s.ConsecutiveClean == 0) {
		return false
	}
	return IsReview(p) || IsPostReview(p) || p == Complete
}

func decide(f StopFacts, s *state.State) StopDecision {
	review := s.Next()
	if r := ReviewOf(review); r != "" && r == s.Phase {
		// Re-sent only at the first stop of a turn: within a chain of
		// blocks (or if the session memory cannot be kept) it must not loop.
		if !f.Active && (f.LastReviewBlock == nil || *f.LastReviewBlock != MarkOf(s)) {
			return StopDecision{Action: Remind, Review: r, Task: s.Task(), Iteration: s.Iteration(),
				Why: "post-review owed; this session never got its block"}
		}
		return StopDecision{Why: "post-review owed",
			Message: fmt.Sprintf("taskie: the %s of iteration %d is still owed; automation waits for it (`taskie continue` says what to do, `taskie pause` stops automation).", review, s.Iteration())}
	}
	if !IsReview(review) {
		return StopDecision{Why: fmt.Sprintf("next_phase %q is not a review", review), Message: pendingMessage(s)}
	}
	if !Legal(s.Phase, review) {
		return StopDecision{Why: "illegal next_phase",
			Message: fmt.Sprintf("taskie: next_phase %q cannot follow phase %q, so no review ran. Fix state.json with `taskie set next_phase …` (legal after %s: %s) or `taskie pause`.",
				review, s.Phase, s.Phase, quoteList(LegalFrom(s.Phase)))}
	}
	if f.Active && f.LastReviewBlock != nil && *f.LastReviewBlock == MarkOf(s) {
		return StopDecision{Why: "no progress since the last review block",
			Message: fmt.Sprintf("taskie: the %s feedback was not addressed (no post-review recorded since the last block), so no new review ran. Do the %s and record it with `taskie done %s`, or run `taskie pause` to stop automation.",
				s.Phase, PostReview(s.Phase), PostReview(s.Phase))}
	}
	if f.BlockCap > 0 && f.BlocksInRow >= f.BlockCap {
		return StopDecision{Why: "session block cap reached",
			Message: fmt.Sprintf("taskie: %d blocks in a row in this session (cap %d), so no review ran. Stop here; the next stop after a new prompt reviews again (raise \"block_cap\" in .taskie/config.json to allow longer chains).", f.BlocksInRow, f.BlockCap)}
	}
	if s.MaxReviews == 0 {
		n := s.Clone()
		n.Phase, n.NextPhase, n.PhaseIteration = review, state.Str(AdvanceTarget(review, s.TDD, f.PendingOther)), state.Int(0)
		if n.Next() == AllCodeReview {
			n.Phase = CodeReview
			ResetCycle(n, f.Models)
		}
		return StopDecision{Save: n, Why: "max_reviews is 0",
			Message: fmt.Sprintf("taskie: reviews are disabled (max_reviews 0); %s skipped. Run /taskie:continue-plan to go on.", review)}
	}
	iter := s.Iteration() + 1
	if iter > s.MaxReviews {
		return StopDecision{Why: "max_reviews reached",
			Message: fmt.Sprintf("Max review limit (%d) reached for %s. Raise it with `taskie set max_reviews %d`, or move on: `taskie set next_phase %s` skips the rest of this review cycle.",
				s.MaxReviews, review, s.MaxReviews+4, AdvanceTarget(review, s.TDD, f.PendingOther))}
	}
	if msg := precondition(f, s, review); msg != "" {
		return StopDecision{Why: "precondition failed", Message: msg}
	}
	model := s.ReviewModel
	if model == "" {
		model = FirstModel(f.Models)
	}
	return StopDecision{Action: RunReview, Review: review, Task: s.Task(), Iteration: iter, Model: model,
		Why: fmt.Sprintf("%s iteration %d due", review, iter)}
}

func precondition(f StopFacts, s *state.State, review string) string {
	switch review {
	case CodeReview:
		if s.Task() == "" {
			return "taskie: code-review is due but current_task is not set; run `taskie start <task> --auto`."
		}
		if !f.TaskFileExists {
			return fmt.Sprintf("taskie: code-review is due but task-%s.md does not exist; create it or fix current_task.", s.Task())
		}
	case TasksReview, AllCodeReview:
		if !f.AnyTaskFile {
			return fmt.Sprintf("taskie: %s is due but no task file listed in tasks.md exists; write the task-T.md files first.", review)
		}
	}
	return ""
}

// pendingMessage reminds the agent of an action automation is waiting for.
func pendingMessage(s *state.State) string {
	switch n := s.Next(); {
	case IsAdvanceTarget(n), n == CreateTasks:
		return fmt.Sprintf("taskie: %s is next. Run /taskie:continue-plan.", n)
	case n == Complete:
		return "taskie: the plan is complete. Run `taskie continue` to record it."
	}
	return ""
}

// AdvanceTarget returns next_phase when a review cycle passes (SPEC §4).
func AdvanceTarget(review string, tdd, pendingOther bool) string {
	switch review {
	case PlanReview:
		return CreateTasks
	case TasksReview:
		return TaskTarget(tdd)
	case CodeReview:
		if pendingOther {
			return TaskTarget(tdd)
		}
		return AllCodeReview
	case AllCodeReview:
		return Complete
	}
	return ""
}

// Verdicts.
const (
	Pass = "PASS"
	Fail = "FAIL"
)

// CleanToPass is how many consecutive PASS verdicts end a cycle.
const CleanToPass = 2

// Outcome says what a review did to the plan.
type Outcome struct {
	Advanced bool
	Target   string // next_phase after an advance
	Clean    int    // consecutive_clean after the review
}

// Apply records a finished review (verdict PASS, FAIL or "" for unreadable)
// and returns the new state; s is not modified.
func Apply(s *state.State, d StopDecision, verdict string, pendingOther bool, models []string) (*state.State, Outcome) {
	n := s.Clone()
	clean := 0
	if verdict == Pass {
		clean = s.ConsecutiveClean + 1
	}
	n.Phase = d.Review
	n.PhaseIteration = state.Int(d.Iteration)
	n.ConsecutiveClean = clean
	n.ReviewModel = NextModel(models, d.Model)
	if clean < CleanToPass {
		n.NextPhase = state.Str(PostReview(d.Review))
		return n, Outcome{Clean: clean}
	}
	target := AdvanceTarget(d.Review, s.TDD, pendingOther)
	n.NextPhase = state.Str(target)
	if target == AllCodeReview {
		ResetCycle(n, models)
	}
	return n, Outcome{Advanced: true, Target: target, Clean: clean}
}

// ResetCycle starts a fresh review cycle.
func ResetCycle(s *state.State, models []string) {
	s.PhaseIteration = state.Int(0)
	s.ConsecutiveClean = 0
	s.ReviewModel = FirstModel(models)
}
