package workflow

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
)

func TestAdvanceTargetEveryCase(t *testing.T) {
	tests := []struct {
		review       domain.Phase
		tdd, pending bool
		want         domain.Phase
	}{
		{domain.PlanReview, false, false, domain.CreateTasks},
		{domain.PlanReview, false, true, domain.CreateTasks},
		{domain.PlanReview, true, false, domain.CreateTasks},
		{domain.PlanReview, true, true, domain.CreateTasks},
		{domain.TasksReview, false, false, domain.CompleteTask},
		{domain.TasksReview, false, true, domain.CompleteTask},
		{domain.TasksReview, true, false, domain.CompleteTaskTDD},
		{domain.TasksReview, true, true, domain.CompleteTaskTDD},
		{domain.CodeReview, false, false, domain.AllCodeReview},
		{domain.CodeReview, false, true, domain.CompleteTask},
		{domain.CodeReview, true, false, domain.AllCodeReview},
		{domain.CodeReview, true, true, domain.CompleteTaskTDD},
		{domain.AllCodeReview, false, false, domain.Complete},
		{domain.AllCodeReview, false, true, domain.Complete},
		{domain.AllCodeReview, true, false, domain.Complete},
		{domain.AllCodeReview, true, true, domain.Complete},
		{domain.PostCodeReview, false, true, ""},
		{domain.NextTask, false, true, ""},
		{"", false, false, ""},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s/tdd=%v/pending=%v", tc.review, tc.tdd, tc.pending)
		t.Run(name, func(t *testing.T) {
			if got := AdvanceTarget(tc.review, tc.tdd, tc.pending); got != tc.want {
				t.Errorf("AdvanceTarget = %q, want %q", got, tc.want)
			}
		})
	}
}

// One code-review cycle driven the way the hook drives it: Decide, run,
// AfterReview, and the agent's post-review recorded with Record, with
// stop_hook_active set after every block.
func TestCodeReviewCycleFailPassFailPassPass(t *testing.T) {
	s0 := mkState(domain.CreateTasks, "", 0, -1, "sonnet", 1)
	s, err := Start(s0, 1, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := []domain.Verdict{domain.Fail, domain.Pass, domain.Fail, domain.Pass, domain.Pass}
	wantModels := []domain.Model{"opus", "sonnet", "opus", "sonnet", "opus"}
	wantClean := []int{0, 1, 0, 1, 2}
	var models []domain.Model
	var last *Mark
	for i, v := range verdicts {
		iter := i + 1
		f := StopFacts{State: s, Active: last != nil, LastReviewBlock: last,
			TaskFileExists: true, AnyTaskFile: true, PendingOther: true, BlocksInRow: i, BlockCap: 40}
		// The first decision asks for the review lock; the hook takes it
		// and asks again.
		if d := Decide(f); d.Action != TakeLock || d.Reason != RLock || d.Save != nil {
			t.Fatalf("review %d: Decide without the lock = %+v, want TakeLock and nothing saved", iter, d)
		}
		f.Lock = LockHeld
		d := Decide(f)
		if d.Action != RunReview || d.Reason != RReviewDue || d.Save != nil {
			t.Fatalf("review %d: Decide = %+v, want a review run and nothing saved", iter, d)
		}
		if d.Review != domain.CodeReview || d.Task != 1 || d.Iteration != iter {
			t.Fatalf("review %d: Decide = %s task %s iteration %d", iter, d.Review, d.Task, d.Iteration)
		}
		models = append(models, d.Model)
		var n *state.State
		var out Outcome
		unchanged(t, s, func() { n, out = Apply(s, d, v, true, nil) })
		var rr ReviewResult
		unchanged(t, s, func() { rr = AfterReview(s, d, Finished{Verdict: v}, true, nil, false, "") })
		diffState(t, fmt.Sprintf("review %d: AfterReview saves what Apply computes", iter), n, rr.Save)
		if diff := cmp.Diff(out, rr.Outcome); diff != "" {
			t.Errorf("review %d: AfterReview outcome (-Apply +AfterReview):\n%s", iter, diff)
		}
		if n.Phase != domain.CodeReview || n.Iteration() != iter || n.ConsecutiveClean != wantClean[i] || out.Clean != wantClean[i] {
			t.Errorf("review %d (%s): phase %s iteration %d clean %d (outcome %d), want code-review %d clean %d",
				iter, v, n.Phase, n.Iteration(), n.ConsecutiveClean, out.Clean, iter, wantClean[i])
		}
		if iter < len(verdicts) {
			if out.Advanced || n.Next() != domain.PostCodeReview {
				t.Fatalf("review %d advanced (%+v) or next_phase %q is not post-code-review", iter, out, n.Next())
			}
			// The hook blocks here and remembers the state it blocked on.
			if !rr.Block || rr.Mark == nil || *rr.Mark != MarkOf(n) || rr.MarkDone != 0 {
				t.Fatalf("review %d: AfterReview = %+v, want a block remembering %+v", iter, rr, MarkOf(n))
			}
			last = rr.Mark
			// A stop without the post-review does not run another review.
			again := Decide(StopFacts{State: with(n, func(x *state.State) { x.NextPhase = state.Opt(domain.CodeReview) }),
				Active: true, LastReviewBlock: last, TaskFileExists: true, PendingOther: true, Lock: LockHeld})
			if again.Action != Allow || again.Reason != RNoProgress {
				t.Errorf("review %d: a stop without progress = %+v, want allow (no progress)", iter, again)
			}
			// Nor does a stop that still owes the post-review.
			owed := Decide(StopFacts{State: n, Active: true, LastReviewBlock: last, TaskFileExists: true, PendingOther: true, Lock: LockHeld})
			if owed.Action != Allow || owed.Reason != RPostOwed {
				t.Errorf("review %d: a stop owing the post-review = %+v, want allow (post-review owed)", iter, owed)
			}
			s, err = Record(n, domain.PostCodeReview, false, nil)
			if err != nil {
				t.Fatalf("review %d: recording the post-review: %v", iter, err)
			}
			if s.Phase != domain.PostCodeReview || s.Next() != domain.CodeReview || s.Iteration() != iter {
				t.Fatalf("review %d: after the post-review phase %s next %s iteration %d", iter, s.Phase, s.Next(), s.Iteration())
			}
			continue
		}
		want := Outcome{Advanced: true, Target: domain.CompleteTask, Clean: 2}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("outcome of the 5th review (-want +got):\n%s", diff)
		}
		if n.Next() != domain.CompleteTask {
			t.Errorf("next_phase after the 5th review = %q, want complete-task", n.Next())
		}
		if rr.Block || rr.Mark != nil || rr.MarkDone != 1 {
			t.Errorf("the passing review: AfterReview = %+v, want allow and task 1 marked done", rr)
		}
		// The next stop has nothing to review.
		if d := Decide(okFacts(n)); d.Action != Allow || d.Reason != RNotReview || d.Review != domain.CompleteTask {
			t.Errorf("after the cycle: Decide = %+v, want allow (complete-task is next)", d)
		}
	}
	if diff := cmp.Diff(wantModels, models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		s       *state.State
		d       StopDecision
		verdict domain.Verdict
		pending bool
		models  []domain.Model
		want    *state.State
		out     Outcome
	}{
		{
			name: "last task passes: all-code-review with a fresh cycle",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 4, 3, "sonnet", 1),
			d:    StopDecision{Action: RunReview, Review: domain.CodeReview, Task: 4, Iteration: 4, Model: "sonnet"},
			// no pending task other than 4
			verdict: domain.Pass,
			want:    mkState(domain.CodeReview, domain.AllCodeReview, 4, 0, "opus", 0),
			out:     Outcome{Advanced: true, Target: domain.AllCodeReview, Clean: 2},
		},
		{
			name:    "last task passes with a custom rotation: fresh cycle starts at its first model",
			s:       mkState(domain.PostCodeReview, domain.CodeReview, 4, 1, "m2", 1),
			d:       StopDecision{Action: RunReview, Review: domain.CodeReview, Task: 4, Iteration: 2, Model: "m2"},
			verdict: domain.Pass,
			models:  []domain.Model{"m1", "m2", "m3"},
			want:    mkState(domain.CodeReview, domain.AllCodeReview, 4, 0, "m1", 0),
			out:     Outcome{Advanced: true, Target: domain.AllCodeReview, Clean: 2},
		},
		{
			name:    "all-code-review passes: complete",
			s:       mkState(domain.PostAllCodeReview, domain.AllCodeReview, 4, 2, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: domain.AllCodeReview, Task: 4, Iteration: 3, Model: "sonnet"},
			verdict: domain.Pass,
			want:    mkState(domain.AllCodeReview, domain.Complete, 4, 3, "opus", 2),
			out:     Outcome{Advanced: true, Target: domain.Complete, Clean: 2},
		},
		{
			name:    "plan-review passes: create-tasks",
			s:       mkState(domain.PostPlanReview, domain.PlanReview, 0, 1, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: domain.PlanReview, Iteration: 2, Model: "sonnet"},
			verdict: domain.Pass,
			want:    mkState(domain.PlanReview, domain.CreateTasks, 0, 2, "opus", 2),
			out:     Outcome{Advanced: true, Target: domain.CreateTasks, Clean: 2},
		},
		{
			name:    "tasks-review passes on a tdd plan: complete-task-tdd",
			s:       with(mkState(domain.PostTasksReview, domain.TasksReview, 0, 1, "sonnet", 1), func(s *state.State) { s.TDD = true }),
			d:       StopDecision{Action: RunReview, Review: domain.TasksReview, Iteration: 2, Model: "sonnet"},
			verdict: domain.Pass,
			pending: true,
			want:    with(mkState(domain.TasksReview, domain.CompleteTaskTDD, 0, 2, "opus", 2), func(s *state.State) { s.TDD = true }),
			out:     Outcome{Advanced: true, Target: domain.CompleteTaskTDD, Clean: 2},
		},
		{
			name:    "tasks-review passes: complete-task",
			s:       mkState(domain.PostTasksReview, domain.TasksReview, 0, 1, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: domain.TasksReview, Iteration: 2, Model: "sonnet"},
			verdict: domain.Pass,
			want:    mkState(domain.TasksReview, domain.CompleteTask, 0, 2, "opus", 2),
			out:     Outcome{Advanced: true, Target: domain.CompleteTask, Clean: 2},
		},
		{
			name:    "first PASS: one more clean review needed",
			s:       mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0),
			d:       StopDecision{Action: RunReview, Review: domain.PlanReview, Iteration: 1, Model: "opus"},
			verdict: domain.Pass,
			want:    mkState(domain.PlanReview, domain.PostPlanReview, 0, 1, "sonnet", 1),
			out:     Outcome{Clean: 1},
		},
		{
			name:    "unreadable verdict counts as FAIL",
			s:       mkState(domain.PostTasksReview, domain.TasksReview, 0, 1, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: domain.TasksReview, Iteration: 2, Model: "sonnet"},
			verdict: "",
			want:    mkState(domain.TasksReview, domain.PostTasksReview, 0, 2, "opus", 0),
			out:     Outcome{Clean: 0},
		},
		{
			name:    "FAIL after a PASS resets consecutive_clean",
			s:       mkState(domain.PostAllCodeReview, domain.AllCodeReview, 2, 5, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: domain.AllCodeReview, Iteration: 6, Model: "sonnet"},
			verdict: domain.Fail,
			want:    mkState(domain.AllCodeReview, domain.PostAllCodeReview, 2, 6, "opus", 0),
			out:     Outcome{Clean: 0},
		},
		{
			name:    "unknown fields survive",
			s:       with(mkState(domain.NextTask, domain.CodeReview, 1, 0, "opus", 0), func(s *state.State) { s.Extra["x"] = []byte(`{"a":1}`) }),
			d:       StopDecision{Action: RunReview, Review: domain.CodeReview, Task: 1, Iteration: 1, Model: "opus"},
			verdict: domain.Fail,
			pending: true,
			want:    with(mkState(domain.CodeReview, domain.PostCodeReview, 1, 1, "sonnet", 0), func(s *state.State) { s.Extra["x"] = []byte(`{"a":1}`) }),
			out:     Outcome{Clean: 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *state.State
			var out Outcome
			unchanged(t, tc.s, func() { got, out = Apply(tc.s, tc.d, tc.verdict, tc.pending, tc.models) })
			diffState(t, "state", tc.want, got)
			if diff := cmp.Diff(tc.out, out); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if !Legal(tc.s.Phase, got.Phase) {
				t.Errorf("Apply moved %s -> %s, which the table does not allow", tc.s.Phase, got.Phase)
			}
		})
	}
}

