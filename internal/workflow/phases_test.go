package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func TestPhaseClassification(t *testing.T) {
	type class struct {
		Phase, Next, Advance, Review, Post, Implementing bool
		Stage                                            string
		PostReview, ReviewOf                             domain.Phase
	}
	tests := map[domain.Phase]class{
		domain.NewPlan:           {Phase: true, Next: true, Stage: "Planning"},
		domain.PlanReview:        {Phase: true, Next: true, Review: true, Stage: "Plan review", PostReview: domain.PostPlanReview},
		domain.PostPlanReview:    {Phase: true, Next: true, Post: true, Stage: "Plan review", ReviewOf: domain.PlanReview},
		domain.CreateTasks:       {Phase: true, Next: true, Stage: "Task creation"},
		domain.TasksReview:       {Phase: true, Next: true, Review: true, Stage: "Task review", PostReview: domain.PostTasksReview},
		domain.PostTasksReview:   {Phase: true, Next: true, Post: true, Stage: "Task review", ReviewOf: domain.TasksReview},
		domain.NextTask:          {Phase: true, Next: true, Implementing: true, Stage: "Implementation"},
		domain.NextTaskTDD:       {Phase: true, Next: true, Implementing: true, Stage: "Implementation"},
		domain.ContinueTask:      {Phase: true, Next: true, Implementing: true, Stage: "Implementation"},
		domain.CodeReview:        {Phase: true, Next: true, Review: true, Stage: "Implementation", PostReview: domain.PostCodeReview},
		domain.PostCodeReview:    {Phase: true, Next: true, Post: true, Stage: "Implementation", ReviewOf: domain.CodeReview},
		domain.AllCodeReview:     {Phase: true, Next: true, Review: true, Stage: "Final review", PostReview: domain.PostAllCodeReview},
		domain.PostAllCodeReview: {Phase: true, Next: true, Post: true, Stage: "Final review", ReviewOf: domain.AllCodeReview},
		domain.Complete:          {Phase: true, Next: true, Stage: "Complete"},
		domain.CompleteTask:      {Next: true, Advance: true, Stage: "Unknown"},
		domain.CompleteTaskTDD:   {Next: true, Advance: true, Stage: "Unknown"},
		"":                       {Stage: "Unknown"},
		"Plan-Review":            {Stage: "Unknown"},
	}
	for p, want := range tests {
		got := class{
			Phase: domain.IsPhase(p), Next: domain.IsNextPhase(p), Advance: domain.IsAdvanceTarget(p), Review: domain.IsReview(p),
			Post: domain.IsPostReview(p), Implementing: domain.IsImplementing(p), Stage: Stage(p),
			PostReview: domain.PostReview(p), ReviewOf: domain.ReviewOf(p),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", p, diff)
		}
	}
	if len(domain.Phases) != 14 {
		t.Errorf("len(domain.Phases) = %d, want the 14 phases of docs/state-machine.md", len(domain.Phases))
	}
	if diff := cmp.Diff([]domain.Phase{domain.PlanReview, domain.TasksReview, domain.CodeReview, domain.AllCodeReview}, domain.Reviews); diff != "" {
		t.Errorf("Reviews (-want +got):\n%s", diff)
	}
}

func TestImplementPhaseAndTaskTarget(t *testing.T) {
	if got := ImplementPhase(false); got != domain.NextTask {
		t.Errorf("ImplementPhase(false) = %q", got)
	}
	if got := ImplementPhase(true); got != domain.NextTaskTDD {
		t.Errorf("ImplementPhase(true) = %q", got)
	}
	if got := TaskTarget(false); got != domain.CompleteTask {
		t.Errorf("TaskTarget(false) = %q", got)
	}
	if got := TaskTarget(true); got != domain.CompleteTaskTDD {
		t.Errorf("TaskTarget(true) = %q", got)
	}
}

func TestModelRotation(t *testing.T) {
	tests := []struct {
		models []domain.Model
		cur    domain.Model
		next   domain.Model
	}{
		{nil, "opus", "sonnet"},
		{nil, "sonnet", "opus"},
		{nil, "haiku", "opus"}, // not in the rotation: start over
		{nil, "", "opus"},
		{[]domain.Model{"a", "b", "c"}, "a", "b"},
		{[]domain.Model{"a", "b", "c"}, "c", "a"},
		{[]domain.Model{"a", "b", "c"}, "opus", "a"},
		{[]domain.Model{"only"}, "only", "only"},
	}
	for _, tc := range tests {
		if got := NextModel(tc.models, tc.cur); got != tc.next {
			t.Errorf("NextModel(%v, %q) = %q, want %q", tc.models, tc.cur, got, tc.next)
		}
	}
	if got := FirstModel(nil); got != "opus" {
		t.Errorf("FirstModel(nil) = %q", got)
	}
	if got := FirstModel([]domain.Model{"x", "y"}); got != "x" {
		t.Errorf("FirstModel([x y]) = %q", got)
	}
}
