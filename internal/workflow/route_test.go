package workflow

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
)

// planFiles is a fake plan directory: the set of review files on disk.
type planFiles map[string]bool

func (pf planFiles) facts(s *state.State, tasks []TaskFact, subtasks []string) RouteFacts {
	return RouteFacts{
		State:    s,
		HasPlan:  pf["plan.md"],
		HasTasks: pf["tasks.md"],
		Tasks:    tasks,
		Subtasks: subtasks,
		Reviews:  pf.reviews(),
	}
}

// reviews are the review and post-review files among pf.
func (pf planFiles) reviews() ReviewFiles {
	var names []string
	for n := range pf {
		names = append(names, n)
	}
	return reviewsOf(names...)
}

func files(names ...string) planFiles {
	pf := planFiles{}
	for _, n := range names {
		pf[n] = true
	}
	return pf
}

func tasks(spec ...string) []TaskFact {
	var out []TaskFact
	for i, st := range spec {
		out = append(out, TaskFact{ID: domain.TaskID(i + 1), Status: st})
	}
	return out
}

var routeOpts = cmp.Options{stateOpts, cmpopts.IgnoreFields(Route{}, "Repair")}

func TestContinueWithoutState(t *testing.T) {
	const pre = "no state.json, best guess from the files: "
	tests := []struct {
		name  string
		files planFiles
		tasks []TaskFact
		want  Route
	}{
		{"empty plan", files(), nil,
			Route{Action: string(domain.NewPlan), Guess: true, Why: pre + "plan.md does not exist"}},
		{"plan only", files("plan.md"), nil,
			Route{Action: string(domain.PlanReview), Guess: true, Options: []string{string(domain.PlanReview), string(domain.CreateTasks)}, Why: pre + "plan.md exists but tasks.md does not"}},
		{"plan review without post-review", files("plan.md", "plan-review-1.md", "plan-post-review-1.md", "plan-review-2.md"), nil,
			Route{Action: string(domain.PostPlanReview), Guess: true, Why: pre + "plan review 2 has no post-review"}},
		{"plan review with its post-review", files("plan.md", "plan-review-1.md", "plan-post-review-1.md"), nil,
			Route{Action: string(domain.PlanReview), Guess: true, Options: []string{string(domain.PlanReview), string(domain.CreateTasks)}, Why: pre + "plan.md exists but tasks.md does not"}},
		{"tasks review without post-review", files("plan.md", "tasks.md", "tasks-review-1.md"), tasks("pending"),
			Route{Action: string(domain.PostTasksReview), Guess: true, Why: pre + "tasks review 1 has no post-review"}},
		{"code review of the task in progress without post-review", files("plan.md", "tasks.md", "task-2-review-1.md", "task-2-post-review-1.md", "task-2-review-2.md"), tasks("done", "in-progress", "pending"),
			Route{Action: string(domain.PostCodeReview), Task: 2, Guess: true, Why: pre + "task 2 review 2 has no post-review"}},
		{"task in progress", files("plan.md", "tasks.md", "task-2-review-1.md", "task-2-post-review-1.md"), tasks("done", "in-progress", "pending"),
			Route{Action: string(domain.ContinueTask), Task: 2, Command: "taskie start 2", Guess: true, Why: pre + "task 2 is in progress"}},
		{"first pending task", files("plan.md", "tasks.md"), tasks("done", "cancelled", "pending", "pending"),
			Route{Action: string(domain.CompleteTask), Task: 3, Guess: true, Options: []string{string(domain.CompleteTask), string(domain.TasksReview)}, Why: pre + "task 3 is the first pending task"}},
		{"all done, all-code review without post-review", files("plan.md", "tasks.md", "all-code-review-1.md"), tasks("done", "done"),
			Route{Action: string(domain.PostAllCodeReview), Guess: true, Why: pre + "all-code review 1 has no post-review"}},
		{"all done", files("plan.md", "tasks.md", "all-code-review-1.md", "all-code-post-review-1.md"), tasks("done", "cancelled"),
			Route{Action: string(domain.AllCodeReview), Guess: true, Options: []string{string(domain.AllCodeReview), "add-task"}, Why: pre + "no task is pending or in progress"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Continue(tc.files.facts(nil, tc.tasks, nil), nil)
			if diff := cmp.Diff(tc.want, got, routeOpts); diff != "" {
				t.Errorf("Continue (-want +got):\n%s", diff)
			}
			if got.Repair != nil {
				t.Errorf("a guess repaired the state: %+v", got.Repair)
			}
		})
	}
}