// decisionOpts compares decisions by what they do: SaveReason is a log
// line, checked only for being there whenever something is saved.
var decisionOpts = cmp.Options{stateOpts, cmpopts.IgnoreFields(StopDecision{}, "SaveReason")}

// checkDecision compares a decision with the wanted one.
func checkDecision(t *testing.T, want, got StopDecision) {
	t.Helper()
	if diff := cmp.Diff(want, got, decisionOpts); diff != "" {
		t.Errorf("Decide (-want +got):\n%s", diff)
	}
	if (got.Save != nil) != (got.SaveReason != "") {
		t.Errorf("Save %v with SaveReason %q: a saved state needs a reason for the log, and only then", got.Save != nil, got.SaveReason)
	}
}

func paused(s *state.State) *state.State {
	return with(s, func(s *state.State) { f := false; s.Enabled = &f })
}

func human(s *state.State) *state.State {
	return with(s, func(s *state.State) { s.NeedsHuman = true })
}

func iteration(s *state.State, it int) *state.State {
	return with(s, func(s *state.State) { s.PhaseIteration = state.Int(it) })
}

func TestDecide(t *testing.T) {
	postDone := mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1)
	owed := mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "sonnet", 0)
	violations := []string{"plan.md: plan.md is missing (rule 1)", "tasks.md:3: unknown status \"later\" (rule 5)"}
	fp := violations[0] + "\n" + violations[1]
	due3 := StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"}
	tests := []struct {
		name string
		f    StopFacts
		want StopDecision
	}{
		{
			name: "paused",
			f:    okFacts(paused(postDone)),
			want: StopDecision{Reason: RPaused},
		},
		{
			name: "paused beats a done post-review",
			f:    factsWith(paused(mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "opus", 0)), func(f *StopFacts) { f.PostReviewExists = true }),
			want: StopDecision{Reason: RPaused},
		},
		{
			name: "paused beats validation errors",
			f:    factsWith(paused(postDone), func(f *StopFacts) { f.Violations = violations }),
			want: StopDecision{Reason: RPaused},
		},
		{
			name: "validation errors block, every violation in the fingerprint",
			f:    factsWith(postDone, func(f *StopFacts) { f.Violations = violations }),
			want: StopDecision{Action: Block, Reason: RInvalid, Violations: fp},
		},
		{
			name: "one validation error",
			f:    factsWith(postDone, func(f *StopFacts) { f.Violations = violations[:1] }),
			want: StopDecision{Action: Block, Reason: RInvalid, Violations: violations[0]},
		},
		{
			name: "same violations already reported, stop_hook_active: allow",
			f:    factsWith(postDone, func(f *StopFacts) { f.Violations, f.Seen, f.Active = violations, fp, true }),
			want: StopDecision{Reason: RInvalidSeen, Violations: fp},
		},
		{
			name: "same violations already reported, new turn: block again",
			f:    factsWith(postDone, func(f *StopFacts) { f.Violations, f.Seen = violations, fp }),
			want: StopDecision{Action: Block, Reason: RInvalid, Violations: fp},
		},
		{
			name: "other violations than reported, stop_hook_active: block",
			f:    factsWith(postDone, func(f *StopFacts) { f.Violations, f.Seen, f.Active = violations, violations[0], true }),
			want: StopDecision{Action: Block, Reason: RInvalid, Violations: fp},
		},
		{
			name: "validation errors beat an unreadable state.json",
			f: StopFacts{StateProblem: StateUnreadable, Violations: violations[1:], Lock: LockHeld,
				TaskFileExists: true, AnyTaskFile: true},
			want: StopDecision{Action: Block, Reason: RInvalid, Violations: violations[1]},
		},
		{
			name: "validation errors are reported before the review lock is taken",
			f:    factsWith(postDone, func(f *StopFacts) { f.Violations, f.Lock = violations, LockUnknown }),
			want: StopDecision{Action: Block, Reason: RInvalid, Violations: fp},
		},
		{
			name: "state.json missing",
			f:    StopFacts{StateProblem: StateMissing, Lock: LockUnknown},
			want: StopDecision{Reason: RNoState},
		},
		{
			name: "state.json unreadable",
			f:    StopFacts{StateProblem: StateUnreadable, Lock: LockUnknown},
			want: StopDecision{Reason: RStateUnreadable},
		},
		{
			name: "untrusted config: no review",
			f:    factsWith(postDone, func(f *StopFacts) { f.Untrusted = "the repository's .taskie/config.json is not trusted" }),
			want: StopDecision{Reason: RUntrusted},
		},
		{
			name: "untrusted config: no review, no lock, nothing saved",
			f: factsWith(mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.Untrusted, f.PostReviewExists, f.Lock = "untrusted", true, LockUnknown
			}),
			want: StopDecision{Action: TakeLock, Reason: RLock},
		},
		{
			name: "untrusted config, nothing due: untrust does not matter",
			f:    factsWith(mkState(domain.CodeReview, domain.CompleteTask, 3, 4, "opus", 2), func(f *StopFacts) { f.Untrusted = "untrusted" }),
			want: StopDecision{Reason: RNotReview, Review: domain.CompleteTask},
		},
		{
			name: "review lock not taken yet: take it",
			f:    factsWith(postDone, func(f *StopFacts) { f.Lock = LockUnknown }),
			want: StopDecision{Action: TakeLock, Reason: RLock},
		},
		{
			name: "review lock not taken yet: nothing is saved before it is",
			f: factsWith(mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.PostReviewExists, f.Lock = true, LockUnknown
			}),
			want: StopDecision{Action: TakeLock, Reason: RLock},
		},
		{
			name: "nothing due: no lock needed",
			f:    factsWith(mkState(domain.NextTask, "", 3, 0, "opus", 0), func(f *StopFacts) { f.Lock = LockUnknown }),
			want: StopDecision{Reason: RNotReview},
		},
		{
			name: "another stop holds the review lock",
			f:    factsWith(postDone, func(f *StopFacts) { f.Lock = LockBusy }),
			want: StopDecision{Reason: RReviewRunning, Review: domain.CodeReview},
		},
		{
			name: "another stop holds the review lock: a done post-review is not recorded",
			f: factsWith(mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.PostReviewExists, f.Lock = true, LockBusy
			}),
			want: StopDecision{Reason: RReviewRunning, Review: domain.PostCodeReview},
		},
		{
			name: "another stop holds the review lock: a review file ahead is not adopted",
			f: factsWith(postDone, func(f *StopFacts) {
				f.Lock, f.Reviews = LockBusy, reviewsOf("task-3-review-3.md")
			}),
			want: StopDecision{Reason: RReviewRunning, Review: domain.CodeReview},
		},
		{
			name: "next_phase null",
			f:    okFacts(mkState(domain.NextTask, "", 3, 0, "opus", 0)),
			want: StopDecision{Reason: RNotReview},
		},
		{
			name: "post-review owed, this session got the block: allow with a reminder",
			f:    factsWith(owed, func(f *StopFacts) { f.LastReviewBlock = &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2} }),
			want: StopDecision{Reason: RPostOwed, Review: domain.PostCodeReview, Iteration: 2},
		},
		{
			name: "post-review owed, this session never got the block: block again",
			f:    okFacts(owed),
			want: StopDecision{Action: Block, Reason: RPostOwedRemind, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2},
				Review: domain.CodeReview, Task: 3, Iteration: 2},
		},
		{
			name: "post-review owed, another cycle's block remembered: block again",
			f:    factsWith(owed, func(f *StopFacts) { f.LastReviewBlock = &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 1} }),
			want: StopDecision{Action: Block, Reason: RPostOwedRemind, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2},
				Review: domain.CodeReview, Task: 3, Iteration: 2},
		},
		{
			name: "post-review owed within a chain of blocks: never a reminder loop",
			f:    factsWith(owed, func(f *StopFacts) { f.Active = true }),
			want: StopDecision{Reason: RPostOwed, Review: domain.PostCodeReview, Iteration: 2},
		},
		{
			name: "review set by hand outside its cycle: fresh counters",
			f:    okFacts(mkState(domain.Complete, domain.AllCodeReview, 3, 2, "sonnet", 2)),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.AllCodeReview, Task: 3, Iteration: 1, Model: "opus",
				Save: mkState(domain.Complete, domain.AllCodeReview, 3, 0, "opus", 0)},
		},
		{
			name: "illegal next_phase: no review, nothing saved",
			f:    okFacts(mkState(domain.NewPlan, domain.CodeReview, 3, 0, "opus", 0)),
			want: StopDecision{Reason: RIllegalNext, Review: domain.CodeReview},
		},
		{
			name: "advance target pending",
			f:    okFacts(mkState(domain.CodeReview, domain.CompleteTask, 3, 4, "opus", 2)),
			want: StopDecision{Reason: RNotReview, Review: domain.CompleteTask},
		},
		{
			name: "tdd advance target pending",
			f:    okFacts(mkState(domain.TasksReview, domain.CompleteTaskTDD, 0, 2, "opus", 2)),
			want: StopDecision{Reason: RNotReview, Review: domain.CompleteTaskTDD},
		},
		{
			name: "create-tasks pending",
			f:    okFacts(mkState(domain.PlanReview, domain.CreateTasks, 0, 2, "opus", 2)),
			want: StopDecision{Reason: RNotReview, Review: domain.CreateTasks},
		},
		{
			name: "complete pending",
			f:    okFacts(mkState(domain.AllCodeReview, domain.Complete, 3, 2, "opus", 2)),
			want: StopDecision{Reason: RNotReview, Review: domain.Complete},
		},
		{
			name: "no progress since the last review block while stop_hook_active",
			f: factsWith(mkState(domain.CodeReview, domain.CodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.Active, f.LastReviewBlock = true, &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2}
			}),
			want: StopDecision{Reason: RNoProgress, Review: domain.CodeReview},
		},
		{
			name: "same mark but stop_hook_active false: review runs",
			f: factsWith(mkState(domain.CodeReview, domain.CodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.LastReviewBlock = &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2}
			}),
			want: due3,
		},
		{
			name: "stop_hook_active after progress: review runs",
			f: factsWith(postDone, func(f *StopFacts) {
				f.Active, f.LastReviewBlock = true, &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2}
			}),
			want: due3,
		},
		{
			name: "stop_hook_active after a non-review block: review runs",
			f:    factsWith(postDone, func(f *StopFacts) { f.Active = true }),
			want: due3,
		},
		{
			name: "block cap reached",
			f:    factsWith(postDone, func(f *StopFacts) { f.Active, f.BlocksInRow, f.BlockCap = true, 40, 40 }),
			want: StopDecision{Reason: RBlockCap},
		},
		{
			name: "one below the block cap",
			f:    factsWith(postDone, func(f *StopFacts) { f.BlocksInRow, f.BlockCap = 39, 40 }),
			want: due3,
		},
		{
			name: "block cap 0 means no cap",
			f:    factsWith(postDone, func(f *StopFacts) { f.BlocksInRow, f.BlockCap = 1000, 0 }),
			want: due3,
		},
		{
			name: "max review limit reached (code-review, pending tasks)",
			f:    okFacts(with(mkState(domain.PostCodeReview, domain.CodeReview, 3, 8, "opus", 0), func(s *state.State) { s.MaxReviews = 8 })),
			want: StopDecision{Reason: RMaxReviews, Review: domain.CodeReview, Task: 3, Iteration: 8, ToHuman: "max_reviews reached"},
		},
		{
			name: "max review limit reached (code-review, last task)",
			f: factsWith(with(mkState(domain.PostCodeReview, domain.CodeReview, 3, 3, "opus", 0), func(s *state.State) { s.MaxReviews = 3 }),
				func(f *StopFacts) { f.PendingOther = false }),
			want: StopDecision{Reason: RMaxReviews, Review: domain.CodeReview, Task: 3, Iteration: 3, ToHuman: "max_reviews reached"},
		},
		{
			name: "max review limit reached (plan-review)",
			f:    okFacts(with(mkState(domain.PostPlanReview, domain.PlanReview, 0, 2, "opus", 1), func(s *state.State) { s.MaxReviews = 2 })),
			want: StopDecision{Reason: RMaxReviews, Review: domain.PlanReview, Iteration: 2},
		},
		{
			name: "max review limit reached (all-code-review)",
			f:    okFacts(with(mkState(domain.PostAllCodeReview, domain.AllCodeReview, 3, 1, "opus", 0), func(s *state.State) { s.MaxReviews = 1 })),
			want: StopDecision{Reason: RMaxReviews, Review: domain.AllCodeReview, Iteration: 1},
		},
		{
			name: "ladder: a task in cto_intervention gets a CTO review by the rotation's first model",
			f: factsWith(mkState(domain.PostCodeReview, domain.CodeReview, 3, 3, "sonnet", 0), func(f *StopFacts) {
				f.TaskState, f.Models = lifecycle.CTOIntervention, []domain.Model{"opus", "sonnet"}
			}),
			want: StopDecision{Action: RunCTO, Reason: RCTOReview, Review: domain.CodeReview, Task: 3, Iteration: 1, Model: "opus"},
		},
		{
			name: "ladder: the second CTO attempt is numbered 2",
			f: factsWith(mkState(domain.PostCodeReview, domain.CodeReview, 3, 6, "sonnet", 0), func(f *StopFacts) {
				f.TaskState, f.CTOAttempts, f.Models = lifecycle.CTOIntervention, 1, []domain.Model{"opus", "sonnet"}
			}),
			want: StopDecision{Action: RunCTO, Reason: RCTOReview, Review: domain.CodeReview, Task: 3, Iteration: 2, Model: "opus"},
		},
		{
			name: "ladder: CTO attempts used up: to a human, no review",
			f: factsWith(mkState(domain.PostCodeReview, domain.CodeReview, 3, 6, "sonnet", 0), func(f *StopFacts) {
				f.TaskState, f.CTOAttempts = lifecycle.CTOIntervention, 2
			}),
			want: StopDecision{Reason: RHumanEscalation, Review: domain.CodeReview, Task: 3, Iteration: 6, ToHuman: "CTO attempts used up"},
		},
		{
			name: "ladder: the owed post-review comes before the CTO review",
			f: factsWith(mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0), func(f *StopFacts) {
				f.TaskState = lifecycle.CTOIntervention
			}),
			want: StopDecision{Action: Block, Reason: RPostOwedRemind, Review: domain.CodeReview, Task: 3, Iteration: 3,
				Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
		{
			name: "ladder: human_escalation: allowed, no review, before the lock",
			f: factsWith(mkState(domain.PostCodeReview, domain.CodeReview, 3, 7, "opus", 0), func(f *StopFacts) {
				f.TaskState, f.Lock = lifecycle.HumanEscalation, LockUnknown
			}),
			want: StopDecision{Reason: RHumanEscalation, Review: domain.CodeReview, Task: 3, Iteration: 7},
		},
		{
			name: "ladder: human_escalation: no reminder of an owed post-review either",
			f: factsWith(mkState(domain.CodeReview, domain.PostCodeReview, 3, 7, "opus", 0), func(f *StopFacts) {
				f.TaskState = lifecycle.HumanEscalation
			}),
			want: StopDecision{Reason: RHumanEscalation, Review: domain.CodeReview, Task: 3, Iteration: 7},
		},
		{
			name: "ladder: the cap comes before a CTO review",
			f: factsWith(with(mkState(domain.PostCodeReview, domain.CodeReview, 3, 3, "opus", 0), func(s *state.State) { s.MaxReviews = 3 }), func(f *StopFacts) {
				f.TaskState = lifecycle.CTOIntervention
			}),
			want: StopDecision{Reason: RMaxReviews, Review: domain.CodeReview, Task: 3, Iteration: 3, ToHuman: "max_reviews reached"},
		},
		{
			name: "last review allowed by the limit",
			f:    okFacts(with(mkState(domain.PostCodeReview, domain.CodeReview, 3, 7, "sonnet", 0), func(s *state.State) { s.MaxReviews = 8 })),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.CodeReview, Task: 3, Iteration: 8, Model: "sonnet"},
		},
		{
			name: "phase_iteration negative: illegal state, no review",
			f:    okFacts(iteration(postDone, -5)),
			want: StopDecision{Reason: RIterationRange, Review: domain.CodeReview, Iteration: -5},
		},
		{
			name: "phase_iteration -1 after implementing: illegal state, no review",
			f:    okFacts(iteration(mkState(domain.NextTask, domain.CodeReview, 3, 0, "opus", 0), -1)),
			want: StopDecision{Reason: RIterationRange, Review: domain.CodeReview, Iteration: -1},
		},
		{
			name: "phase_iteration huge: illegal state, no review",
			f:    okFacts(iteration(postDone, 1<<62)),
			want: StopDecision{Reason: RIterationRange, Review: domain.CodeReview, Iteration: 1 << 62},
		},
		{
			name: "phase_iteration at the largest int: no overflow into a review",
			f:    okFacts(iteration(postDone, math.MaxInt)),
			want: StopDecision{Reason: RIterationRange, Review: domain.CodeReview, Iteration: math.MaxInt},
		},
		{
			name: "phase_iteration above max_reviews: illegal state, no review",
			f:    okFacts(with(iteration(postDone, 9), func(s *state.State) { s.MaxReviews = 8 })),
			want: StopDecision{Reason: RIterationRange, Review: domain.CodeReview, Iteration: 9},
		},
		{
			name: "phase_iteration out of range beats a block cap it does not reach",
			f:    factsWith(iteration(mkState(domain.PostPlanReview, domain.PlanReview, 0, 0, "opus", 0), 100), func(f *StopFacts) { f.BlocksInRow = 3 }),
			want: StopDecision{Reason: RIterationRange, Review: domain.PlanReview, Iteration: 100},
		},
		{
			name: "post-review owed with phase_iteration negative: no reminder naming a negative file",
			f:    okFacts(iteration(mkState(domain.PlanReview, domain.PostPlanReview, 0, 0, "opus", 0), -5)),
			want: StopDecision{Reason: RIterationRange, Review: domain.PlanReview, Iteration: -5},
		},
		{
			name: "a review file ahead is never looked up past the largest int",
			f: factsWith(iteration(postDone, math.MaxInt), func(f *StopFacts) {
				f.Reviews = reviewsOf("task-3-review-1.md")
			}),
			want: StopDecision{Reason: RIterationRange, Review: domain.CodeReview, Iteration: math.MaxInt},
		},
		{
			name: "code-review without current_task",
			f:    okFacts(mkState(domain.NextTask, domain.CodeReview, 0, 0, "opus", 0)),
			want: StopDecision{Reason: RNoTask, Review: domain.CodeReview},
		},
		{
			name: "code-review without the task file",
			f:    factsWith(mkState(domain.NextTask, domain.CodeReview, 3, 0, "opus", 0), func(f *StopFacts) { f.TaskFileExists = false }),
			want: StopDecision{Reason: RNoTaskFile, Review: domain.CodeReview, Task: 3},
		},
		{
			name: "tasks-review without task files",
			f:    factsWith(mkState(domain.CreateTasks, domain.TasksReview, 0, 0, "opus", 0), func(f *StopFacts) { f.AnyTaskFile = false }),
			want: StopDecision{Reason: RNoTaskFiles, Review: domain.TasksReview},
		},
		{
			name: "all-code-review without task files",
			f:    factsWith(mkState(domain.CodeReview, domain.AllCodeReview, 3, 0, "opus", 0), func(f *StopFacts) { f.AnyTaskFile = false }),
			want: StopDecision{Reason: RNoTaskFiles, Review: domain.AllCodeReview},
		},
		{
			name: "plan-review needs no task file",
			f: factsWith(mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0), func(f *StopFacts) {
				f.AnyTaskFile, f.TaskFileExists = false, false
			}),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.PlanReview, Iteration: 1, Model: "opus"},
		},
		{
			name: "phase_iteration null counts as 0",
			f:    okFacts(mkState(domain.CreateTasks, domain.TasksReview, 0, -1, "opus", 0)),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.TasksReview, Iteration: 1, Model: "opus"},
		},
		{
			name: "empty review_model takes the first model of the rotation",
			f:    factsWith(mkState(domain.PostAllCodeReview, domain.AllCodeReview, 3, 1, "", 0), func(f *StopFacts) { f.Models = []domain.Model{"m1", "m2"} }),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.AllCodeReview, Task: 3, Iteration: 2, Model: "m1"},
		},
		{
			name: "needs_human: no review, whatever is due",
			f:    okFacts(human(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0))),
			want: StopDecision{Reason: RNeedsHuman, Review: domain.CodeReview, Task: 3, Iteration: 2},
		},
		{
			name: "needs_human: no reminder of the owed post-review either",
			f:    okFacts(human(mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "opus", 0))),
			want: StopDecision{Reason: RNeedsHuman, Review: domain.CodeReview, Task: 3, Iteration: 3},
		},
		{
			name: "needs_human: decided before the review lock is taken",
			f:    factsWith(human(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0)), func(f *StopFacts) { f.Lock = LockUnknown }),
			want: StopDecision{Reason: RNeedsHuman, Review: domain.CodeReview, Task: 3, Iteration: 2},
		},
		{
			name: "needs_human: paused wins",
			f:    okFacts(paused(human(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0)))),
			want: StopDecision{Reason: RPaused},
		},
		{
			name: "needs_human: the plan moved on to no review: nothing due",
			f:    okFacts(human(mkState(domain.CodeReview, domain.CompleteTask, 3, 5, "opus", 0))),
			want: StopDecision{Reason: RNotReview, Review: domain.CompleteTask},
		},
		{
			name: "budget spent: no review, the figures kept for the message",
			f: factsWith(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.TaskBudget = &ledger.BudgetOverrun{SpentUSD: 1.2, BudgetUSD: 1}
			}),
			want: StopDecision{Reason: RBudget, Review: domain.CodeReview, Task: 3, Iteration: 3, Budget: &ledger.BudgetOverrun{SpentUSD: 1.2, BudgetUSD: 1}},
		},
		{
			name: "the plan's budget spent: a code review follows the task's",
			f: factsWith(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.PlanBudget = &ledger.BudgetOverrun{SpentUSD: 1.2, BudgetUSD: 1}
			}),
			want: due3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got StopDecision
			unchanged(t, tc.f.State, func() { got = Decide(tc.f) })
			checkDecision(t, tc.want, got)
		})
	}
}

