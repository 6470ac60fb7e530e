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
