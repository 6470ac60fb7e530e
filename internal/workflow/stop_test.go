package workflow

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/state"
)

func TestAdvanceTargetEveryCase(t *testing.T) {
	tests := []struct {
		review       string
		tdd, pending bool
		want         string
	}{
		{PlanReview, false, false, CreateTasks},
		{PlanReview, false, true, CreateTasks},
		{PlanReview, true, false, CreateTasks},
		{PlanReview, true, true, CreateTasks},
		{TasksReview, false, false, CompleteTask},
		{TasksReview, false, true, CompleteTask},
		{TasksReview, true, false, CompleteTaskTDD},
		{TasksReview, true, true, CompleteTaskTDD},
		{CodeReview, false, false, AllCodeReview},
		{CodeReview, false, true, CompleteTask},
		{CodeReview, true, false, AllCodeReview},
		{CodeReview, true, true, CompleteTaskTDD},
		{AllCodeReview, false, false, Complete},
		{AllCodeReview, false, true, Complete},
		{AllCodeReview, true, false, Complete},
		{AllCodeReview, true, true, Complete},
		{PostCodeReview, false, true, ""},
		{NextTask, false, true, ""},
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
// Apply, and the agent's post-review recorded with Record, with
// stop_hook_active set after every block.
func TestCodeReviewCycleFailPassFailPassPass(t *testing.T) {
	s0 := mkState(CreateTasks, "", "", -1, "sonnet", 1)
	s, err := Start(s0, "1", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := []string{Fail, Pass, Fail, Pass, Pass}
	wantModels := []string{"opus", "sonnet", "opus", "sonnet", "opus"}
	wantClean := []int{0, 1, 0, 1, 2}
	var models []string
	var last *Mark
	for i, v := range verdicts {
		iter := i + 1
		d := Decide(StopFacts{State: s, Active: last != nil, LastReviewBlock: last,
			TaskFileExists: true, AnyTaskFile: true, PendingOther: true, BlocksInRow: i, BlockCap: 40})
		if d.Action != RunReview || d.Save != nil {
			t.Fatalf("review %d: Decide = %+v, want a review run and nothing saved", iter, d)
		}
		if d.Review != CodeReview || d.Task != "1" || d.Iteration != iter {
			t.Fatalf("review %d: Decide = %s task %s iteration %d", iter, d.Review, d.Task, d.Iteration)
		}
		models = append(models, d.Model)
		var n *state.State
		var out Outcome
		unchanged(t, s, func() { n, out = Apply(s, d, v, true, nil) })
		if n.Phase != CodeReview || n.Iteration() != iter || n.ConsecutiveClean != wantClean[i] || out.Clean != wantClean[i] {
			t.Errorf("review %d (%s): phase %s iteration %d clean %d (outcome %d), want code-review %d clean %d",
				iter, v, n.Phase, n.Iteration(), n.ConsecutiveClean, out.Clean, iter, wantClean[i])
		}
		if iter < len(verdicts) {
			if out.Advanced || n.Next() != PostCodeReview {
				t.Fatalf("review %d advanced (%+v) or next_phase %q is not post-code-review", iter, out, n.Next())
			}
			// The hook blocks here and remembers the state it blocked on.
			m := MarkOf(n)
			last = &m
			// A stop without the post-review does not run another review.
			again := Decide(StopFacts{State: with(n, func(x *state.State) { x.NextPhase = state.Str(CodeReview) }),
				Active: true, LastReviewBlock: last, TaskFileExists: true, PendingOther: true})
			if again.Action != Allow {
				t.Errorf("review %d: a stop without progress ran a review", iter)
			}
			s, err = Record(n, PostCodeReview, false, nil)
			if err != nil {
				t.Fatalf("review %d: recording the post-review: %v", iter, err)
			}
			if s.Phase != PostCodeReview || s.Next() != CodeReview || s.Iteration() != iter {
				t.Fatalf("review %d: after the post-review phase %s next %s iteration %d", iter, s.Phase, s.Next(), s.Iteration())
			}
			continue
		}
		want := Outcome{Advanced: true, Target: CompleteTask, Clean: 2}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("outcome of the 5th review (-want +got):\n%s", diff)
		}
		if n.Next() != CompleteTask {
			t.Errorf("next_phase after the 5th review = %q, want complete-task", n.Next())
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
		verdict string
		pending bool
		models  []string
		want    *state.State
		out     Outcome
	}{
		{
			name: "last task passes: all-code-review with a fresh cycle",
			s:    mkState(PostCodeReview, CodeReview, "4", 3, "sonnet", 1),
			d:    StopDecision{Action: RunReview, Review: CodeReview, Task: "4", Iteration: 4, Model: "sonnet"},
			// no pending task other than 4
			verdict: Pass,
			want:    mkState(CodeReview, AllCodeReview, "4", 0, "opus", 0),
			out:     Outcome{Advanced: true, Target: AllCodeReview, Clean: 2},
		},
		{
			name:    "last task passes with a custom rotation: fresh cycle starts at its first model",
			s:       mkState(PostCodeReview, CodeReview, "4", 1, "m2", 1),
			d:       StopDecision{Action: RunReview, Review: CodeReview, Task: "4", Iteration: 2, Model: "m2"},
			verdict: Pass,
			models:  []string{"m1", "m2", "m3"},
			want:    mkState(CodeReview, AllCodeReview, "4", 0, "m1", 0),
			out:     Outcome{Advanced: true, Target: AllCodeReview, Clean: 2},
		},
		{
			name:    "all-code-review passes: complete",
			s:       mkState(PostAllCodeReview, AllCodeReview, "4", 2, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: AllCodeReview, Task: "4", Iteration: 3, Model: "sonnet"},
			verdict: Pass,
			want:    mkState(AllCodeReview, Complete, "4", 3, "opus", 2),
			out:     Outcome{Advanced: true, Target: Complete, Clean: 2},
		},
		{
			name:    "plan-review passes: create-tasks",
			s:       mkState(PostPlanReview, PlanReview, "", 1, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: PlanReview, Iteration: 2, Model: "sonnet"},
			verdict: Pass,
			want:    mkState(PlanReview, CreateTasks, "", 2, "opus", 2),
			out:     Outcome{Advanced: true, Target: CreateTasks, Clean: 2},
		},
		{
			name:    "tasks-review passes on a tdd plan: complete-task-tdd",
			s:       with(mkState(PostTasksReview, TasksReview, "", 1, "sonnet", 1), func(s *state.State) { s.TDD = true }),
			d:       StopDecision{Action: RunReview, Review: TasksReview, Iteration: 2, Model: "sonnet"},
			verdict: Pass,
			pending: true,
			want:    with(mkState(TasksReview, CompleteTaskTDD, "", 2, "opus", 2), func(s *state.State) { s.TDD = true }),
			out:     Outcome{Advanced: true, Target: CompleteTaskTDD, Clean: 2},
		},
		{
			name:    "tasks-review passes: complete-task",
			s:       mkState(PostTasksReview, TasksReview, "", 1, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: TasksReview, Iteration: 2, Model: "sonnet"},
			verdict: Pass,
			want:    mkState(TasksReview, CompleteTask, "", 2, "opus", 2),
			out:     Outcome{Advanced: true, Target: CompleteTask, Clean: 2},
		},
		{
			name:    "first PASS: one more clean review needed",
			s:       mkState(NewPlan, PlanReview, "", 0, "opus", 0),
			d:       StopDecision{Action: RunReview, Review: PlanReview, Iteration: 1, Model: "opus"},
			verdict: Pass,
			want:    mkState(PlanReview, PostPlanReview, "", 1, "sonnet", 1),
			out:     Outcome{Clean: 1},
		},
		{
			name:    "unreadable verdict counts as FAIL",
			s:       mkState(PostTasksReview, TasksReview, "", 1, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: TasksReview, Iteration: 2, Model: "sonnet"},
			verdict: "",
			want:    mkState(TasksReview, PostTasksReview, "", 2, "opus", 0),
			out:     Outcome{Clean: 0},
		},
		{
			name:    "FAIL after a PASS resets consecutive_clean",
			s:       mkState(PostAllCodeReview, AllCodeReview, "2", 5, "sonnet", 1),
			d:       StopDecision{Action: RunReview, Review: AllCodeReview, Iteration: 6, Model: "sonnet"},
			verdict: Fail,
			want:    mkState(AllCodeReview, PostAllCodeReview, "2", 6, "opus", 0),
			out:     Outcome{Clean: 0},
		},
		{
			name:    "unknown fields survive",
			s:       with(mkState(NextTask, CodeReview, "1", 0, "opus", 0), func(s *state.State) { s.Extra["x"] = []byte(`{"a":1}`) }),
			d:       StopDecision{Action: RunReview, Review: CodeReview, Task: "1", Iteration: 1, Model: "opus"},
			verdict: Fail,
			pending: true,
			want:    with(mkState(CodeReview, PostCodeReview, "1", 1, "sonnet", 0), func(s *state.State) { s.Extra["x"] = []byte(`{"a":1}`) }),
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

// okFacts builds the facts of a stop at which everything is in place.
func okFacts(s *state.State) StopFacts {
	return StopFacts{State: s, TaskFileExists: true, AnyTaskFile: true, PendingOther: true, BlockCap: 40}
}

func TestDecide(t *testing.T) {
	postDone := mkState(PostCodeReview, CodeReview, "3", 2, "opus", 1)
	tests := []struct {
		name string
		f    StopFacts
		want StopDecision
	}{
		{
			name: "paused",
			f:    okFacts(with(postDone, func(s *state.State) { f := false; s.Enabled = &f })),
			want: StopDecision{Why: "automation paused"},
		},
		{
			name: "paused beats a done post-review",
			f: func() StopFacts {
				f := okFacts(with(mkState(CodeReview, PostCodeReview, "3", 2, "opus", 0), func(s *state.State) { f := false; s.Enabled = &f }))
				f.PostReviewExists = true
				return f
			}(),
			want: StopDecision{Why: "automation paused"},
		},
		{
			name: "next_phase null",
			f:    okFacts(mkState(NextTask, "", "3", 0, "opus", 0)),
			want: StopDecision{Why: `next_phase "" is not a review`},
		},
		{
			name: "post-review owed, this session got the block: allow with a reminder",
			f: func() StopFacts {
				f := okFacts(mkState(CodeReview, PostCodeReview, "3", 2, "sonnet", 0))
				f.LastReviewBlock = &Mark{Phase: CodeReview, Task: "3", Iteration: 2}
				return f
			}(),
			want: StopDecision{Why: "post-review owed",
				Message: "taskie: the post-code-review of iteration 2 is still owed; automation waits for it (`taskie continue` says what to do, `taskie pause` stops automation)."},
		},
		{
			name: "post-review owed, this session never got the block: block again",
			f:    okFacts(mkState(CodeReview, PostCodeReview, "3", 2, "sonnet", 0)),
			want: StopDecision{Action: Remind, Review: CodeReview, Task: "3", Iteration: 2, Why: "post-review owed; this session never got its block"},
		},
		{
			name: "review set by hand outside its cycle: fresh counters",
			f:    okFacts(with(mkState(Complete, AllCodeReview, "3", 2, "sonnet", 2), func(s *state.State) {})),
			want: StopDecision{Action: RunReview, Review: AllCodeReview, Task: "3", Iteration: 1, Model: "opus",
				Why:  "all-code-review iteration 1 due",
				Save: mkState(Complete, AllCodeReview, "3", 0, "opus", 0)},
		},
		{
			name: "advance target pending",
			f:    okFacts(mkState(CodeReview, CompleteTask, "3", 4, "opus", 2)),
			want: StopDecision{Why: `next_phase "complete-task" is not a review`, Message: "taskie: complete-task is next. Run /taskie:continue-plan."},
		},
		{
			name: "tdd advance target pending",
			f:    okFacts(mkState(TasksReview, CompleteTaskTDD, "", 2, "opus", 2)),
			want: StopDecision{Why: `next_phase "complete-task-tdd" is not a review`, Message: "taskie: complete-task-tdd is next. Run /taskie:continue-plan."},
		},
		{
			name: "create-tasks pending",
			f:    okFacts(mkState(PlanReview, CreateTasks, "", 2, "opus", 2)),
			want: StopDecision{Why: `next_phase "create-tasks" is not a review`, Message: "taskie: create-tasks is next. Run /taskie:continue-plan."},
		},
		{
			name: "complete pending",
			f:    okFacts(mkState(AllCodeReview, Complete, "3", 2, "opus", 2)),
			want: StopDecision{Why: `next_phase "complete" is not a review`, Message: "taskie: the plan is complete. Run `taskie continue` to record it."},
		},
		{
			name: "no progress since the last review block while stop_hook_active",
			f: func() StopFacts {
				s := mkState(CodeReview, CodeReview, "3", 2, "opus", 0)
				f := okFacts(s)
				f.Active, f.LastReviewBlock = true, &Mark{Phase: CodeReview, Task: "3", Iteration: 2}
				return f
			}(),
			want: StopDecision{Why: "no progress since the last review block",
				Message: "taskie: the code-review feedback was not addressed (no post-review recorded since the last block), so no new review ran. Do the post-code-review and record it with `taskie done post-code-review`, or run `taskie pause` to stop automation."},
		},
		{
			name: "same mark but stop_hook_active false: review runs",
			f: func() StopFacts {
				f := okFacts(mkState(CodeReview, CodeReview, "3", 2, "opus", 0))
				f.LastReviewBlock = &Mark{Phase: CodeReview, Task: "3", Iteration: 2}
				return f
			}(),
			want: StopDecision{Action: RunReview, Review: CodeReview, Task: "3", Iteration: 3, Model: "opus", Why: "code-review iteration 3 due"},
		},
		{
			name: "stop_hook_active after progress: review runs",
			f: func() StopFacts {
				f := okFacts(postDone)
				f.Active, f.LastReviewBlock = true, &Mark{Phase: CodeReview, Task: "3", Iteration: 2}
				return f
			}(),
			want: StopDecision{Action: RunReview, Review: CodeReview, Task: "3", Iteration: 3, Model: "opus", Why: "code-review iteration 3 due"},
		},
		{
			name: "stop_hook_active after a non-review block: review runs",
			f: func() StopFacts {
				f := okFacts(postDone)
				f.Active = true
				return f
			}(),
			want: StopDecision{Action: RunReview, Review: CodeReview, Task: "3", Iteration: 3, Model: "opus", Why: "code-review iteration 3 due"},
		},
		{
			name: "block cap reached",
			f: func() StopFacts {
				f := okFacts(postDone)
				f.Active, f.BlocksInRow, f.BlockCap = true, 40, 40
				return f
			}(),
			want: StopDecision{Why: "session block cap reached",
				Message: `taskie: 40 blocks in a row in this session (cap 40), so no review ran. Stop here; the next stop after a new prompt reviews again (raise "block_cap" in .taskie/config.json to allow longer chains).`},
		},
		{
			name: "one below the block cap",
			f: func() StopFacts {
				f := okFacts(postDone)
				f.BlocksInRow, f.BlockCap = 39, 40
				return f
			}(),
			want: StopDecision{Action: RunReview, Review: CodeReview, Task: "3", Iteration: 3, Model: "opus", Why: "code-review iteration 3 due"},
		},
		{
			name: "block cap 0 means no cap",
			f: func() StopFacts {
				f := okFacts(postDone)
				f.BlocksInRow, f.BlockCap = 1000, 0
				return f
			}(),
			want: StopDecision{Action: RunReview, Review: CodeReview, Task: "3", Iteration: 3, Model: "opus", Why: "code-review iteration 3 due"},
		},
		{
			name: "max review limit reached (code-review, pending tasks)",
			f:    okFacts(with(mkState(PostCodeReview, CodeReview, "3", 8, "opus", 0), func(s *state.State) { s.MaxReviews = 8 })),
			want: StopDecision{Why: "max_reviews reached",
				Message: "Max review limit (8) reached for code-review. Raise it with `taskie set max_reviews 12`, or move on: `taskie set next_phase complete-task` skips the rest of this review cycle."},
		},
		{
			name: "max review limit reached (code-review, last task)",
			f: func() StopFacts {
				f := okFacts(with(mkState(PostCodeReview, CodeReview, "3", 3, "opus", 0), func(s *state.State) { s.MaxReviews = 3 }))
				f.PendingOther = false
				return f
			}(),
			want: StopDecision{Why: "max_reviews reached",
				Message: "Max review limit (3) reached for code-review. Raise it with `taskie set max_reviews 7`, or move on: `taskie set next_phase all-code-review` skips the rest of this review cycle."},
		},
		{
			name: "max review limit reached (plan-review)",
			f:    okFacts(with(mkState(PostPlanReview, PlanReview, "", 2, "opus", 1), func(s *state.State) { s.MaxReviews = 2 })),
			want: StopDecision{Why: "max_reviews reached",
				Message: "Max review limit (2) reached for plan-review. Raise it with `taskie set max_reviews 6`, or move on: `taskie set next_phase create-tasks` skips the rest of this review cycle."},
		},
		{
			name: "max review limit reached (tasks-review, tdd)",
			f:    okFacts(with(mkState(PostTasksReview, TasksReview, "", 5, "opus", 1), func(s *state.State) { s.MaxReviews, s.TDD = 4, true })),
			want: StopDecision{Why: "max_reviews reached",
				Message: "Max review limit (4) reached for tasks-review. Raise it with `taskie set max_reviews 8`, or move on: `taskie set next_phase complete-task-tdd` skips the rest of this review cycle."},
		},
		{
			name: "max review limit reached (all-code-review)",
			f:    okFacts(with(mkState(PostAllCodeReview, AllCodeReview, "3", 1, "opus", 0), func(s *state.State) { s.MaxReviews = 1 })),
			want: StopDecision{Why: "max_reviews reached",
				Message: "Max review limit (1) reached for all-code-review. Raise it with `taskie set max_reviews 5`, or move on: `taskie set next_phase complete` skips the rest of this review cycle."},
		},
		{
			name: "last review allowed by the limit",
			f:    okFacts(with(mkState(PostCodeReview, CodeReview, "3", 7, "sonnet", 0), func(s *state.State) { s.MaxReviews = 8 })),
			want: StopDecision{Action: RunReview, Review: CodeReview, Task: "3", Iteration: 8, Model: "sonnet", Why: "code-review iteration 8 due"},
		},
		{
			name: "code-review without current_task",
			f:    okFacts(mkState(NextTask, CodeReview, "", 0, "opus", 0)),
			want: StopDecision{Why: "precondition failed",
				Message: "taskie: code-review is due but current_task is not set; run `taskie start <task> --auto`."},
		},
		{
			name: "code-review without the task file",
			f: func() StopFacts {
				f := okFacts(mkState(NextTask, CodeReview, "3", 0, "opus", 0))
				f.TaskFileExists = false
				return f
			}(),
			want: StopDecision{Why: "precondition failed",
				Message: "taskie: code-review is due but task-3.md does not exist; create it or fix current_task."},
		},
		{
			name: "tasks-review without task files",
			f: func() StopFacts {
				f := okFacts(mkState(CreateTasks, TasksReview, "", 0, "opus", 0))
				f.AnyTaskFile = false
				return f
			}(),
			want: StopDecision{Why: "precondition failed",
				Message: "taskie: tasks-review is due but no task file listed in tasks.md exists; write the task-T.md files first."},
		},
		{
			name: "all-code-review without task files",
			f: func() StopFacts {
				f := okFacts(mkState(CodeReview, AllCodeReview, "3", 0, "opus", 0))
				f.AnyTaskFile = false
				return f
			}(),
			want: StopDecision{Why: "precondition failed",
				Message: "taskie: all-code-review is due but no task file listed in tasks.md exists; write the task-T.md files first."},
		},
		{
			name: "plan-review needs no task file",
			f: func() StopFacts {
				f := okFacts(mkState(NewPlan, PlanReview, "", 0, "opus", 0))
				f.AnyTaskFile, f.TaskFileExists = false, false
				return f
			}(),
			want: StopDecision{Action: RunReview, Review: PlanReview, Iteration: 1, Model: "opus", Why: "plan-review iteration 1 due"},
		},
		{
			name: "phase_iteration null counts as 0",
			f:    okFacts(mkState(CreateTasks, TasksReview, "", -1, "opus", 0)),
			want: StopDecision{Action: RunReview, Review: TasksReview, Iteration: 1, Model: "opus", Why: "tasks-review iteration 1 due"},
		},
		{
			name: "empty review_model takes the first model of the rotation",
			f: func() StopFacts {
				f := okFacts(mkState(PostAllCodeReview, AllCodeReview, "3", 1, "", 0))
				f.Models = []string{"m1", "m2"}
				return f
			}(),
			want: StopDecision{Action: RunReview, Review: AllCodeReview, Task: "3", Iteration: 2, Model: "m1", Why: "all-code-review iteration 2 due"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got StopDecision
			unchanged(t, tc.f.State, func() { got = Decide(tc.f) })
			if diff := cmp.Diff(tc.want, got, stateOpts); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// The agent wrote the post-review file but did not record it: the hook
// records it (Save) and, since that is progress, runs the next review.
func TestDecideAutoDetectsDonePostReview(t *testing.T) {
	s := mkState(CodeReview, PostCodeReview, "3", 2, "opus", 1)
	f := okFacts(s)
	f.PostReviewExists = true
	f.Active, f.LastReviewBlock = true, &Mark{Phase: CodeReview, Task: "3", Iteration: 2}
	var d StopDecision
	unchanged(t, s, func() { d = Decide(f) })
	diffState(t, "saved state", mkState(PostCodeReview, CodeReview, "3", 2, "opus", 1), d.Save)
	want := StopDecision{Action: RunReview, Review: CodeReview, Task: "3", Iteration: 3, Model: "opus", Why: "code-review iteration 3 due", Save: d.Save}
	if diff := cmp.Diff(want, d, stateOpts); diff != "" {
		t.Errorf("Decide (-want +got):\n%s", diff)
	}

	// The post-review file of a different review does not count.
	other := mkState(PlanReview, PostCodeReview, "3", 2, "opus", 1)
	f = okFacts(other)
	f.PostReviewExists = true
	if d := Decide(f); d.Save != nil || d.Action != Allow {
		t.Errorf("mismatched review/post-review: Decide = %+v, want allow without saving", d)
	}

	// Auto-detection then a reached limit: the detection is still saved.
	s = with(mkState(TasksReview, PostTasksReview, "", 3, "opus", 0), func(s *state.State) { s.MaxReviews = 3 })
	f = okFacts(s)
	f.PostReviewExists = true
	d = Decide(f)
	if d.Action != Allow || d.Why != "max_reviews reached" {
		t.Errorf("Decide = %+v, want allow at the limit", d)
	}
	diffState(t, "saved state at the limit", with(mkState(PostTasksReview, TasksReview, "", 3, "opus", 0), func(s *state.State) { s.MaxReviews = 3 }), d.Save)
}

func TestDecideMaxReviewsZero(t *testing.T) {
	zero := func(s *state.State) *state.State { return with(s, func(s *state.State) { s.MaxReviews = 0 }) }
	tests := []struct {
		name    string
		s       *state.State
		pending bool
		want    *state.State
	}{
		{"plan-review", zero(mkState(NewPlan, PlanReview, "", 0, "opus", 0)), false,
			zero(mkState(PlanReview, CreateTasks, "", 0, "opus", 0))},
		{"tasks-review", zero(mkState(CreateTasks, TasksReview, "", 0, "opus", 0)), true,
			zero(mkState(TasksReview, CompleteTask, "", 0, "opus", 0))},
		{"tasks-review tdd", with(zero(mkState(CreateTasks, TasksReview, "", 0, "opus", 0)), func(s *state.State) { s.TDD = true }), true,
			with(zero(mkState(TasksReview, CompleteTaskTDD, "", 0, "opus", 0)), func(s *state.State) { s.TDD = true })},
		{"code-review with pending tasks", zero(mkState(NextTask, CodeReview, "2", 0, "opus", 0)), true,
			zero(mkState(CodeReview, CompleteTask, "2", 0, "opus", 0))},
		{"code-review on the last task", zero(mkState(NextTask, CodeReview, "2", 0, "opus", 0)), false,
			zero(mkState(CodeReview, AllCodeReview, "2", 0, "opus", 0))},
		{"all-code-review", zero(mkState(CodeReview, AllCodeReview, "2", 0, "opus", 0)), false,
			zero(mkState(AllCodeReview, Complete, "2", 0, "opus", 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := okFacts(tc.s)
			f.PendingOther = tc.pending
			var d StopDecision
			unchanged(t, tc.s, func() { d = Decide(f) })
			if d.Action != Allow || d.Why != "max_reviews is 0" {
				t.Errorf("Decide = %+v, want allow because max_reviews is 0", d)
			}
			review := tc.s.Next()
			wantMsg := "taskie: reviews are disabled (max_reviews 0); " + review + " skipped. Run /taskie:continue-plan to go on."
			if d.Message != wantMsg {
				t.Errorf("message = %q, want %q", d.Message, wantMsg)
			}
			diffState(t, "saved state", tc.want, d.Save)
			if d.Save != nil && !Legal(tc.s.Phase, d.Save.Phase) {
				t.Errorf("saved phase %s is not a legal move from %s", d.Save.Phase, tc.s.Phase)
			}
		})
	}
}

// SPEC §4: when the last task passes, all-code-review starts a fresh cycle
// (first model, consecutive_clean 0). Skipping the code review with
// max_reviews 0 reaches the same advance target and must do the same.
func TestDecideMaxReviewsZeroLastTaskStartsFreshCycle(t *testing.T) {
	s := with(mkState(PostCodeReview, CodeReview, "2", 3, "sonnet", 1), func(s *state.State) { s.MaxReviews = 0 })
	f := okFacts(s)
	f.PendingOther = false
	d := Decide(f)
	want := with(mkState(CodeReview, AllCodeReview, "2", 0, "opus", 0), func(s *state.State) { s.MaxReviews = 0 })
	diffState(t, "saved state", want, d.Save)
}

// SPEC §4: every writer goes through the transition table, the hook
// included. A next_phase naming a review that cannot follow the phase (set
// by hand: `taskie set next_phase` does not relate it to the phase) must
// not make the hook record an illegal phase move.
func TestHookNeverRecordsAnIllegalMove(t *testing.T) {
	var bad []string
	for _, p := range Phases {
		for _, review := range Reviews {
			s := mkState(p, review, "1", 1, "opus", 0)
			d := Decide(okFacts(s))
			if d.Save != nil && !Legal(p, d.Save.Phase) {
				bad = append(bad, fmt.Sprintf("%s with next_phase %s: saves phase %s", p, review, d.Save.Phase))
			}
			if d.Action != RunReview {
				continue
			}
			for _, v := range []string{Pass, Fail} {
				n, _ := Apply(s, d, v, true, nil)
				if !Legal(p, n.Phase) {
					bad = append(bad, fmt.Sprintf("%s with next_phase %s: %s review records phase %s", p, review, v, n.Phase))
				}
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("Decide/Apply record %d illegal moves, e.g. %s", len(bad), bad[0])
	}
}
