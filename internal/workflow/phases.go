// Package workflow is the pure core of taskie: phases, the transition table,
// advance targets, model rotation, and the decisions of the Stop hook and of
// `taskie continue`. Nothing here does I/O; the callers gather the facts.
package workflow

import (
	"fmt"
	"slices"
	"strings"
)

// Phases, in the order a plan goes through them (SPEC §4).
const (
	NewPlan           = "new-plan"
	PlanReview        = "plan-review"
	PostPlanReview    = "post-plan-review"
	CreateTasks       = "create-tasks"
	TasksReview       = "tasks-review"
	PostTasksReview   = "post-tasks-review"
	NextTask          = "next-task"
	NextTaskTDD       = "next-task-tdd"
	ContinueTask      = "continue-task"
	CodeReview        = "code-review"
	PostCodeReview    = "post-code-review"
	AllCodeReview     = "all-code-review"
	PostAllCodeReview = "post-all-code-review"
	Complete          = "complete"

	// Advance targets: only valid in next_phase.
	CompleteTask    = "complete-task"
	CompleteTaskTDD = "complete-task-tdd"
)

// Phases lists every phase value state.json may hold in "phase".
var Phases = []string{NewPlan, PlanReview, PostPlanReview, CreateTasks, TasksReview, PostTasksReview,
	NextTask, NextTaskTDD, ContinueTask, CodeReview, PostCodeReview, AllCodeReview, PostAllCodeReview, Complete}

// Reviews lists the review phases.
var Reviews = []string{PlanReview, TasksReview, CodeReview, AllCodeReview}

var postOf = map[string]string{
	PlanReview:    PostPlanReview,
	TasksReview:   PostTasksReview,
	CodeReview:    PostCodeReview,
	AllCodeReview: PostAllCodeReview,
}

// IsPhase reports whether p is a legal value of "phase".
func IsPhase(p string) bool { return slices.Contains(Phases, p) }

// IsNextPhase reports whether p is a legal non-null value of "next_phase".
func IsNextPhase(p string) bool { return IsPhase(p) || IsAdvanceTarget(p) }

// IsAdvanceTarget reports whether p means "implement the next pending task".
func IsAdvanceTarget(p string) bool { return p == CompleteTask || p == CompleteTaskTDD }

// IsReview reports whether p is one of the four review phases.
func IsReview(p string) bool { _, ok := postOf[p]; return ok }

// PostReview returns the post-review phase of a review ("" for other phases).
func PostReview(review string) string { return postOf[review] }

// ReviewOf returns the review a post-review phase follows ("" otherwise).
func ReviewOf(post string) string {
	for r, p := range postOf {
		if p == post {
			return r
		}
	}
	return ""
}

// IsPostReview reports whether p is a post-review phase.
func IsPostReview(p string) bool { return ReviewOf(p) != "" }

// IsImplementing reports whether p is a phase in which a task is being coded.
func IsImplementing(p string) bool { return p == NextTask || p == NextTaskTDD || p == ContinueTask }

// Stage names the part of the plan a phase belongs to.
func Stage(p string) string {
	switch p {
	case NewPlan:
		return "Planning"
	case PlanReview, PostPlanReview:
		return "Plan review"
	case CreateTasks:
		return "Task creation"
	case TasksReview, PostTasksReview:
		return "Task review"
	case NextTask, NextTaskTDD, ContinueTask, CodeReview, PostCodeReview:
		return "Implementation"
	case AllCodeReview, PostAllCodeReview:
		return "Final review"
	case Complete:
		return "Complete"
	}
	return "Unknown"
}

// ImplementPhase returns the implementing phase for a plan (tdd or not).
func ImplementPhase(tdd bool) string {
	if tdd {
		return NextTaskTDD
	}
	return NextTask
}

// TaskTarget returns the advance target that starts the next task.
func TaskTarget(tdd bool) string {
	if tdd {
		return CompleteTaskTDD
	}
	return CompleteTask
}

// DefaultModels is the review model rotation: strongest first.
var DefaultModels = []string{"opus", "sonnet"}

// NextModel returns the model after m in the rotation (the first one when m
// is not in it).
func NextModel(models []string, m string) string {
	if len(models) == 0 {
		models = DefaultModels
	}
	i := slices.Index(models, m)
	return models[(i+1)%len(models)]
}

// FirstModel returns the first model of the rotation.
func FirstModel(models []string) string {
	if len(models) == 0 {
		return DefaultModels[0]
	}
	return models[0]
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
