package workflow

import (
	"fmt"
	"slices"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Move is one legal change of "phase" and why it exists.
type Move struct {
	From, To domain.Phase
	Why      string
}

// Table is the phase machine: every legal change of "phase". Every writer
// (hook, CLI, routing) checks its moves against it. A phase may always be
// re-recorded as itself.
var Table = []Move{
	{domain.NewPlan, domain.PlanReview, "the hook reviews the plan"},
	{domain.NewPlan, domain.CreateTasks, "plan written; tasks created without a plan review"},
	{domain.PlanReview, domain.PostPlanReview, "the agent addressed the plan review"},
	{domain.PlanReview, domain.CreateTasks, "plan review passed; tasks created"},
	{domain.PostPlanReview, domain.PlanReview, "the hook reviews the plan again"},
	{domain.PostPlanReview, domain.CreateTasks, "tasks created"},
	{domain.CreateTasks, domain.TasksReview, "the hook reviews the tasks"},
	{domain.CreateTasks, domain.NextTask, "task started without a tasks review"},
	{domain.CreateTasks, domain.NextTaskTDD, "task started test-first without a tasks review"},
	{domain.TasksReview, domain.PostTasksReview, "the agent addressed the tasks review"},
	{domain.TasksReview, domain.NextTask, "tasks review passed; task started"},
	{domain.TasksReview, domain.NextTaskTDD, "tasks review passed; task started test-first"},
	{domain.PostTasksReview, domain.TasksReview, "the hook reviews the tasks again"},
	{domain.PostTasksReview, domain.NextTask, "task started"},
	{domain.PostTasksReview, domain.NextTaskTDD, "task started test-first"},
	{domain.NextTask, domain.CodeReview, "the hook reviews the code"},
	{domain.NextTask, domain.ContinueTask, "implementation resumed"},
	{domain.NextTask, domain.NextTask, "another task started"},
	{domain.NextTask, domain.NextTaskTDD, "another task started test-first"},
	{domain.NextTask, domain.AllCodeReview, "all code reviewed by hand after the last task"},
	{domain.NextTaskTDD, domain.CodeReview, "the hook reviews the code"},
	{domain.NextTaskTDD, domain.ContinueTask, "implementation resumed"},
	{domain.NextTaskTDD, domain.NextTask, "another task started"},
	{domain.NextTaskTDD, domain.AllCodeReview, "all code reviewed by hand after the last task"},
	{domain.ContinueTask, domain.CodeReview, "the hook reviews the code"},
	{domain.ContinueTask, domain.NextTask, "another task started"},
	{domain.ContinueTask, domain.NextTaskTDD, "another task started test-first"},
	{domain.ContinueTask, domain.AllCodeReview, "all code reviewed by hand after the last task"},
	{domain.CodeReview, domain.PostCodeReview, "the agent addressed the code review"},
	{domain.CodeReview, domain.NextTask, "code review passed; next task started"},
	{domain.CodeReview, domain.NextTaskTDD, "code review passed; next task started test-first"},
	{domain.CodeReview, domain.AllCodeReview, "last task passed; the hook reviews all code"},
	{domain.CodeReview, domain.ContinueTask, "implementation resumed"},
	{domain.PostCodeReview, domain.CodeReview, "the hook reviews the code again"},
	{domain.PostCodeReview, domain.ContinueTask, "implementation resumed"},
	{domain.PostCodeReview, domain.NextTask, "next task started"},
	{domain.PostCodeReview, domain.NextTaskTDD, "next task started test-first"},
	{domain.PostCodeReview, domain.AllCodeReview, "all tasks done; the hook reviews all code"},
	{domain.AllCodeReview, domain.PostAllCodeReview, "the agent addressed the all-code review"},
	{domain.AllCodeReview, domain.Complete, "all-code review passed"},
	{domain.PostAllCodeReview, domain.AllCodeReview, "the hook reviews all code again"},
	{domain.PostAllCodeReview, domain.Complete, "plan finished"},
	{domain.Complete, domain.NextTask, "a task added after completion"},
	{domain.Complete, domain.NextTaskTDD, "a task added after completion, test-first"},
	{domain.Complete, domain.AllCodeReview, "all code reviewed again after completion"},
}

// Legal reports whether phase may change from → to.
func Legal(from, to domain.Phase) bool {
	if from == to && domain.IsPhase(to) {
		return true
	}
	return slices.ContainsFunc(Table, func(m Move) bool { return m.From == from && m.To == to })
}

// LegalFrom lists the phases reachable from a phase, in table order.
func LegalFrom(from domain.Phase) []domain.Phase {
	var out []domain.Phase
	for _, m := range Table {
		if m.From == from {
			out = append(out, m.To)
		}
	}
	return out
}

// AutoNext returns next_phase after recording phase p in automated mode: the
// review that follows work, the review again after a post-review, or "".
func AutoNext(p domain.Phase) domain.Phase {
	switch {
	case p == domain.NewPlan:
		return domain.PlanReview
	case p == domain.CreateTasks:
		return domain.TasksReview
	case domain.IsImplementing(p):
		return domain.CodeReview
	case domain.IsReview(p):
		return domain.PostReview(p)
	case domain.IsPostReview(p):
		return domain.ReviewOf(p)
	}
	return ""
}

// CheckMove returns an error listing the legal moves when from → to is not.
func CheckMove(from, to domain.Phase) error {
	if !domain.IsPhase(to) {
		if s := Nearest(string(to), phaseNames(domain.Phases)); s != "" {
			return fmt.Errorf("unknown phase %q; did you mean %q?", to, s)
		}
		return fmt.Errorf("unknown phase %q; phases are %s", to, quoteList(domain.Phases))
	}
	if from == "" || Legal(from, to) {
		return nil
	}
	if !domain.IsPhase(from) {
		return fmt.Errorf("current phase %q is unknown; set a known phase first (phases are %s)", from, quoteList(domain.Phases))
	}
	legal := LegalFrom(from)
	if !slices.Contains(legal, from) {
		legal = append([]domain.Phase{from}, legal...)
	}
	if len(legal) == 0 {
		return fmt.Errorf("cannot move from %q to %q: %q has no moves", from, to, from)
	}
	return fmt.Errorf("cannot move from %q to %q; legal moves from %q: %s", from, to, from, quoteList(legal))
}

func phaseNames(ps []domain.Phase) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// Nearest returns the candidate nearest to s when it is near enough to be
// a likely typo, else "" (domain.Nearest). Phases, fields, commands and
// topics use it for "did you mean".
func Nearest(s string, candidates []string) string { return domain.Nearest(s, candidates) }
