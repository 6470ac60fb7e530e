package workflow

import (
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/state"
)

func TestRecord(t *testing.T) {
	tests := []struct {
		name   string
		s      *state.State
		phase  string
		auto   bool
		models []string
		want   *state.State
		err    string // substring of the error; "" = no error
	}{
		{
			name:  "standalone: next_phase stays null and the cycle is untouched",
			s:     mkState(NewPlan, "", "", -1, "sonnet", 1),
			phase: CreateTasks,
			want:  mkState(CreateTasks, "", "", -1, "sonnet", 1),
		},
		{
			name:  "--auto on a standalone plan: tasks-review next, fresh cycle",
			s:     mkState(NewPlan, "", "", -1, "sonnet", 1),
			phase: CreateTasks,
			auto:  true,
			want:  mkState(CreateTasks, TasksReview, "", 0, "opus", 0),
		},
		{
			name:  "automated new-plan: plan-review next, fresh cycle",
			s:     mkState(NewPlan, PlanReview, "", 3, "sonnet", 1),
			phase: NewPlan,
			want:  mkState(NewPlan, PlanReview, "", 0, "opus", 0),
		},
		{
			name:   "automated create-tasks after a passed plan review: fresh cycle with the configured first model",
			s:      mkState(PlanReview, CreateTasks, "", 4, "m2", 2),
			phase:  CreateTasks,
			models: []string{"m1", "m2"},
			want:   mkState(CreateTasks, TasksReview, "", 0, "m1", 0),
		},
		{
			name:  "post-code-review: the review again, same iteration and model",
			s:     mkState(CodeReview, PostCodeReview, "2", 2, "opus", 1),
			phase: PostCodeReview,
			want:  mkState(PostCodeReview, CodeReview, "2", 2, "opus", 1),
		},
		{
			name:  "post-plan-review",
			s:     mkState(PlanReview, PostPlanReview, "", 1, "sonnet", 0),
			phase: PostPlanReview,
			want:  mkState(PostPlanReview, PlanReview, "", 1, "sonnet", 0),
		},
		{
			name:  "post-tasks-review",
			s:     mkState(TasksReview, PostTasksReview, "", 1, "sonnet", 0),
			phase: PostTasksReview,
			want:  mkState(PostTasksReview, TasksReview, "", 1, "sonnet", 0),
		},
		{
			name:  "post-all-code-review",
			s:     mkState(AllCodeReview, PostAllCodeReview, "5", 3, "opus", 1),
			phase: PostAllCodeReview,
			want:  mkState(PostAllCodeReview, AllCodeReview, "5", 3, "opus", 1),
		},
		{
			name:  "implemented in automated mode: code-review next",
			s:     mkState(NextTaskTDD, CodeReview, "2", 0, "opus", 0),
			phase: NextTaskTDD,
			want:  mkState(NextTaskTDD, CodeReview, "2", 0, "opus", 0),
		},
		{
			name:  "continue-task in automated mode",
			s:     mkState(PostCodeReview, CodeReview, "2", 1, "sonnet", 0),
			phase: ContinueTask,
			want:  mkState(ContinueTask, CodeReview, "2", 1, "sonnet", 0),
		},
		{
			name:  "complete after the all-code review passed",
			s:     mkState(AllCodeReview, Complete, "5", 2, "opus", 2),
			phase: Complete,
			want:  mkState(Complete, "", "5", 2, "opus", 2),
		},
		{
			name:  "complete after a post-all-code-review in automated mode: nothing follows",
			s:     mkState(PostAllCodeReview, AllCodeReview, "5", 2, "opus", 0),
			phase: Complete,
			want:  mkState(Complete, "", "5", 2, "opus", 0),
		},
		{
			name:  "illegal move lists the legal ones",
			s:     mkState(NewPlan, PlanReview, "", 0, "opus", 0),
			phase: NextTask,
			err:   `cannot move from "new-plan" to "next-task"; legal moves from "new-plan": "new-plan", "plan-review", "create-tasks"`,
		},
		{
			name:  "complete is not reachable from implementing",
			s:     mkState(NextTask, CodeReview, "1", 0, "opus", 0),
			phase: Complete,
			err:   `legal moves from "next-task": "code-review", "continue-task", "next-task", "next-task-tdd"`,
		},
		{
			name:  "an advance target is not a phase",
			s:     mkState(CodeReview, CompleteTask, "1", 3, "opus", 2),
			phase: CompleteTask,
			err:   `unknown phase "complete-task"`,
		},
		{
			name:  "implementing needs a current task",
			s:     mkState(CreateTasks, "", "", -1, "opus", 0),
			phase: NextTask,
			err:   "no current task: run `taskie start <task>` first",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *state.State
			var err error
			unchanged(t, tc.s, func() { got, err = Record(tc.s, tc.phase, tc.auto, tc.models) })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Record error = %v, want one containing %q", err, tc.err)
				}
				if got != nil {
					t.Errorf("Record returned a state with its error: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Record: %v", err)
			}
			diffState(t, "state", tc.want, got)
		})
	}
}