// The budget is read (a scan of the event log) only when a review would
// run: never on a stop with nothing due.
func TestBudgetMattersOnlyForAReview(t *testing.T) {
	for _, tc := range []struct {
		s    *state.State
		want bool
	}{
		{mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "opus", 0), false},
		{mkState(domain.CodeReview, domain.CompleteTask, 3, 5, "opus", 2), false},
		{human(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0)), false},
		{with(mkState(domain.PostCodeReview, domain.CodeReview, 3, 8, "opus", 0), func(s *state.State) { s.MaxReviews = 8 }), false},
		{mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0), true},
		{mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0), true},
	} {
		f := factsWith(tc.s, func(f *StopFacts) { f.Lock = LockUnknown })
		if got := BudgetMatters(f); got != tc.want {
			t.Errorf("%s → %s: BudgetMatters = %v, want %v", tc.s.Phase, tc.s.Next(), got, tc.want)
		}
	}
}

// Every decision that runs no reviewer has a reason code, and only the
// decisions that block or run something have an action other than Allow.
func TestDecideAlwaysGivesAReason(t *testing.T) {
	for _, p := range domain.Phases {
		for _, n := range append(append([]domain.Phase{""}, domain.Phases...), domain.CompleteTask, domain.CompleteTaskTDD) {
			for _, lock := range []LockState{LockUnknown, LockHeld, LockBusy} {
				s := mkState(p, n, 1, 1, "opus", 0)
				d := Decide(factsWith(s, func(f *StopFacts) { f.Lock = lock }))
				if d.Reason == "" {
					t.Errorf("%s → %s (lock %d): decision %+v has no reason", p, n, lock, d)
				}
				if lock != LockHeld && d.Save != nil {
					t.Errorf("%s → %s (lock %d): saved %s without holding the review lock", p, n, lock, d.Save.Encode())
				}
				if lock != LockHeld && d.Action == RunReview {
					t.Errorf("%s → %s (lock %d): review run without holding the review lock", p, n, lock)
				}
			}
		}
	}
}

