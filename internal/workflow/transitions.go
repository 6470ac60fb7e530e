package workflow

import (
	"fmt"
	"slices"
)

// Move is one legal change of "phase" and why it exists.
type Move struct {
	From, To, Why string
}

// Table is the phase machine: every legal change of "phase". Every writer
// (hook, CLI, routing) checks its moves against it. A phase may always be
// re-recorded as itself.
var Table = []Move{
	{NewPlan, PlanReview, "the hook reviews the plan"},
	{NewPlan, CreateTasks, "plan written; tasks created without a plan review"},
	{PlanReview, PostPlanReview, "the agent addressed the plan review"},
	{PlanReview, CreateTasks, "plan review passed; tasks created"},
	{PostPlanReview, PlanReview, "the hook reviews the plan again"},
	{PostPlanReview, CreateTasks, "tasks created"},
	{CreateTasks, TasksReview, "the hook reviews the tasks"},
	{CreateTasks, NextTask, "task started without a tasks review"},
	{CreateTasks, NextTaskTDD, "task started test-first without a tasks review"},
	{TasksReview, PostTasksReview, "the agent addressed the tasks review"},
	{TasksReview, NextTask, "tasks review passed; task started"},
	{TasksReview, NextTaskTDD, "tasks review passed; task started test-first"},
	{PostTasksReview, TasksReview, "the hook reviews the tasks again"},
	{PostTasksReview, NextTask, "task started"},
	{PostTasksReview, NextTaskTDD, "task started test-first"},
	{NextTask, CodeReview, "the hook reviews the code"},
	{NextTask, ContinueTask, "implementation resumed"},
	{NextTask, NextTask, "another task started"},
	{NextTask, NextTaskTDD, "another task started test-first"},
	{NextTask, AllCodeReview, "all code reviewed by hand after the last task"},
	{NextTaskTDD, CodeReview, "the hook reviews the code"},
	{NextTaskTDD, ContinueTask, "implementation resumed"},
	{NextTaskTDD, NextTask, "another task started"},
	{NextTaskTDD, AllCodeReview, "all code reviewed by hand after the last task"},
	{ContinueTask, CodeReview, "the hook reviews the code"},
	{ContinueTask, NextTask, "another task started"},
	{ContinueTask, NextTaskTDD, "another task started test-first"},
	{ContinueTask, AllCodeReview, "all code reviewed by hand after the last task"},
	{CodeReview, PostCodeReview, "the agent addressed the code review"},
	{CodeReview, NextTask, "code review passed; next task started"},
	{CodeReview, NextTaskTDD, "code review passed; next task started test-first"},
	{CodeReview, AllCodeReview, "last task passed; the hook reviews all code"},
	{CodeReview, ContinueTask, "implementation resumed"},
	{PostCodeReview, CodeReview, "the hook reviews the code again"},
	{PostCodeReview, ContinueTask, "implementation resumed"},
	{PostCodeReview, NextTask, "next task started"},
	{PostCodeReview, NextTaskTDD, "next task started test-first"},
	{PostCodeReview, AllCodeReview, "all tasks done; the hook reviews all code"},
	{AllCodeReview, PostAllCodeReview, "the agent addressed the all-code review"},
	{AllCodeReview, Complete, "all-code review passed"},
	{PostAllCodeReview, AllCodeReview, "the hook reviews all code again"},
	{PostAllCodeReview, Complete, "plan finished"},
	{Complete, NextTask, "a task added after completion"},
	{Complete, NextTaskTDD, "a task added after completion, test-first"},
	{Complete, AllCodeReview, "all code reviewed again after completion"},
}

// Legal reports whether phase may change from → to.
func Legal(from, to string) bool {
	if from == to && IsPhase(to) {
		return true
	}
	return slices.ContainsFunc(Table, func(m Move) bool { return m.From == from && m.To == to })
}

// LegalFrom lists the phases reachable from a phase, in table order.
func LegalFrom(from string) []string {
	var out []string
	for _, m := range Table {
		if m.From == from {
			out = append(out, m.To)
		}
	}
	return out
}

// AutoNext returns next_phase after recording phase p in automated mode: the
// review that follows work, the review again after a post-review, or "".
func AutoNext(p string) string {
	switch {
	case p == NewPlan:
		return PlanReview
	case p == CreateTasks:
		return TasksReview
	case IsImplementing(p):
		return CodeReview
	case IsReview(p):
		return PostReview(p)
	case IsPostReview(p):
		return ReviewOf(p)
	}
	return ""
}

// CheckMove returns an error listing the legal moves when from → to is not.
func CheckMove(from, to string) error {
	if !IsPhase(to) {
		return fmt.Errorf("unknown phase %q; phases are %s", to, quoteList(Phases))
	}
	if from == "" || Legal(from, to) {
		return nil
	}
	if !IsPhase(from) {
		return fmt.Errorf("current phase %q is unknown; set a known phase first (phases are %s)", from, quoteList(Phases))
	}
	legal := LegalFrom(from)
	if !slices.Contains(legal, from) {
		legal = append([]string{from}, legal...)
	}
	if len(legal) == 0 {
		return fmt.Errorf("cannot move from %q to %q: %q has no moves", from, to, from)
	}
	return fmt.Errorf("cannot move from %q to %q; legal moves from %q: %s", from, to, from, quoteList(legal))
}