func TestStart(t *testing.T) {
	tdd := func(s *state.State) *state.State { return with(s, func(s *state.State) { s.TDD = true }) }
	tests := []struct {
		name   string
		s      *state.State
		task   string
		auto   bool
		models []string
		want   *state.State
		err    string
	}{
		{
			name: "standalone after create-tasks",
			s:    mkState(CreateTasks, "", "", -1, "sonnet", 1),
			task: "1",
			want: mkState(NextTask, "", "1", 0, "opus", 0),
		},
		{
			name: "tdd plan: next-task-tdd",
			s:    tdd(mkState(PostTasksReview, "", "", 2, "opus", 0)),
			task: "2",
			want: tdd(mkState(NextTaskTDD, "", "2", 0, "opus", 0)),
		},
		{
			name: "automated: code-review next with a fresh cycle",
			s:    mkState(CodeReview, CompleteTask, "1", 5, "sonnet", 2),
			task: "2",
			auto: true,
			want: mkState(NextTask, CodeReview, "2", 0, "opus", 0),
		},
		{
			name:   "automated tdd with a custom rotation",
			s:      tdd(mkState(TasksReview, CompleteTaskTDD, "", 2, "y", 2)),
			task:   "1",
			auto:   true,
			models: []string{"x", "y"},
			want:   tdd(mkState(NextTaskTDD, CodeReview, "1", 0, "x", 0)),
		},
		{
			name: "restarting the implementing phase with another task",
			s:    mkState(NextTask, CodeReview, "1", 2, "sonnet", 1),
			task: "3",
			auto: true,
			want: mkState(NextTask, CodeReview, "3", 0, "opus", 0),
		},
		{
			name: "a task added after completion",
			s:    mkState(Complete, "", "4", 2, "opus", 2),
			task: "5",
			want: mkState(NextTask, "", "5", 0, "opus", 0),
		},
		{
			name: "before the tasks exist",
			s:    mkState(NewPlan, "", "", -1, "opus", 0),
			task: "1",
			err:  `cannot move from "new-plan" to "next-task"; legal moves from "new-plan": "new-plan", "plan-review", "create-tasks"`,
		},
		{
			name: "in the middle of a plan review",
			s:    tdd(mkState(PlanReview, PostPlanReview, "", 1, "opus", 0)),
			task: "1",
			err:  `cannot move from "plan-review" to "next-task-tdd"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *state.State
			var err error
			unchanged(t, tc.s, func() { got, err = Start(tc.s, tc.task, tc.auto, tc.models) })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Start error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			diffState(t, "state", tc.want, got)
			if !Legal(tc.s.Phase, got.Phase) {
				t.Errorf("Start moved %s -> %s, which the table does not allow", tc.s.Phase, got.Phase)
			}
		})
	}
}

// SPEC §4: every writer goes through the transition table. An advance
// target in next_phase must not let `taskie start` jump from a phase that
// cannot start a task.
func TestStartWithAdvanceTargetStillChecksTheMove(t *testing.T) {
	s := mkState(NewPlan, CompleteTask, "", -1, "opus", 0)
	got, err := Start(s, "1", true, nil)
	if err == nil {
		t.Fatalf("Start from new-plan with next_phase complete-task = %+v, want an illegal-move error", got)
	}
	if !strings.Contains(err.Error(), `legal moves from "new-plan"`) {
		t.Errorf("error %q does not list the legal moves", err)
	}
}

func TestSet(t *testing.T) {
	base := func() *state.State {
		return with(mkState(NextTask, CodeReview, "1", 2, "opus", 1), func(s *state.State) { s.SessionID = "sess" })
	}
	f, tr := false, true
	tests := []struct {
		field, value string
		want         func(*state.State) // applied to base(); nil = error expected
		err          string
	}{
		{field: "phase", value: CodeReview, want: func(s *state.State) { s.Phase = CodeReview }},
		{field: "phase", value: NextTask, want: func(s *state.State) {}},
		{field: "phase", value: PlanReview, err: `cannot move from "next-task" to "plan-review"; legal moves from "next-task": "code-review", "continue-task", "next-task", "next-task-tdd"`},
		{field: "phase", value: "bogus", err: `unknown phase "bogus"; phases are "new-plan"`},
		{field: "phase", value: "null", err: `unknown phase "null"`},
		{field: "phase", value: CompleteTask, err: `unknown phase "complete-task"`},
		{field: "next_phase", value: PostCodeReview, want: func(s *state.State) { s.NextPhase = state.Str(PostCodeReview) }},
		{field: "next_phase", value: CompleteTaskTDD, want: func(s *state.State) { s.NextPhase = state.Str(CompleteTaskTDD) }},
		{field: "next_phase", value: "null", want: func(s *state.State) { s.NextPhase = nil }},
		{field: "next_phase", value: "", want: func(s *state.State) { s.NextPhase = nil }},
		{field: "next_phase", value: "later", err: `unknown next_phase "later"; use null or one of "new-plan", `},
		{field: "current_task", value: "7", want: func(s *state.State) {
			s.CurrentTask, s.PhaseIteration, s.ConsecutiveClean = state.Str("7"), state.Int(0), 0
		}},
		{field: "current_task", value: " 8 ", want: func(s *state.State) {
			s.CurrentTask, s.PhaseIteration, s.ConsecutiveClean = state.Str("8"), state.Int(0), 0
		}},
		{field: "current_task", value: "null", want: func(s *state.State) { s.CurrentTask, s.PhaseIteration, s.ConsecutiveClean = nil, state.Int(0), 0 }},
		{field: "current_task", value: "0", err: `current_task must be a positive integer, got "0"`},
		{field: "current_task", value: "-3", err: `current_task must be a positive integer, got "-3"`},
		{field: "current_task", value: "two", err: `current_task must be a positive integer, got "two"`},
		{field: "max_reviews", value: "12", want: func(s *state.State) { s.MaxReviews = 12 }},
		{field: "max_reviews", value: "0", want: func(s *state.State) { s.MaxReviews = 0 }},
		{field: "max_reviews", value: "-1", err: `max_reviews must be an integer ≥ 0, got "-1"`},
		{field: "max_reviews", value: "many", err: `max_reviews must be an integer ≥ 0, got "many"`},
		{field: "max_reviews", value: "null", err: `max_reviews must be an integer ≥ 0, got "null"`},
		{field: "phase_iteration", value: "5", want: func(s *state.State) { s.PhaseIteration = state.Int(5) }},
		{field: "phase_iteration", value: "null", want: func(s *state.State) { s.PhaseIteration = nil }},
		{field: "phase_iteration", value: "-1", err: `phase_iteration must be an integer ≥ 0, got "-1"`},
		{field: "consecutive_clean", value: "0", want: func(s *state.State) { s.ConsecutiveClean = 0 }},
		{field: "consecutive_clean", value: "1.5", err: `consecutive_clean must be an integer ≥ 0, got "1.5"`},
		{field: "consecutive_clean", value: "null", err: `consecutive_clean must be an integer ≥ 0, got "null"`},
		{field: "review_model", value: "sonnet", want: func(s *state.State) { s.ReviewModel = "sonnet" }},
		{field: "review_model", value: "null", err: "review_model cannot be empty"},
		{field: "review_model", value: "", err: "review_model cannot be empty"},
		{field: "tdd", value: "true", want: func(s *state.State) { s.TDD = true }},
		{field: "tdd", value: "false", want: func(s *state.State) { s.TDD = false }},
		{field: "tdd", value: "maybe", err: `tdd must be true or false, got "maybe"`},
		{field: "enabled", value: "false", want: func(s *state.State) { s.Enabled = &f }},
		{field: "enabled", value: "true", want: func(s *state.State) { s.Enabled = &tr }},
		{field: "enabled", value: "off", err: `enabled must be true or false, got "off"`},
		{field: "session_id", value: "abc-123", want: func(s *state.State) { s.SessionID = "abc-123" }},
		{field: "session_id", value: "null", want: func(s *state.State) { s.SessionID = "" }},
		{field: "worktree", value: "/tmp/x", err: `cannot set "worktree"; settable fields: phase, next_phase, current_task, max_reviews, phase_iteration, review_model, consecutive_clean, tdd, enabled, session_id`},
		{field: "Phase", value: NextTask, err: `cannot set "Phase"`},
		{field: "counter", value: "1", err: `cannot set "counter"`},
	}
	for _, tc := range tests {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			s := base()
			var got *state.State
			var err error
			unchanged(t, s, func() { got, err = Set(s, tc.field, tc.value) })
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Set error = %v, want one containing %q", err, tc.err)
				}
				if got != nil {
					t.Errorf("Set returned a state with its error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			diffState(t, "state", with(base(), tc.want), got)
		})
	}
}

// Every settable field is covered by TestSet.
func TestSettableFields(t *testing.T) {
	want := "phase next_phase current_task max_reviews phase_iteration review_model consecutive_clean tdd enabled session_id"
	if got := strings.Join(Settable, " "); got != want {
		t.Errorf("Settable = %q, want %q", got, want)
	}
}

// SPEC §4: "phase_iteration resets when current_task changes".
func TestSetCurrentTaskResetsIteration(t *testing.T) {
	s := mkState(PostCodeReview, CodeReview, "1", 3, "sonnet", 1)
	same, err := Set(s, "current_task", "1")
	if err != nil {
		t.Fatal(err)
	}
	if same.Iteration() != 3 {
		t.Errorf("setting the same task changed phase_iteration to %d", same.Iteration())
	}
	other, err := Set(s, "current_task", "2")
	if err != nil {
		t.Fatal(err)
	}
	if other.Iteration() != 0 {
		t.Errorf("phase_iteration after changing current_task 1 -> 2 = %d, want 0", other.Iteration())
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		s    *state.State
		want []string
	}{
		{"fresh plan", state.New(), nil},
		{"automated code review", mkState(PostCodeReview, CodeReview, "3", 2, "sonnet", 1), nil},
		{"advance target in next_phase", mkState(CodeReview, CompleteTaskTDD, "3", 2, "opus", 2), nil},
		{"unknown phase", mkState("coding", "", "", -1, "opus", 0), []string{`unknown phase "coding"`}},
		{"empty phase", mkState("", "", "", -1, "opus", 0), []string{`unknown phase ""`}},
		{"advance target as phase", mkState(CompleteTask, "", "", -1, "opus", 0), []string{`unknown phase "complete-task"`}},
		{"unknown next_phase", mkState(NextTask, "review", "1", 0, "opus", 0), []string{`unknown next_phase "review"`}},
		{"current_task not a number", mkState(NextTask, "", "abc", 0, "opus", 0), []string{`current_task must be a positive integer, got "abc"`}},
		{"current_task zero", mkState(NextTask, "", "0", 0, "opus", 0), []string{`current_task must be a positive integer, got "0"`}},
		{"null iteration", mkState(CodeReview, PostCodeReview, "1", -1, "opus", 0), nil},
		{"empty model", mkState(NewPlan, "", "", -1, "", 0), []string{"review_model is empty"}},
		{"everything wrong", with(mkState("x", "y", "z", -1, "", 0), func(s *state.State) { s.PhaseIteration = state.Int(-2) }),
			[]string{`unknown phase "x"`, `unknown next_phase "y"`, `current_task must be a positive integer, got "z"`, "phase_iteration must be ≥ 0, got -2", "review_model is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.s)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
}
