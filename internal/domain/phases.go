package domain

import "slices"

// Phases lists every phase value state.json may hold in "phase", in the
// order a plan goes through them.
var Phases = []Phase{NewPlan, PlanReview, PostPlanReview, CreateTasks,
	TasksReview, PostTasksReview, NextTask, NextTaskTDD, ContinueTask,
	CodeReview, PostCodeReview, AllCodeReview, PostAllCodeReview, Complete}

// Reviews lists the review phases.
var Reviews = []Phase{PlanReview, TasksReview, CodeReview, AllCodeReview}

var postOf = map[Phase]Phase{
	PlanReview:    PostPlanReview,
	TasksReview:   PostTasksReview,
	CodeReview:    PostCodeReview,
	AllCodeReview: PostAllCodeReview,
}

// IsPhase reports whether p is a legal value of "phase".
func IsPhase(p Phase) bool { return slices.Contains(Phases, p) }

// IsNextPhase reports whether p is a legal non-null value of "next_phase".
func IsNextPhase(p Phase) bool { return IsPhase(p) || IsAdvanceTarget(p) }

// IsAdvanceTarget reports whether p means "implement the next pending task".
func IsAdvanceTarget(p Phase) bool {
	return p == CompleteTask || p == CompleteTaskTDD
}

// IsReview reports whether p is one of the four review phases.
func IsReview(p Phase) bool { _, ok := postOf[p]; return ok }

// PostReview returns the post-review phase of a review ("" for other phases).
func PostReview(review Phase) Phase { return postOf[review] }

// ReviewOf returns the review a post-review phase follows ("" otherwise).
func ReviewOf(post Phase) Phase {
	for r, p := range postOf {
		if p == post {
			return r
		}
	}
	return ""
}

// IsPostReview reports whether p is a post-review phase.
func IsPostReview(p Phase) bool { return ReviewOf(p) != "" }

// IsImplementing reports whether p is a phase in which a task is being coded.
func IsImplementing(p Phase) bool {
	return p == NextTask || p == NextTaskTDD || p == ContinueTask
}