// A hook killed after its reviewer wrote the review file, before the state
// update: the next stop adopts the file as `taskie continue` would.
func TestDecideRecoversAReviewAhead(t *testing.T) {
	base := []string{"plan.md", "tasks.md", "task-3.md", "task-3-review-1.md", "task-3-post-review-1.md",
		"task-3-review-2.md", "task-3-post-review-2.md"}
	ahead := func(names ...string) ReviewFiles { return reviewsOf(append(append([]string{}, base...), names...)...) }
	postDone := mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1)
	tests := []struct {
		name string
		f    StopFacts
		want StopDecision
	}{
		{
			name: "review file ahead: recorded, and the agent is told to do its post-review",
			f: factsWith(postDone, func(f *StopFacts) {
				f.Reviews = ahead("task-3-review-3.md")
			}),
			want: StopDecision{Action: Block, Reason: RRecoveredBlock, Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0),
				Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"},
		},
		{
			name: "review file ahead within a chain of blocks: still recorded",
			f: factsWith(postDone, func(f *StopFacts) {
				f.Reviews, f.Active = ahead("task-3-review-3.md"), true
				f.LastReviewBlock = &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2}
			}),
			want: StopDecision{Action: Block, Reason: RRecoveredBlock, Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0),
				Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"},
		},
		{
			name: "review and post-review ahead: recorded, and the next review runs",
			f: factsWith(postDone, func(f *StopFacts) {
				f.Reviews = ahead("task-3-review-3.md", "task-3-post-review-3.md")
			}),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Save: mkState(domain.PostCodeReview, domain.CodeReview, 3, 3, "sonnet", 0),
				Review: domain.CodeReview, Task: 3, Iteration: 4, Model: "sonnet"},
		},
		{
			name: "post-review found unrecorded, then the next review file ahead: both recorded",
			f: factsWith(mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "opus", 0), func(f *StopFacts) {
				f.PostReviewExists, f.Reviews = true, ahead("task-3-review-3.md")
			}),
			want: StopDecision{Action: Block, Reason: RRecoveredBlock, Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0),
				Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"},
		},
		{
			name: "plan-review file ahead",
			f: factsWith(mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0), func(f *StopFacts) {
				f.Reviews = ahead("plan-review-1.md")
			}),
			want: StopDecision{Action: Block, Reason: RRecoveredBlock, Save: mkState(domain.PlanReview, domain.PostPlanReview, 0, 1, "sonnet", 0),
				Mark: &Mark{Phase: domain.PlanReview, Iteration: 1}, Review: domain.PlanReview, Iteration: 1, Model: "opus"},
		},
		{
			name: "orphan ahead (its reviewer never finished): not adopted, the review runs again",
			f: factsWith(postDone, func(f *StopFacts) {
				f.Reviews, f.Orphans = ahead("task-3-review-3.md"), []ReviewAt{{Review: domain.CodeReview, Task: 3, N: 3}}
			}),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"},
		},
		{
			name: "a review file ahead of another task's series: the review runs",
			f:    factsWith(postDone, func(f *StopFacts) { f.Reviews = ahead("task-2-review-3.md") }),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"},
		},
		{
			name: "an orphan of another iteration does not keep the file ahead from being adopted",
			f: factsWith(postDone, func(f *StopFacts) {
				f.Reviews, f.Orphans = ahead("task-3-review-3.md"), []ReviewAt{{Review: domain.CodeReview, Task: 3, N: 2}}
			}),
			want: StopDecision{Action: Block, Reason: RRecoveredBlock, Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0),
				Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"},
		},
		{
			name: "no review file ahead: the review runs",
			f:    factsWith(postDone, func(f *StopFacts) { f.Reviews = ahead() }),
			want: StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got StopDecision
			unchanged(t, tc.f.State, func() { got = Decide(tc.f) })
			checkDecision(t, tc.want, got)
			if got.Save != nil && !Legal(tc.f.State.Phase, got.Save.Phase) {
				t.Errorf("recovery saves an illegal move %s -> %s", tc.f.State.Phase, got.Save.Phase)
			}
		})
	}
}