func TestContinue(t *testing.T) {
	paused := func(s *state.State) *state.State {
		return with(s, func(s *state.State) { f := false; s.Enabled = &f })
	}
	tdd := func(s *state.State) *state.State { return with(s, func(s *state.State) { s.TDD = true }) }
	completed := func(s *state.State, t domain.TaskID) *state.State {
		return with(s, func(s *state.State) {
			s.Lifecycle = lifecycle.Encode(map[domain.TaskID]lifecycle.Task{t: {ID: t, State: lifecycle.Completed}})
		})
	}
	base := files("plan.md", "tasks.md", "task-1.md", "task-2.md", "task-3.md")
	plus := func(names ...string) planFiles {
		pf := planFiles{}
		for k := range base {
			pf[k] = true
		}
		for _, n := range names {
			pf[n] = true
		}
		return pf
	}
	tests := []struct {
		name     string
		s        *state.State
		files    planFiles
		tasks    []TaskFact
		subtasks []string
		want     Route
		repair   *state.State
	}{
		{
			name:  "paused",
			s:     paused(mkState(domain.PostCodeReview, domain.CodeReview, 1, 1, "sonnet", 0)),
			files: base,
			want:  Route{Action: Resume, Command: "taskie resume", Why: "automation is paused for this plan"},
		},
		{
			name:  "needs a human",
			s:     with(mkState(domain.PostCodeReview, domain.CodeReview, 1, 4, "sonnet", 0), func(s *state.State) { s.NeedsHuman = true }),
			files: base,
			want: Route{Action: Human, Task: 1, Command: "taskie findings",
				Why: "the review cycle stopped for a human: the reviews are not converging (or a budget is spent); a human reads the open findings, decides, then runs taskie resume to review again"},
		},
		{
			name:   "next_phase complete: record it",
			s:      mkState(domain.AllCodeReview, domain.Complete, 3, 2, "opus", 2),
			files:  base,
			want:   Route{Action: Nothing, Why: "the all-code review passed: the plan is complete (recorded)"},
			repair: mkState(domain.Complete, "", 3, 2, "opus", 2),
		},
		{
			name:  "complete",
			s:     mkState(domain.Complete, "", 3, 2, "opus", 2),
			files: base,
			want:  Route{Action: Nothing, Why: "the plan is complete; add a task with /taskie:add-task to go on"},
		},
		{
			name:  "post-review owed, file not written",
			s:     mkState(domain.CodeReview, domain.PostCodeReview, 1, 2, "opus", 0),
			files: plus("task-1-review-1.md", "task-1-post-review-1.md", "task-1-review-2.md"),
			want: Route{Action: string(domain.PostCodeReview), Task: 1, Command: "taskie done post-code-review",
				Why: "code-review iteration 2 found problems or needs one more clean review; address it, write the post-review file, then run the command"},
		},
		{
			name:  "post-review written but not recorded: repair",
			s:     mkState(domain.CodeReview, domain.PostCodeReview, 1, 2, "opus", 0),
			files: plus("task-1-review-1.md", "task-1-post-review-1.md", "task-1-review-2.md", "task-1-post-review-2.md"),
			want: Route{Action: EndTurn, Task: 1,
				Why: "the post-code-review for iteration 2 is written but was not recorded (taskie continue records it); end your turn and the Stop hook runs code-review iteration 3"},
			repair: mkState(domain.PostCodeReview, domain.CodeReview, 1, 2, "opus", 0),
		},
		{
			name:  "plan post-review written but not recorded: repair",
			s:     mkState(domain.PlanReview, domain.PostPlanReview, 0, 1, "sonnet", 1),
			files: files("plan.md", "plan-review-1.md", "plan-post-review-1.md"),
			want: Route{Action: EndTurn,
				Why: "the post-plan-review for iteration 1 is written but was not recorded (taskie continue records it); end your turn and the Stop hook runs plan-review iteration 2"},
			repair: mkState(domain.PostPlanReview, domain.PlanReview, 0, 1, "sonnet", 1),
		},
		{
			name:  "review due",
			s:     mkState(domain.PostCodeReview, domain.CodeReview, 1, 1, "sonnet", 0),
			files: plus("task-1-review-1.md", "task-1-post-review-1.md"),
			want:  Route{Action: EndTurn, Task: 1, Why: "code-review iteration 2 is due: end your turn and the Stop hook runs it"},
		},
		{
			name:  "first plan review due",
			s:     mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0),
			files: files("plan.md"),
			want:  Route{Action: EndTurn, Why: "plan-review iteration 1 is due: end your turn and the Stop hook runs it"},
		},
		{
			name:  "crash after the review file was written: repair and do the post-review",
			s:     mkState(domain.NextTask, domain.CodeReview, 1, 0, "opus", 0),
			files: plus("task-1-review-1.md"),
			want: Route{Action: string(domain.PostCodeReview), Task: 1, Command: "taskie done post-code-review",
				Why: "code-review iteration 1 was written but state.json was not updated (taskie continue records it; the verdict is lost); do the post-review"},
			repair: mkState(domain.CodeReview, domain.PostCodeReview, 1, 1, "sonnet", 0),
		},
		{
			name:  "crash in a later iteration of a tasks review",
			s:     mkState(domain.PostTasksReview, domain.TasksReview, 0, 2, "sonnet", 1),
			files: plus("tasks-review-1.md", "tasks-post-review-1.md", "tasks-review-2.md", "tasks-post-review-2.md", "tasks-review-3.md"),
			want: Route{Action: string(domain.PostTasksReview), Command: "taskie done post-tasks-review",
				Why: "tasks-review iteration 3 was written but state.json was not updated (taskie continue records it; the verdict is lost); do the post-review"},
			repair: mkState(domain.TasksReview, domain.PostTasksReview, 0, 3, "opus", 0),
		},
		{
			name:  "crash after the review and the post-review were written",
			s:     mkState(domain.PostCodeReview, domain.CodeReview, 1, 1, "sonnet", 1),
			files: plus("task-1-review-1.md", "task-1-post-review-1.md", "task-1-review-2.md", "task-1-post-review-2.md"),
			want: Route{Action: EndTurn, Task: 1,
				Why: "code-review iteration 2 and its post-review exist but state.json was not updated (taskie continue records it; the verdict is lost); end your turn and the Stop hook runs iteration 3"},
			repair: mkState(domain.PostCodeReview, domain.CodeReview, 1, 2, "opus", 0),
		},
		{
			name:     "implementing with unfinished subtasks",
			s:        tdd(mkState(domain.NextTaskTDD, domain.CodeReview, 2, 0, "opus", 0)),
			files:    base,
			subtasks: []string{"done", "in-progress", "pending"},
			want: Route{Action: string(domain.ContinueTask), Task: 2, Command: "taskie done next-task-tdd",
				Why: "task 2 has unfinished subtasks; finish them, then run the command and end your turn for the code review"},
		},
		{
			name:     "implementing with every subtask finished: review due",
			s:        mkState(domain.ContinueTask, domain.CodeReview, 2, 1, "sonnet", 0),
			files:    plus("task-2-review-1.md", "task-2-post-review-1.md"),
			subtasks: []string{"done", "completed", "cancelled"},
			want:     Route{Action: EndTurn, Task: 2, Why: "code-review iteration 2 is due: end your turn and the Stop hook runs it"},
		},
		{
			name:  "advance target: next pending task",
			s:     mkState(domain.CodeReview, domain.CompleteTask, 1, 3, "opus", 2),
			files: base,
			tasks: tasks("in-progress", "done", "pending"),
			want: Route{Action: string(domain.CompleteTask), Task: 3, Command: "taskie start 3 --auto",
				Why: "the previous review cycle passed; task 3 is the next pending task"},
		},
		{
			name:  "advance target skips the current task even if still pending",
			s:     tdd(mkState(domain.TasksReview, domain.CompleteTaskTDD, 1, 2, "opus", 2)),
			files: base,
			tasks: tasks("pending", "pending"),
			want: Route{Action: string(domain.CompleteTaskTDD), Task: 2, Command: "taskie start 2 --auto",
				Why: "the previous review cycle passed; task 2 is the next pending task"},
		},
		{
			name:  "advance target with no pending task",
			s:     mkState(domain.CodeReview, domain.CompleteTask, 2, 3, "opus", 2),
			files: base,
			tasks: tasks("done", "in-progress", "cancelled"),
			want: Route{Action: string(domain.AllCodeReview), Options: []string{string(domain.AllCodeReview), "add-task"},
				Why: "next_phase is complete-task but no pending task remains; run the all-code review or add a task"},
		},
		{
			name:  "next_phase create-tasks",
			s:     mkState(domain.PlanReview, domain.CreateTasks, 0, 2, "opus", 2),
			files: files("plan.md"),
			want:  Route{Action: string(domain.CreateTasks), Why: "next_phase is create-tasks"},
		},
		{
			name:  "standalone after create-tasks: options",
			s:     mkState(domain.CreateTasks, "", 0, -1, "opus", 0),
			files: base,
			want: Route{Action: string(domain.TasksReview), Options: []string{string(domain.TasksReview), string(domain.CompleteTask)},
				Why: "standalone mode (next_phase is null) after create-tasks: more than one action fits; pick one"},
		},
		{
			name:  "standalone tdd after a post-tasks-review",
			s:     tdd(mkState(domain.PostTasksReview, "", 0, 1, "opus", 0)),
			files: plus("tasks-review-1.md", "tasks-post-review-1.md"),
			want: Route{Action: string(domain.TasksReview), Options: []string{string(domain.TasksReview), string(domain.CompleteTaskTDD)},
				Why: "standalone mode (next_phase is null) after post-tasks-review: more than one action fits; pick one"},
		},
		{
			name:  "standalone new plan",
			s:     mkState(domain.NewPlan, "", 0, -1, "opus", 0),
			files: files("plan.md"),
			want: Route{Action: string(domain.PlanReview), Options: []string{string(domain.PlanReview), string(domain.CreateTasks)},
				Why: "standalone mode (next_phase is null) after new-plan: more than one action fits; pick one"},
		},
		{
			name:  "standalone implementing",
			s:     mkState(domain.NextTask, "", 1, 0, "opus", 0),
			files: base,
			want: Route{Action: string(domain.CodeReview), Task: 1, Options: []string{string(domain.CodeReview), string(domain.ContinueTask), string(domain.CompleteTask)},
				Why: "standalone mode (next_phase is null) after next-task: more than one action fits; pick one"},
		},
		{
			name:     "standalone implementing with unfinished subtasks",
			s:        mkState(domain.NextTask, "", 1, 0, "opus", 0),
			files:    base,
			subtasks: []string{"pending"},
			want:     Route{Action: string(domain.ContinueTask), Task: 1, Why: "task 1 has unfinished subtasks"},
		},
		{
			name:  "standalone code review without its post-review",
			s:     mkState(domain.CodeReview, "", 1, 2, "opus", 0),
			files: plus("task-1-review-1.md", "task-1-post-review-1.md", "task-1-review-2.md"),
			want:  Route{Action: string(domain.PostCodeReview), Task: 1, Why: "code-review iteration 2 has no post-review yet"},
		},
		{
			name:  "standalone final review",
			s:     mkState(domain.PostAllCodeReview, "", 3, 1, "opus", 0),
			files: plus("all-code-review-1.md", "all-code-post-review-1.md"),
			want: Route{Action: string(domain.AllCodeReview), Task: 3, Options: []string{string(domain.AllCodeReview), "add-task"},
				Why: "standalone mode (next_phase is null) after post-all-code-review: more than one action fits; pick one"},
		},
		{
			name:  "standalone after the post-review of a finished task: the next pending task",
			s:     mkState(domain.PostCodeReview, "", 1, 2, "opus", 2),
			files: plus("task-1-review-1.md", "task-1-post-review-1.md", "task-1-review-2.md", "task-1-post-review-2.md"),
			tasks: tasks("done", "pending", "pending"),
			want: Route{Action: string(domain.CompleteTask), Task: 2, Command: "taskie start 2",
				Why: "task 1 is done; task 2 is the next pending task"},
		},
		{
			name:  "standalone tdd, current task cancelled",
			s:     tdd(mkState(domain.NextTaskTDD, "", 2, 0, "opus", 0)),
			files: base,
			tasks: tasks("done", "cancelled", "pending"),
			want: Route{Action: string(domain.CompleteTaskTDD), Task: 3, Command: "taskie start 3",
				Why: "task 2 is cancelled; task 3 is the next pending task"},
		},
		{
			name:  "standalone, current task done and none pending",
			s:     mkState(domain.PostCodeReview, "", 3, 2, "opus", 2),
			files: base,
			tasks: tasks("done", "cancelled", "done"),
			want: Route{Action: string(domain.AllCodeReview), Options: []string{string(domain.AllCodeReview), AddTask},
				Why: "task 3 is done and no pending task remains; run the all-code review or add a task"},
		},
		{
			name:  "standalone without tasks.md, current task completed in its lifecycle",
			s:     completed(mkState(domain.CodeReview, "", 1, 2, "opus", 2), 1),
			files: files("plan.md", "task-1-review-1.md", "task-1-post-review-1.md", "task-1-review-2.md", "task-1-post-review-2.md"),
			want: Route{Action: string(domain.AllCodeReview), Options: []string{string(domain.AllCodeReview), AddTask},
				Why: "task 1 is completed and no pending task remains; run the all-code review or add a task"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Route
			unchanged(t, tc.s, func() { got = Continue(tc.files.facts(tc.s, tc.tasks, tc.subtasks), nil) })
			if diff := cmp.Diff(tc.want, got, routeOpts); diff != "" {
				t.Errorf("Continue (-want +got):\n%s", diff)
			}
			if tc.repair == nil {
				if got.Repair != nil {
					t.Errorf("unexpected repair %+v", got.Repair)
				}
				return
			}
			diffState(t, "repair", tc.repair, got.Repair)
		})
	}
}

