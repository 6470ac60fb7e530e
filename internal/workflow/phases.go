// Package workflow is the pure core of taskie: phases, the transition table,
// advance targets, model rotation, and the decisions of the Stop hook and of
// `taskie continue`. Nothing here does I/O; the callers gather the facts.
// The vocabulary (phases, verdicts, task ids, models) and the defaults are
// package domain's.
package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Phases lists every phase value state.json may hold in "phase" (SPEC §4),
// in the order a plan goes through them.
var Phases = []domain.Phase{domain.NewPlan, domain.PlanReview, domain.PostPlanReview, domain.CreateTasks,
	domain.TasksReview, domain.PostTasksReview, domain.NextTask, domain.NextTaskTDD, domain.ContinueTask,
	domain.CodeReview, domain.PostCodeReview, domain.AllCodeReview, domain.PostAllCodeReview, domain.Complete}

// Reviews lists the review phases.
var Reviews = []domain.Phase{domain.PlanReview, domain.TasksReview, domain.CodeReview, domain.AllCodeReview}

var postOf = map[domain.Phase]domain.Phase{
	domain.PlanReview:    domain.PostPlanReview,
	domain.TasksReview:   domain.PostTasksReview,
	domain.CodeReview:    domain.PostCodeReview,
	domain.AllCodeReview: domain.PostAllCodeReview,
}

// IsPhase reports whether p is a legal value of "phase".
func IsPhase(p domain.Phase) bool { return slices.Contains(Phases, p) }

// IsNextPhase reports whether p is a legal non-null value of "next_phase".
func IsNextPhase(p domain.Phase) bool { return IsPhase(p) || IsAdvanceTarget(p) }

// IsAdvanceTarget reports whether p means "implement the next pending task".
func IsAdvanceTarget(p domain.Phase) bool {
	return p == domain.CompleteTask || p == domain.CompleteTaskTDD
}

// IsReview reports whether p is one of the four review phases.
func IsReview(p domain.Phase) bool { _, ok := postOf[p]; return ok }

// PostReview returns the post-review phase of a review ("" for other phases).
func PostReview(review domain.Phase) domain.Phase { return postOf[review] }

// ReviewOf returns the review a post-review phase follows ("" otherwise).
func ReviewOf(post domain.Phase) domain.Phase {
	for r, p := range postOf {
		if p == post {
			return r
		}
	}
	return ""
}

// IsPostReview reports whether p is a post-review phase.
func IsPostReview(p domain.Phase) bool { return ReviewOf(p) != "" }

// IsImplementing reports whether p is a phase in which a task is being coded.
func IsImplementing(p domain.Phase) bool {
	return p == domain.NextTask || p == domain.NextTaskTDD || p == domain.ContinueTask
}

// Stage names the part of the plan a phase belongs to.
func Stage(p domain.Phase) string {
	switch p {
	case domain.NewPlan:
		return "Planning"
	case domain.PlanReview, domain.PostPlanReview:
		return "Plan review"
	case domain.CreateTasks:
		return "Task creation"
	case domain.TasksReview, domain.PostTasksReview:
		return "Task review"
	case domain.NextTask, domain.NextTaskTDD, domain.ContinueTask, domain.CodeReview, domain.PostCodeReview:
		return "Implementation"
	case domain.AllCodeReview, domain.PostAllCodeReview:
		return "Final review"
	case domain.Complete:
		return "Complete"
	}
	return "Unknown"
}

// ImplementPhase returns the implementing phase for a plan (tdd or not).
func ImplementPhase(tdd bool) domain.Phase {
	if tdd {
		return domain.NextTaskTDD
	}
	return domain.NextTask
}

// TaskTarget returns the advance target that starts the next task.
func TaskTarget(tdd bool) domain.Phase {
	if tdd {
		return domain.CompleteTaskTDD
	}
	return domain.CompleteTask
}

// NextModel returns the model after m in the rotation (the first one when m
// is not in it); an empty rotation is domain.DefaultModels.
func NextModel(models []domain.Model, m domain.Model) domain.Model {
	if len(models) == 0 {
		models = domain.DefaultModels()
	}
	i := slices.Index(models, m)
	return models[(i+1)%len(models)]
}

// FirstModel returns the first model of the rotation.
func FirstModel(models []domain.Model) domain.Model {
	if len(models) == 0 {
		return domain.DefaultModels()[0]
	}
	return models[0]
}

func quoteList[T ~string](xs []T) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