// Known defects of the crash recovery in Decide (reported, not fixed here:
// this change touches only tests). Remove the t.Skip when stop.go is fixed.
func TestDecideRecoveryKnownDefects(t *testing.T) {
	// next_phase set by hand to a review that cannot follow the phase
	// (new-plan → code-review): without a file ahead the hook refuses
	// (RIllegalNext); with one, it must not record new-plan → code-review.
	s := mkState(domain.NewPlan, domain.CodeReview, 1, 1, "opus", 0)
	f := factsWith(s, func(f *StopFacts) { f.Reviews = reviewsOf("plan.md", "tasks.md", "task-1.md", "task-1-review-2.md") })
	checkDecision(t, StopDecision{Reason: RIllegalNext, Review: domain.CodeReview}, Decide(f))

	// A stale cycle (a review set by hand after completion) starts fresh:
	// recoverAhead's own StaleCycle guard says it is never recovered, but
	// Decide hands it the already reset state, so the route is asked about
	// iteration 1 and adopts the previous cycle's all-code-review-1.md.
	s = mkState(domain.Complete, domain.AllCodeReview, 0, 2, "sonnet", 2)
	f = factsWith(s, func(f *StopFacts) {
		f.Reviews = reviewsOf("plan.md", "tasks.md", "task-1.md", "all-code-review-1.md", "all-code-review-2.md", "all-code-review-3.md")
	})
	checkDecision(t, StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.AllCodeReview, Iteration: 1, Model: "opus",
		Save: mkState(domain.Complete, domain.AllCodeReview, 0, 0, "opus", 0)}, Decide(f))
}