// The crash repair uses the configured model rotation.
func TestContinueRepairUsesModels(t *testing.T) {
	s := mkState(domain.NewPlan, domain.PlanReview, 0, 0, "m1", 0)
	got := Continue(files("plan.md", "plan-review-1.md").facts(s, nil, nil), []domain.Model{"m1", "m2"})
	diffState(t, "repair", mkState(domain.PlanReview, domain.PostPlanReview, 0, 1, "m2", 0), got.Repair)
}

// `taskie continue --json` writes the task as state.json does: "3", and
// leaves it out when there is none.
func TestRouteJSONTask(t *testing.T) {
	for _, tc := range []struct {
		r    Route
		want string
	}{
		{Route{Action: string(domain.ContinueTask), Task: 3, Why: "w"}, `{"action":"continue-task","task":"3","why":"w"}`},
		{Route{Action: EndTurn, Why: "w"}, `{"action":"end-turn","why":"w"}`},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.r, b, err, tc.want)
		}
	}
}

// A Mark is kept in the session memory; its task is written "3" as before
// the task id was typed, and a file of an older taskie still reads.
func TestMarkJSON(t *testing.T) {
	b, err := json.Marshal(Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2})
	if want := `{"Phase":"code-review","Task":"3","Iteration":2}`; err != nil || string(b) != want {
		t.Errorf("Marshal = %s, %v; want %s", b, err, want)
	}
	for in, want := range map[string]Mark{
		`{"Phase":"code-review","Task":"3","Iteration":2}`: {Phase: domain.CodeReview, Task: 3, Iteration: 2},
		`{"Phase":"plan-review","Iteration":1}`:            {Phase: domain.PlanReview, Iteration: 1},
		// Written by an older taskie for a plan-wide review: the value is
		// refused (json reports it) but the rest of the mark is read.
		`{"Phase":"plan-review","Task":"","Iteration":1}`: {Phase: domain.PlanReview, Iteration: 1},
	} {
		var got Mark
		_ = json.Unmarshal([]byte(in), &got)
		if got != want {
			t.Errorf("Unmarshal(%s) = %+v, want %+v", in, got, want)
		}
	}
}

