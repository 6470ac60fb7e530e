package workflow

import (
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
)

func TestRecord(t *testing.T) {
	tests := []struct {
		name   string
		s      *state.State
		phase  domain.Phase
		auto   bool
		models []domain.Model
		want   *state.State
		err    string // substring of the error; "" = no error
	}{
		{
			name:  "standalone: next_phase stays null and the cycle is untouched",
			s:     mkState(domain.NewPlan, "", 0, -1, "sonnet", 1),
			phase: domain.CreateTasks,
			want:  mkState(domain.CreateTasks, "", 0, -1, "sonnet", 1),
		},
		{
			name:  "--auto on a standalone plan: tasks-review next, fresh cycle",
			s:     mkState(domain.NewPlan, "", 0, -1, "sonnet", 1),
			phase: domain.CreateTasks,
			auto:  true,
			want:  mkState(domain.CreateTasks, domain.TasksReview, 0, 0, "opus", 0),
		},
		{
			name:  "automated new-plan: plan-review next, fresh cycle",
			s:     mkState(domain.NewPlan, domain.PlanReview, 0, 3, "sonnet", 1),
			phase: domain.NewPlan,
			want:  mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0),
		},
		{
			name:   "automated create-tasks after a passed plan review: fresh cycle with the configured first model",
			s:      mkState(domain.PlanReview, domain.CreateTasks, 0, 4, "m2", 2),
			phase:  domain.CreateTasks,
			models: []domain.Model{"m1", "m2"},
			want:   mkState(domain.CreateTasks, domain.TasksReview, 0, 0, "m1", 0),
		},
		{
			name:  "post-code-review: the review again, same iteration and model",
			s:     mkState(domain.CodeReview, domain.PostCodeReview, 2, 2, "opus", 1),
			phase: domain.PostCodeReview,
			want:  mkState(domain.PostCodeReview, domain.CodeReview, 2, 2, "opus", 1),
		},
		{
			name:  "post-plan-review",
			s:     mkState(domain.PlanReview, domain.PostPlanReview, 0, 1, "sonnet", 0),
			phase: domain.PostPlanReview,
			want:  mkState(domain.PostPlanReview, domain.PlanReview, 0, 1, "sonnet", 0),
		},
		{
			name:  "post-tasks-review",
			s:     mkState(domain.TasksReview, domain.PostTasksReview, 0, 1, "sonnet", 0),
			phase: domain.PostTasksReview,
			want:  mkState(domain.PostTasksReview, domain.TasksReview, 0, 1, "sonnet", 0),
		},
		{
			name:  "post-all-code-review",
			s:     mkState(domain.AllCodeReview, domain.PostAllCodeReview, 5, 3, "opus", 1),
			phase: domain.PostAllCodeReview,
			want:  mkState(domain.PostAllCodeReview, domain.AllCodeReview, 5, 3, "opus", 1),
		},
		{
			name:  "implemented in automated mode: code-review next",
			s:     mkState(domain.NextTaskTDD, domain.CodeReview, 2, 0, "opus", 0),
			phase: domain.NextTaskTDD,
			want:  mkState(domain.NextTaskTDD, domain.CodeReview, 2, 0, "opus", 0),
		},
		{
			name:  "continue-task in automated mode",
			s:     mkState(domain.PostCodeReview, domain.CodeReview, 2, 1, "sonnet", 0),
			phase: domain.ContinueTask,
			want:  mkState(domain.ContinueTask, domain.CodeReview, 2, 1, "sonnet", 0),
		},
		{
			name:  "complete after the all-code review passed",
			s:     mkState(domain.AllCodeReview, domain.Complete, 5, 2, "opus", 2),
			phase: domain.Complete,
			want:  mkState(domain.Complete, "", 5, 2, "opus", 2),
		},
		{
			name:  "complete after a post-all-code-review in automated mode: nothing follows",
			s:     mkState(domain.PostAllCodeReview, domain.AllCodeReview, 5, 2, "opus", 0),
			phase: domain.Complete,
			want:  mkState(domain.Complete, "", 5, 2, "opus", 0),
		},
		{
			name:  "illegal move lists the legal ones",
			s:     mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0),
			phase: domain.NextTask,
			err:   `cannot move from "new-plan" to "next-task"; legal moves from "new-plan": "new-plan", "plan-review", "create-tasks"`,
		},
		{
			name:  "complete is not reachable from implementing",
			s:     mkState(domain.NextTask, domain.CodeReview, 1, 0, "opus", 0),
			phase: domain.Complete,
			err:   `legal moves from "next-task": "code-review", "continue-task", "next-task", "next-task-tdd"`,
		},
		{
			name:  "an advance target is not a phase",
			s:     mkState(domain.CodeReview, domain.CompleteTask, 1, 3, "opus", 2),
			phase: domain.CompleteTask,
			err:   `unknown phase "complete-task"`,
		},
		{
			name:  "implementing needs a current task",
			s:     mkState(domain.CreateTasks, "", 0, -1, "opus", 0),
			phase: domain.NextTask,
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
		task   domain.TaskID
		auto   bool
		models []domain.Model
		want   *state.State
		err    string
	}{
		{
			name: "standalone after create-tasks",
			s:    mkState(domain.CreateTasks, "", 0, -1, "sonnet", 1),
			task: 1,
			want: mkState(domain.NextTask, "", 1, 0, "opus", 0),
		},
		{
			name: "tdd plan: next-task-tdd",
			s:    tdd(mkState(domain.PostTasksReview, "", 0, 2, "opus", 0)),
			task: 2,
			want: tdd(mkState(domain.NextTaskTDD, "", 2, 0, "opus", 0)),
		},
		{
			name: "automated: code-review next with a fresh cycle",
			s:    mkState(domain.CodeReview, domain.CompleteTask, 1, 5, "sonnet", 2),
			task: 2,
			auto: true,
			want: mkState(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0),
		},
		{
			name:   "automated tdd with a custom rotation",
			s:      tdd(mkState(domain.TasksReview, domain.CompleteTaskTDD, 0, 2, "y", 2)),
			task:   1,
			auto:   true,
			models: []domain.Model{"x", "y"},
			want:   tdd(mkState(domain.NextTaskTDD, domain.CodeReview, 1, 0, "x", 0)),
		},
		{
			name: "restarting the implementing phase with another task",
			s:    mkState(domain.NextTask, domain.CodeReview, 1, 2, "sonnet", 1),
			task: 3,
			auto: true,
			want: mkState(domain.NextTask, domain.CodeReview, 3, 0, "opus", 0),
		},
		{
			name: "a task added after completion",
			s:    mkState(domain.Complete, "", 4, 2, "opus", 2),
			task: 5,
			want: mkState(domain.NextTask, "", 5, 0, "opus", 0),
		},
		{
			name: "before the tasks exist",
			s:    mkState(domain.NewPlan, "", 0, -1, "opus", 0),
			task: 1,
			err:  `cannot move from "new-plan" to "next-task"; legal moves from "new-plan": "new-plan", "plan-review", "create-tasks"`,
		},
		{
			name: "in the middle of a plan review",
			s:    tdd(mkState(domain.PlanReview, domain.PostPlanReview, 0, 1, "opus", 0)),
			task: 1,
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

// docs/state-machine.md: every writer goes through the transition table. An advance
// target in next_phase must not let `taskie start` jump from a phase that
// cannot start a task.
func TestStartWithAdvanceTargetStillChecksTheMove(t *testing.T) {
	s := mkState(domain.NewPlan, domain.CompleteTask, 0, -1, "opus", 0)
	got, err := Start(s, 1, true, nil)
	if err == nil {
		t.Fatalf("Start from new-plan with next_phase complete-task = %+v, want an illegal-move error", got)
	}
	if !strings.Contains(err.Error(), `legal moves from "new-plan"`) {
		t.Errorf("error %q does not list the legal moves", err)
	}
}

func TestSet(t *testing.T) {
	base := func() *state.State {
		return with(mkState(domain.NextTask, domain.CodeReview, 1, 2, "opus", 1), func(s *state.State) { s.SessionID = "sess" })
	}
	f, tr := false, true
	tests := []struct {
		field, value string
		want         func(*state.State) // applied to base(); nil = error expected
		err          string
	}{
		{field: "phase", value: "code-review", want: func(s *state.State) { s.Phase = domain.CodeReview }},
		{field: "phase", value: "next-task", want: func(s *state.State) {}},
		{field: "phase", value: "plan-review", err: `cannot move from "next-task" to "plan-review"; legal moves from "next-task": "code-review", "continue-task", "next-task", "next-task-tdd"`},
		{field: "phase", value: "bogus", err: `unknown phase "bogus"; phases are "new-plan"`},
		{field: "phase", value: "null", err: `unknown phase "null"`},
		{field: "phase", value: "complete-task", err: `unknown phase "complete-task"`},
		{field: "next_phase", value: "post-code-review", want: func(s *state.State) { s.NextPhase = state.Opt(domain.PostCodeReview) }},
		{field: "next_phase", value: "complete-task-tdd", want: func(s *state.State) { s.NextPhase = state.Opt(domain.CompleteTaskTDD) }},
		{field: "next_phase", value: "null", want: func(s *state.State) { s.NextPhase = nil }},
		{field: "next_phase", value: "", want: func(s *state.State) { s.NextPhase = nil }},
		{field: "next_phase", value: "later", err: `unknown next_phase "later"; use null or one of "new-plan", `},
		{field: "current_task", value: "7", want: func(s *state.State) {
			s.CurrentTask, s.PhaseIteration, s.ConsecutiveClean = state.Opt[domain.TaskID](7), state.Int(0), 0
		}},
		{field: "current_task", value: " 8 ", want: func(s *state.State) {
			s.CurrentTask, s.PhaseIteration, s.ConsecutiveClean = state.Opt[domain.TaskID](8), state.Int(0), 0
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
		{field: "Phase", value: "next-task", err: `cannot set "Phase"`},
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

// docs/state-machine.md: "phase_iteration resets when current_task changes".
func TestSetCurrentTaskResetsIteration(t *testing.T) {
	s := mkState(domain.PostCodeReview, domain.CodeReview, 1, 3, "sonnet", 1)
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
		{"automated code review", mkState(domain.PostCodeReview, domain.CodeReview, 3, 2, "sonnet", 1), nil},
		{"advance target in next_phase", mkState(domain.CodeReview, domain.CompleteTaskTDD, 3, 2, "opus", 2), nil},
		{"unknown phase", mkState("coding", "", 0, -1, "opus", 0), []string{`unknown phase "coding"`}},
		{"empty phase", mkState("", "", 0, -1, "opus", 0), []string{`unknown phase ""`}},
		{"advance target as phase", mkState(domain.CompleteTask, "", 0, -1, "opus", 0), []string{`unknown phase "complete-task"`}},
		{"unknown next_phase", mkState(domain.NextTask, "review", 1, 0, "opus", 0), []string{`unknown next_phase "review"`}},
		// A current_task that is no task id never gets here: Decode refuses it.
		{"null iteration", mkState(domain.CodeReview, domain.PostCodeReview, 1, -1, "opus", 0), nil},
		{"empty model", mkState(domain.NewPlan, "", 0, -1, "", 0), []string{"review_model is empty"}},
		{"everything wrong", with(mkState("x", "y", 0, -1, "", 0), func(s *state.State) { s.PhaseIteration = state.Int(-2) }),
			[]string{`unknown phase "x"`, `unknown next_phase "y"`, "phase_iteration must be ≥ 0, got -2", "review_model is empty"}},
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

// needs_human belongs to the review cycle that stopped for a human: a
// change that leaves the cycle clears it, one within the cycle keeps it
// (only `taskie resume` clears it there).
func TestNeedsHumanEndsWithItsCycle(t *testing.T) {
	stopped := func(phase, next domain.Phase, task domain.TaskID) *state.State {
		return with(mkState(phase, next, task, 3, "opus", 0), func(s *state.State) { s.NeedsHuman = true })
	}
	set := func(field, value string) func(*state.State) (*state.State, error) {
		return func(s *state.State) (*state.State, error) { return Set(s, field, value) }
	}
	done := func(p domain.Phase) func(*state.State) (*state.State, error) {
		return func(s *state.State) (*state.State, error) { return Record(s, p, false, nil) }
	}
	tests := []struct {
		name   string
		s      *state.State
		change func(*state.State) (*state.State, error)
		want   bool // needs_human after
	}{
		{"next_phase complete-task: the next task", stopped(domain.CodeReview, domain.PostCodeReview, 1), set("next_phase", "complete-task"), false},
		{"next_phase complete-task-tdd", stopped(domain.PostCodeReview, domain.CodeReview, 1), set("next_phase", "complete-task-tdd"), false},
		{"next_phase all-code-review: another review", stopped(domain.CodeReview, domain.PostCodeReview, 2), set("next_phase", "all-code-review"), false},
		{"next_phase null: automation off", stopped(domain.PlanReview, domain.PostPlanReview, 0), set("next_phase", "null"), false},
		{"next_phase create-tasks after a plan review", stopped(domain.PlanReview, domain.PostPlanReview, 0), set("next_phase", "create-tasks"), false},
		{"current_task changed", stopped(domain.CodeReview, domain.PostCodeReview, 1), set("current_task", "2"), false},
		{"phase_iteration 0: a fresh cycle", stopped(domain.CodeReview, domain.PostCodeReview, 1), set("phase_iteration", "0"), false},
		{"next_phase the review again: same cycle", stopped(domain.CodeReview, domain.PostCodeReview, 1), set("next_phase", "code-review"), true},
		{"phase changed within the cycle", stopped(domain.PostCodeReview, domain.CodeReview, 1), set("phase", "code-review"), true},
		{"max_reviews raised", stopped(domain.CodeReview, domain.PostCodeReview, 1), set("max_reviews", "12"), true},
		{"review_model changed", stopped(domain.TasksReview, domain.PostTasksReview, 0), set("review_model", "sonnet"), true},
		{"same task set again", stopped(domain.CodeReview, domain.PostCodeReview, 1), set("current_task", "1"), true},
		{"current_task changed in a plan-wide review: phase_iteration resets", stopped(domain.AllCodeReview, domain.PostAllCodeReview, 1), set("current_task", "2"), false},
		{"done post-code-review: the review again", stopped(domain.CodeReview, domain.PostCodeReview, 1), done(domain.PostCodeReview), true},
		{"done continue-task: reviewed again in the same cycle", stopped(domain.CodeReview, domain.PostCodeReview, 1), done(domain.ContinueTask), true},
		{"done complete after the all-code review", stopped(domain.AllCodeReview, domain.PostAllCodeReview, 0), done(domain.Complete), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *state.State
			var err error
			unchanged(t, tc.s, func() { got, err = tc.change(tc.s) })
			if err != nil {
				t.Fatal(err)
			}
			if got.NeedsHuman != tc.want {
				t.Errorf("needs_human = %v, want %v (next_phase %q → %q)", got.NeedsHuman, tc.want, tc.s.Next(), got.Next())
			}
		})
	}
}

func TestLeftCycle(t *testing.T) {
	tests := []struct {
		name     string
		from, to *state.State
		want     bool
	}{
		{"outside every cycle", mkState(domain.NextTask, "", 1, 0, "opus", 0), mkState(domain.NextTask, domain.CodeReview, 1, 0, "opus", 0), false},
		{"post-review to review", mkState(domain.CodeReview, domain.PostCodeReview, 1, 2, "opus", 0), mkState(domain.PostCodeReview, domain.CodeReview, 1, 2, "opus", 0), false},
		{"to a task", mkState(domain.CodeReview, domain.PostCodeReview, 1, 2, "opus", 0), mkState(domain.CodeReview, domain.CompleteTask, 1, 2, "opus", 0), true},
		{"to another task's review", mkState(domain.CodeReview, domain.PostCodeReview, 1, 2, "opus", 0), mkState(domain.CodeReview, domain.PostCodeReview, 2, 2, "opus", 0), true},
		{"iteration back to 0", mkState(domain.CodeReview, domain.PostCodeReview, 1, 2, "opus", 0), mkState(domain.CodeReview, domain.PostCodeReview, 1, 0, "opus", 0), true},
		{"iteration null", mkState(domain.CodeReview, domain.PostCodeReview, 1, 2, "opus", 0), mkState(domain.CodeReview, domain.PostCodeReview, 1, -1, "opus", 0), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeftCycle(tc.from, tc.to); got != tc.want {
				t.Errorf("LeftCycle = %v, want %v", got, tc.want)
			}
		})
	}
}