// The agent wrote the post-review file but did not record it: the hook
// records it (Save) and, since that is progress, runs the next review.
func TestDecideAutoDetectsDonePostReview(t *testing.T) {
	s := mkState(domain.CodeReview, domain.PostCodeReview, 3, 2, "opus", 1)
	f := factsWith(s, func(f *StopFacts) {
		f.PostReviewExists = true
		f.Active, f.LastReviewBlock = true, &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2}
	})
	var d StopDecision
	unchanged(t, s, func() { d = Decide(f) })
	checkDecision(t, StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus",
		Save: mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1)}, d)

	// The post-review file of a different review does not count.
	other := mkState(domain.PlanReview, domain.PostCodeReview, 3, 2, "opus", 1)
	f = factsWith(other, func(f *StopFacts) { f.PostReviewExists = true })
	if d := Decide(f); d.Save != nil || d.Action != Allow {
		t.Errorf("mismatched review/post-review: Decide = %+v, want allow without saving", d)
	}

	// Auto-detection then a reached limit: the detection is still saved.
	s = with(mkState(domain.TasksReview, domain.PostTasksReview, 0, 3, "opus", 0), func(s *state.State) { s.MaxReviews = 3 })
	f = factsWith(s, func(f *StopFacts) { f.PostReviewExists = true })
	d = Decide(f)
	checkDecision(t, StopDecision{Reason: RMaxReviews, Review: domain.TasksReview, Iteration: 3,
		Save: with(mkState(domain.PostTasksReview, domain.TasksReview, 0, 3, "opus", 0), func(s *state.State) { s.MaxReviews = 3 })}, d)
}