// A review file whose reviewer's hook was killed (REVIEW_STARTED with no
// end in the log) is never adopted as a review: no repair, no post-review.
func TestContinueOrphanReviewIsNotAdopted(t *testing.T) {
	s := mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0)
	for _, tc := range []struct {
		name   string
		files  planFiles
		orphan bool
		want   Route
		repair bool
	}{
		{name: "an orphan's file", files: files("plan.md", "plan-review-1.md"), orphan: true,
			want: Route{Action: EndTurn, Why: "plan-review iteration 1 on disk was left by a reviewer whose hook was killed, so it is no review and is not recorded; end your turn; the Stop hook sets it aside and reviews again"}},
		{name: "an orphan's file and a post-review written from it", files: files("plan.md", "plan-review-1.md", "plan-post-review-1.md"), orphan: true,
			want: Route{Action: EndTurn, Why: "plan-review iteration 1 on disk was left by a reviewer whose hook was killed, so it is no review and is not recorded; end your turn; the Stop hook sets it aside and reviews again"}},
		{name: "a finished reviewer's file, state not updated: adopted", files: files("plan.md", "plan-review-1.md"),
			want: Route{Action: string(domain.PostPlanReview), Command: "taskie done post-plan-review",
				Why: "plan-review iteration 1 was written but state.json was not updated (taskie continue records it; the verdict is lost); do the post-review"}, repair: true},
		{name: "an orphan that wrote nothing: the review is due", files: files("plan.md"), orphan: true,
			want: Route{Action: EndTurn, Why: "plan-review iteration 1 is due: end your turn and the Stop hook runs it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.files.facts(s, nil, nil)
			if tc.orphan {
				f.Orphans = []ReviewAt{{Review: domain.PlanReview, Task: 0, N: 1}}
			}
			got := Continue(f, nil)
			if diff := cmp.Diff(tc.want, got, routeOpts); diff != "" {
				t.Errorf("Continue (-want +got):\n%s", diff)
			}
			if (got.Repair != nil) != tc.repair {
				t.Errorf("repair = %+v, want one: %v", got.Repair, tc.repair)
			}
		})
	}
}

