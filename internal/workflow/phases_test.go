package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPhaseClassification(t *testing.T) {
	type class struct {
		Phase, Next, Advance, Review, Post, Implementing bool
		Stage                                            string
		PostReview, ReviewOf                             string
	}
	tests := map[string]class{
		NewPlan:           {Phase: true, Next: true, Stage: "Planning"},
		PlanReview:        {Phase: true, Next: true, Review: true, Stage: "Plan review", PostReview: PostPlanReview},
		PostPlanReview:    {Phase: true, Next: true, Post: true, Stage: "Plan review", ReviewOf: PlanReview},
		CreateTasks:       {Phase: true, Next: true, Stage: "Task creation"},
		TasksReview:       {Phase: true, Next: true, Review: true, Stage: "Task review", PostReview: PostTasksReview},
		PostTasksReview:   {Phase: true, Next: true, Post: true, Stage: "Task review", ReviewOf: TasksReview},
		NextTask:          {Phase: true, Next: true, Implementing: true, Stage: "Implementation"},
		NextTaskTDD:       {Phase: true, Next: true, Implementing: true, Stage: "Implementation"},
		ContinueTask:      {Phase: true, Next: true, Implementing: true, Stage: "Implementation"},
		CodeReview:        {Phase: true, Next: true, Review: true, Stage: "Implementation", PostReview: PostCodeReview},
		PostCodeReview:    {Phase: true, Next: true, Post: true, Stage: "Implementation", ReviewOf: CodeReview},
		AllCodeReview:     {Phase: true, Next: true, Review: true, Stage: "Final review", PostReview: PostAllCodeReview},
		PostAllCodeReview: {Phase: true, Next: true, Post: true, Stage: "Final review", ReviewOf: AllCodeReview},
		Complete:          {Phase: true, Next: true, Stage: "Complete"},
		CompleteTask:      {Next: true, Advance: true, Stage: "Unknown"},
		CompleteTaskTDD:   {Next: true, Advance: true, Stage: "Unknown"},
		"":                {Stage: "Unknown"},
		"Plan-Review":     {Stage: "Unknown"},
	}
	for p, want := range tests {
		got := class{
			Phase: IsPhase(p), Next: IsNextPhase(p), Advance: IsAdvanceTarget(p), Review: IsReview(p),
			Post: IsPostReview(p), Implementing: IsImplementing(p), Stage: Stage(p),
			PostReview: PostReview(p), ReviewOf: ReviewOf(p),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", p, diff)
		}
	}
	if len(Phases) != 14 {
		t.Errorf("len(Phases) = %d, want the 14 phases of SPEC §4", len(Phases))
	}
	if diff := cmp.Diff([]string{PlanReview, TasksReview, CodeReview, AllCodeReview}, Reviews); diff != "" {
		t.Errorf("Reviews (-want +got):\n%s", diff)
	}
}

func TestImplementPhaseAndTaskTarget(t *testing.T) {
	if got := ImplementPhase(false); got != NextTask {
		t.Errorf("ImplementPhase(false) = %q", got)
	}
	if got := ImplementPhase(true); got != NextTaskTDD {
		t.Errorf("ImplementPhase(true) = %q", got)
	}
	if got := TaskTarget(false); got != CompleteTask {
		t.Errorf("TaskTarget(false) = %q", got)
	}
	if got := TaskTarget(true); got != CompleteTaskTDD {
		t.Errorf("TaskTarget(true) = %q", got)
	}
}

func TestModelRotation(t *testing.T) {
	tests := []struct {
		models []string
		cur    string
		next   string
	}{
		{nil, "opus", "sonnet"},
		{nil, "sonnet", "opus"},
		{nil, "haiku", "opus"}, // not in the rotation: start over
		{nil, "", "opus"},
		{[]string{"a", "b", "c"}, "a", "b"},
		{[]string{"a", "b", "c"}, "c", "a"},
		{[]string{"a", "b", "c"}, "opus", "a"},
		{[]string{"only"}, "only", "only"},
	}
	for _, tc := range tests {
		if got := NextModel(tc.models, tc.cur); got != tc.next {
			t.Errorf("NextModel(%v, %q) = %q, want %q", tc.models, tc.cur, got, tc.next)
		}
	}
	if got := FirstModel(nil); got != "opus" {
		t.Errorf("FirstModel(nil) = %q", got)
	}
	if got := FirstModel([]string{"x", "y"}); got != "x" {
		t.Errorf("FirstModel([x y]) = %q", got)
	}
}