func TestDecideMaxReviewsZero(t *testing.T) {
	zero := func(s *state.State) *state.State { return with(s, func(s *state.State) { s.MaxReviews = 0 }) }
	tests := []struct {
		name    string
		s       *state.State
		pending bool
		want    *state.State
	}{
		{"plan-review", zero(mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0)), false,
			zero(mkState(domain.PlanReview, domain.CreateTasks, 0, 0, "opus", 0))},
		{"tasks-review", zero(mkState(domain.CreateTasks, domain.TasksReview, 0, 0, "opus", 0)), true,
			zero(mkState(domain.TasksReview, domain.CompleteTask, 0, 0, "opus", 0))},
		{"tasks-review tdd", with(zero(mkState(domain.CreateTasks, domain.TasksReview, 0, 0, "opus", 0)), func(s *state.State) { s.TDD = true }), true,
			with(zero(mkState(domain.TasksReview, domain.CompleteTaskTDD, 0, 0, "opus", 0)), func(s *state.State) { s.TDD = true })},
		{"code-review with pending tasks", zero(mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0)), true,
			zero(mkState(domain.CodeReview, domain.CompleteTask, 2, 0, "opus", 0))},
		{"code-review on the last task", zero(mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0)), false,
			zero(mkState(domain.CodeReview, domain.AllCodeReview, 2, 0, "opus", 0))},
		{"all-code-review", zero(mkState(domain.CodeReview, domain.AllCodeReview, 2, 0, "opus", 0)), false,
			zero(mkState(domain.AllCodeReview, domain.Complete, 2, 0, "opus", 0))},
		{"out-of-range phase_iteration does not matter when reviews are off", zero(iteration(mkState(domain.PostPlanReview, domain.PlanReview, 0, 0, "opus", 0), -3)), false,
			zero(iteration(mkState(domain.PlanReview, domain.CreateTasks, 0, 0, "opus", 0), 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := factsWith(tc.s, func(f *StopFacts) { f.PendingOther = tc.pending })
			var d StopDecision
			unchanged(t, tc.s, func() { d = Decide(f) })
			checkDecision(t, StopDecision{Reason: RReviewsOff, Review: tc.s.Next(), Save: tc.want}, d)
			if d.Save != nil && !Legal(tc.s.Phase, d.Save.Phase) {
				t.Errorf("saved phase %s is not a legal move from %s", d.Save.Phase, tc.s.Phase)
			}
		})
	}
}

// docs/state-machine.md: when the last task passes, all-code-review starts a fresh cycle
// (first model, consecutive_clean 0). Skipping the code review with
// max_reviews 0 reaches the same advance target and must do the same.
func TestDecideMaxReviewsZeroLastTaskStartsFreshCycle(t *testing.T) {
	s := with(mkState(domain.PostCodeReview, domain.CodeReview, 2, 3, "sonnet", 1), func(s *state.State) { s.MaxReviews = 0 })
	d := Decide(factsWith(s, func(f *StopFacts) { f.PendingOther = false }))
	want := with(mkState(domain.CodeReview, domain.AllCodeReview, 2, 0, "opus", 0), func(s *state.State) { s.MaxReviews = 0 })
	diffState(t, "saved state", want, d.Save)
}

// docs/state-machine.md: every writer goes through the transition table, the hook
// included. A next_phase naming a review that cannot follow the phase (set
// by hand: `taskie set next_phase` does not relate it to the phase) must
// not make the hook record an illegal phase move.
func TestHookNeverRecordsAnIllegalMove(t *testing.T) {
	var bad []string
	for _, p := range domain.Phases {
		for _, review := range domain.Reviews {
			s := mkState(p, review, 1, 1, "opus", 0)
			d := Decide(okFacts(s))
			if d.Save != nil && !Legal(p, d.Save.Phase) {
				bad = append(bad, fmt.Sprintf("%s with next_phase %s: saves phase %s", p, review, d.Save.Phase))
			}
			if d.Action != RunReview {
				continue
			}
			for _, v := range []domain.Verdict{domain.Pass, domain.Fail} {
				n, _ := Apply(s, d, v, true, nil)
				if !Legal(p, n.Phase) {
					bad = append(bad, fmt.Sprintf("%s with next_phase %s: %s review records phase %s", p, review, v, n.Phase))
				}
				rr := AfterReview(s, d, Finished{Verdict: v}, true, nil, true, "s")
				if !Legal(p, rr.Save.Phase) {
					bad = append(bad, fmt.Sprintf("%s with next_phase %s: %s review (AfterReview) records phase %s", p, review, v, rr.Save.Phase))
				}
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("Decide/Apply record %d illegal moves, e.g. %s", len(bad), bad[0])
	}
}

func TestAfterReview(t *testing.T) {
	code := func(it int, model domain.Model) StopDecision {
		return StopDecision{Action: RunReview, Reason: RReviewDue, Review: domain.CodeReview, Task: 3, Iteration: it, Model: model}
	}
	owned := func(s *state.State, id string) *state.State {
		return with(s, func(s *state.State) { s.SessionID = id })
	}
	tests := []struct {
		name      string
		s         *state.State
		d         StopDecision
		verdict   domain.Verdict
		ledger    *ledger.Assessment
		pending   bool
		autopilot bool
		owner     string
		want      ReviewResult
	}{
		{
			name: "FAIL: not advanced, block and remember the cycle",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), d: code(3, "opus"), verdict: domain.Fail, pending: true,
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0), Outcome: Outcome{Clean: 0},
				Block: true, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
		{
			name: "first PASS: not advanced, block",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0), d: code(3, "opus"), verdict: domain.Pass, pending: true,
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 1), Outcome: Outcome{Clean: 1},
				Block: true, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
		{
			name: "unreadable verdict with autopilot: still a block for the post-review",
			s:    mkState(domain.PostPlanReview, domain.PlanReview, 0, 1, "sonnet", 1), verdict: "", autopilot: true,
			d: StopDecision{Action: RunReview, Review: domain.PlanReview, Iteration: 2, Model: "sonnet"},
			want: ReviewResult{Save: mkState(domain.PlanReview, domain.PostPlanReview, 0, 2, "opus", 0), Outcome: Outcome{Clean: 0},
				Block: true, Mark: &Mark{Phase: domain.PlanReview, Iteration: 2}},
		},
		{
			name: "code-review passes: the task is done, allow",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), d: code(3, "opus"), verdict: domain.Pass, pending: true,
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.CompleteTask, 3, 3, "sonnet", 2),
				Outcome: Outcome{Advanced: true, Target: domain.CompleteTask, Clean: 2}, MarkDone: 3},
		},
		{
			name: "code-review passes on the last task: the task is done, all-code-review starts fresh",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), d: code(3, "opus"), verdict: domain.Pass,
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.AllCodeReview, 3, 0, "opus", 0),
				Outcome: Outcome{Advanced: true, Target: domain.AllCodeReview, Clean: 2}, MarkDone: 3},
		},
		{
			name: "code-review passes with autopilot: block to go on, no cycle mark",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), d: code(3, "opus"), verdict: domain.Pass, pending: true, autopilot: true,
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.CompleteTask, 3, 3, "sonnet", 2),
				Outcome: Outcome{Advanced: true, Target: domain.CompleteTask, Clean: 2}, MarkDone: 3, Block: true},
		},
		{
			name: "plan-review passes: no task to mark done",
			s:    mkState(domain.PostPlanReview, domain.PlanReview, 0, 1, "sonnet", 1), verdict: domain.Pass,
			d:    StopDecision{Action: RunReview, Review: domain.PlanReview, Iteration: 2, Model: "sonnet"},
			want: ReviewResult{Save: mkState(domain.PlanReview, domain.CreateTasks, 0, 2, "opus", 2), Outcome: Outcome{Advanced: true, Target: domain.CreateTasks, Clean: 2}},
		},
		{
			name: "all-code-review passes with a current task: no task marked done",
			s:    mkState(domain.PostAllCodeReview, domain.AllCodeReview, 3, 1, "sonnet", 1), verdict: domain.Pass,
			d:    StopDecision{Action: RunReview, Review: domain.AllCodeReview, Task: 3, Iteration: 2, Model: "sonnet"},
			want: ReviewResult{Save: mkState(domain.AllCodeReview, domain.Complete, 3, 2, "opus", 2), Outcome: Outcome{Advanced: true, Target: domain.Complete, Clean: 2}},
		},
		{
			name: "owner set: session_id recorded",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), d: code(3, "opus"), verdict: domain.Fail, owner: "sess-B",
			want: ReviewResult{Save: owned(mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0), "sess-B"), Outcome: Outcome{Clean: 0},
				Block: true, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
		{
			name: "owner taking the plan over from another session",
			s:    owned(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), "sess-A"), d: code(3, "opus"), verdict: domain.Pass, pending: true, owner: "sess-B",
			want: ReviewResult{Save: owned(mkState(domain.CodeReview, domain.CompleteTask, 3, 3, "sonnet", 2), "sess-B"),
				Outcome: Outcome{Advanced: true, Target: domain.CompleteTask, Clean: 2}, MarkDone: 3},
		},
		{
			name: "ledger: PASS with a blocker open is not clean",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), d: code(3, "opus"), verdict: domain.Pass, pending: true,
			ledger: &ledger.Assessment{Reason: ledger.ReasonOpenFindings, Tracked: true, Threshold: domain.Major, Blocking: []string{"F1"}},
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0), Outcome: Outcome{Clean: 0},
				Block: true, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
		{
			name: "ledger: FAIL clean by the ratchet, the second clean review: advance",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 4, "opus", 1), d: code(5, "opus"), verdict: domain.Fail, pending: true,
			ledger: &ledger.Assessment{Clean: true, Reason: ledger.ReasonRatchet, Tracked: true, Ratchet: true, Threshold: domain.Blocker},
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.CompleteTask, 3, 5, "sonnet", 2),
				Outcome: Outcome{Advanced: true, Target: domain.CompleteTask, Clean: 2}, MarkDone: 3},
		},
		{
			name: "ledger: no findings reported, the verdict decides as before",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0), d: code(3, "opus"), verdict: domain.Pass, pending: true,
			ledger: &ledger.Assessment{Clean: true, Reason: ledger.ReasonPass, Threshold: domain.Major},
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 1), Outcome: Outcome{Clean: 1},
				Block: true, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
		{
			name: "ledger: the cycle goes round: needs_human set, no block",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0), d: code(3, "opus"), verdict: domain.Fail, pending: true,
			ledger: &ledger.Assessment{Reason: ledger.ReasonReopened, Tracked: true, Threshold: domain.Major, Blocking: []string{"F1"}, NeedsHuman: true, Going: []string{"F1"}},
			want: ReviewResult{Save: with(mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0), func(s *state.State) { s.NeedsHuman = true }),
				Outcome: Outcome{Clean: 0}, NeedsHuman: true, ToHuman: "the review cycle does not converge"},
		},
		{
			name: "ledger: the cycle goes round while paused: needs_human set, paused",
			s:    paused(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0)), d: code(3, "opus"), verdict: domain.Fail, pending: true,
			ledger: &ledger.Assessment{Reason: ledger.ReasonStalled, Tracked: true, NeedsHuman: true, Going: []string{"F1"}},
			want: ReviewResult{Save: with(paused(mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0)), func(s *state.State) { s.NeedsHuman = true }),
				Outcome: Outcome{Clean: 0}, NeedsHuman: true, Paused: true, ToHuman: "the review cycle does not converge"},
		},
		{
			name: "ledger: budget spent by this review: recorded as usual, the next stop refuses",
			s:    mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 0), d: code(3, "opus"), verdict: domain.Fail, pending: true,
			ledger: &ledger.Assessment{Reason: ledger.ReasonFail, Threshold: domain.Major, BudgetExceeded: &ledger.BudgetOverrun{SpentUSD: 2, BudgetUSD: 1}},
			want: ReviewResult{Save: mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0), Outcome: Outcome{Clean: 0},
				Block: true, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
		{
			name: "no owner given: session_id kept",
			s:    owned(mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1), "sess-A"), d: code(3, "opus"), verdict: domain.Fail,
			want: ReviewResult{Save: owned(mkState(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0), "sess-A"), Outcome: Outcome{Clean: 0},
				Block: true, Mark: &Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got ReviewResult
			unchanged(t, tc.s, func() {
				got = AfterReview(tc.s, tc.d, Finished{Verdict: tc.verdict, Ledger: tc.ledger}, tc.pending, nil, tc.autopilot, tc.owner)
			})
			if diff := cmp.Diff(tc.want, got, stateOpts); diff != "" {
				t.Errorf("AfterReview (-want +got):\n%s", diff)
			}
			if got.Mark != nil && *got.Mark != MarkOf(got.Save) {
				t.Errorf("Mark %+v is not the saved cycle %+v", *got.Mark, MarkOf(got.Save))
			}
			if !Legal(tc.s.Phase, got.Save.Phase) {
				t.Errorf("AfterReview records the illegal move %s -> %s", tc.s.Phase, got.Save.Phase)
			}
		})
	}
}