// A phase_iteration outside 0…max_reviews is never used to compute an
// iteration (no "iteration -4 is due", no overflow): continue asks for it
// to be fixed, suggesting the highest review on disk.
func TestContinueIterationOutOfRange(t *testing.T) {
	const maxInt = int(^uint(0) >> 1)
	at := func(phase, next domain.Phase, it, maxReviews int) *state.State {
		return with(mkState(phase, next, 0, 0, "opus", 0), func(s *state.State) { s.PhaseIteration, s.MaxReviews = state.Int(it), maxReviews })
	}
	pf := files("plan.md", "plan-review-1.md", "plan-post-review-1.md", "plan-review-2.md")
	for _, tc := range []struct {
		name string
		s    *state.State
		want Route
	}{
		{"negative, review next", at(domain.PostPlanReview, domain.PlanReview, -5, 8), fixRoute(-5, 8, domain.PlanReview, 2)},
		{"huge, review next", at(domain.PostPlanReview, domain.PlanReview, maxInt, 8), fixRoute(maxInt, 8, domain.PlanReview, 2)},
		{"one over max_reviews", at(domain.PostPlanReview, domain.PlanReview, 9, 8), fixRoute(9, 8, domain.PlanReview, 2)},
		{"negative, post-review next", at(domain.PlanReview, domain.PostPlanReview, -1, 8), fixRoute(-1, 8, domain.PlanReview, 2)},
		{"the suggestion is capped at max_reviews", at(domain.PostPlanReview, domain.PlanReview, -5, 1), fixRoute(-5, 1, domain.PlanReview, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Continue(pf.facts(tc.s, nil, nil), nil)
			if diff := cmp.Diff(tc.want, got, routeOpts); diff != "" {
				t.Errorf("Continue (-want +got):\n%s", diff)
			}
			if got.Repair != nil {
				t.Errorf("unexpected repair %+v", got.Repair)
			}
		})
	}
}

func fixRoute(it, maxReviews int, review domain.Phase, n int) Route {
	return Route{Action: Fix, Command: "taskie set phase_iteration " + strconv.Itoa(n),
		Why: "phase_iteration is " + strconv.Itoa(it) + ", outside 0…" + strconv.Itoa(maxReviews) + " (max_reviews): state.json is illegal and no review runs until it is fixed; set it to the " +
			string(review) + " iteration the plan is at (" + strconv.Itoa(n) + " is the highest review file on disk), or rebuild the state with `taskie recover`"}
}

// Codex runs taskie's actions as skills: a route printed for it names
// $taskie-<action>, never /taskie:<action>.
func TestRouteTextNamesTheAgentsActions(t *testing.T) {
	post := mkState(domain.CodeReview, domain.PostCodeReview, 1, 1, "opus", 0)
	done := mkState(domain.Complete, "", 3, 2, "opus", 2)
	pf := files("plan.md", "tasks.md", "task-1.md", "task-1-review-1.md")
	for _, tc := range []struct {
		agent     Agent
		s         *state.State
		want, not string
	}{
		{ClaudeCode, post, "action: /taskie:post-code-review\n", "$taskie-"},
		{"", post, "action: /taskie:post-code-review\n", "$taskie-"},
		{Codex, post, "action: $taskie-post-code-review\n", "/taskie:"},
		{ClaudeCode, done, "add a task with /taskie:add-task to go on", "$taskie-"},
		{Codex, done, "add a task with $taskie-add-task to go on", "/taskie:"},
		{Shell, post, "run:  taskie done post-code-review\n", "action:"},
		{Shell, done, "add a task with `taskie task add --title …` to go on", "/taskie:"},
	} {
		f := pf.facts(tc.s, tasks("in-progress"), nil)
		f.Agent = tc.agent
		text := Continue(f, nil).Text()
		if !strings.Contains(text, tc.want) || strings.Contains(text, tc.not) {
			t.Errorf("agent %q, phase %s: text\n%s\nwant %q and no %q", tc.agent, tc.s.Phase, text, tc.want, tc.not)
		}
	}
}

func TestAgentFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want Agent
	}{
		{nil, Shell},
		{map[string]string{"CODEX_THREAD_ID": ""}, Shell},
		{map[string]string{"TASKIE_SESSION_ID": "5c1e"}, ClaudeCode},
		{map[string]string{"CLAUDECODE": "1"}, ClaudeCode},
		{map[string]string{"CODEX_THREAD_ID": "01a2"}, Codex},
		{map[string]string{"CODEX_THREAD_ID": "01a2", "TASKIE_SESSION_ID": "01a2"}, Codex},
		{map[string]string{"CODEX_THREAD_ID": "01a2", "CLAUDECODE": "1"}, ClaudeCode},
		{map[string]string{"CODEX_THREAD_ID": "01a2", "TASKIE_SESSION_ID": "5c1e"}, ClaudeCode},
	} {
		if got := AgentFromEnv(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("AgentFromEnv(%v) = %s, want %s", tc.env, got, tc.want)
		}
	}
}

// A user at a terminal runs taskie commands, not an agent's actions.
func TestShellRef(t *testing.T) {
	for _, tc := range []struct {
		action string
		task   domain.TaskID
		want   string
	}{
		{string(domain.PlanReview), 0, "taskie review --kind plan"},
		{string(domain.TasksReview), 0, "taskie review --kind tasks"},
		{string(domain.CodeReview), 3, "taskie review --kind code --task 3"},
		{string(domain.CodeReview), 0, "taskie review --kind code"},
		{string(domain.AllCodeReview), 0, "taskie review --kind all-code"},
		{string(domain.PostPlanReview), 0, "taskie done post-plan-review"},
		{string(domain.PostCodeReview), 2, "taskie done post-code-review"},
		{string(domain.NewPlan), 0, "taskie done new-plan"},
		{string(domain.CreateTasks), 0, "taskie task add --title …"},
		{AddTask, 0, "taskie task add --title …"},
		{string(domain.CompleteTask), 4, "taskie start 4"},
		{string(domain.CompleteTaskTDD), 0, "taskie start T"},
		{string(domain.NextTask), 2, "taskie start 2"},
		{string(domain.ContinueTask), 2, "taskie context 2"},
		{string(domain.ContinueTask), 0, "taskie context"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Shell.RefTask(tc.action, tc.task)); diff != "" {
				t.Errorf("Shell.RefTask(%s, %s) (-want +got):\n%s", tc.action, tc.task, diff)
			}
		})
	}
}

// The shell reads the log for orphaned reviews only when a review file of
// the next iteration is on disk: the only case Continue looks at them.
func TestRouteOrphansMatter(t *testing.T) {
	due := mkState(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0)
	for _, tc := range []struct {
		name  string
		s     *state.State
		files planFiles
		want  bool
	}{
		{name: "no state", files: files("plan.md", "plan-review-1.md")},
		{name: "review due, its file absent", s: due, files: files("plan.md")},
		{name: "review due, its file on disk", s: due, files: files("plan.md", "plan-review-1.md"), want: true},
		{name: "an earlier iteration's file only", s: mkState(domain.PostPlanReview, domain.PlanReview, 0, 1, "opus", 0),
			files: files("plan.md", "plan-review-1.md", "plan-post-review-1.md")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RouteOrphansMatter(tc.files.facts(tc.s, nil, nil)); got != tc.want {
				t.Errorf("RouteOrphansMatter = %v, want %v", got, tc.want)
			}
		})
	}
}