func TestVerdictStillApplies(t *testing.T) {
	from := mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1)
	tests := []struct {
		name string
		cur  *state.State
		want bool
	}{
		{"nothing changed", from.Clone(), true},
		{"max_reviews raised meanwhile", with(from, func(s *state.State) { s.MaxReviews = 12 }), true},
		{"review_model changed meanwhile", with(from, func(s *state.State) { s.ReviewModel = "haiku" }), true},
		{"an unknown field set meanwhile", with(from, func(s *state.State) { s.Extra["note"] = []byte(`"x"`) }), true},
		{"session_id changed meanwhile", with(from, func(s *state.State) { s.SessionID = "other" }), true},
		{"state.json gone", nil, false},
		{"iteration moved", with(from, func(s *state.State) { s.PhaseIteration = state.Int(3) }), false},
		{"iteration reset (a new cycle)", with(from, func(s *state.State) { s.PhaseIteration = state.Int(0) }), false},
		{"phase moved", with(from, func(s *state.State) { s.Phase = domain.ContinueTask }), false},
		{"another task started", with(from, func(s *state.State) { s.CurrentTask = state.Opt[domain.TaskID](4) }), false},
		{"next_phase cleared (standalone)", with(from, func(s *state.State) { s.NextPhase = nil }), false},
		{"next_phase moved to another review", with(from, func(s *state.State) { s.NextPhase = state.Opt(domain.AllCodeReview) }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerdictStillApplies(from, tc.cur); got != tc.want {
				t.Errorf("VerdictStillApplies = %v, want %v", got, tc.want)
			}
		})
	}
}

// needs_human belongs to the cycle that did not converge: a new cycle
// (the next task, the final review) starts without it.
func TestNewCycleClearsNeedsHuman(t *testing.T) {
	s := human(mkState(domain.CodeReview, domain.CompleteTask, 3, 3, "opus", 0))
	n, err := Start(s, 4, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.NeedsHuman {
		t.Error("taskie start kept needs_human")
	}
	if d := Decide(okFacts(n)); d.Reason != RReviewDue {
		t.Errorf("the new cycle's first stop = %s, want a review", d.Reason)
	}
	if s.NeedsHuman != true {
		t.Error("Start changed its input")
	}
}

// Apply records a finished review (verdict PASS, FAIL or "" for unreadable)
// and returns the new state; s is not modified. domain.CleanToPass
// consecutive PASS verdicts end the cycle.
func Apply(s *state.State, d StopDecision, verdict domain.Verdict, pendingOther bool, models []domain.Model) (*state.State, Outcome) {
	return apply(s, d, verdict == domain.Pass, pendingOther, models)
}
