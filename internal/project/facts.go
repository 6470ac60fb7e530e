package project

import (
	"os"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// files lists the plan directory's file names once, parsed.
func (p *Plan) files() []plan.FileName {
	entries, _ := os.ReadDir(p.Dir)
	out := make([]plan.FileName, 0, len(entries))
	for _, e := range entries {
		if fn := plan.ParseFileName(e.Name()); fn.Kind != plan.KindUnknown {
			out = append(out, fn)
		}
	}
	return out
}

// baseOf maps a review phase to the file base ParseFileName reports.
func baseOf(review string) string {
	if review == workflow.CodeReview {
		return "task"
	}
	return strings.TrimSuffix(review, "-review")
}

// latest returns a function giving the highest review iteration on disk.
func (p *Plan) latest() func(review string, task int) int {
	var fns []plan.FileName
	loaded := false
	return func(review string, task int) int {
		if !loaded {
			fns, loaded = p.files(), true
		}
		best := 0
		for _, fn := range fns {
			if fn.Kind == plan.KindReview && fn.Base == baseOf(review) && fn.Task == task && fn.N > best {
				best = fn.N
			}
		}
		return best
	}
}

// TaskFacts converts tasks.md rows for the workflow.
func TaskFacts(ts *plan.Tasks) []workflow.TaskFact {
	if ts == nil {
		return nil
	}
	out := make([]workflow.TaskFact, len(ts.Tasks))
	for i, t := range ts.Tasks {
		out[i] = workflow.TaskFact{ID: t.ID, Status: t.StatusNorm()}
	}
	return out
}

// Subtasks returns the lower-case subtask statuses of task-T.md.
func (p *Plan) Subtasks(task string) []string {
	t, err := strconv.Atoi(task)
	if err != nil {
		return nil
	}
	data, err := os.ReadFile(p.Path(plan.TaskFile(t)))
	if err != nil {
		return nil
	}
	var out []string
	for _, st := range plan.ParseSubtasks(data) {
		out = append(out, strings.ToLower(strings.TrimSpace(st.Status)))
	}
	return out
}

// RouteFacts gathers what `taskie continue` needs; s may be nil.
func (p *Plan) RouteFacts(s *state.State) workflow.RouteFacts {
	ts, _, _ := p.Tasks()
	f := workflow.RouteFacts{
		State:    s,
		HasPlan:  p.Exists("plan.md"),
		HasTasks: ts != nil,
		Tasks:    TaskFacts(ts),
		ReviewExists: func(review string, task, n int) bool {
			return plan.ReviewFileExists(p.Dir, review, task, n)
		},
		PostExists: func(review string, task, n int) bool {
			return plan.PostReviewFileExists(p.Dir, review, task, n)
		},
		Latest: p.latest(),
	}
	if s != nil {
		f.Subtasks = p.Subtasks(s.Task())
	}
	return f
}

// PendingOther reports whether a pending task other than current remains.
func PendingOther(ts *plan.Tasks, current string) bool {
	if ts == nil {
		return false
	}
	cur, _ := strconv.Atoi(current)
	_, ok := ts.NextPending(cur)
	return ok
}

// AnyTaskFile reports whether a task file named in tasks.md exists.
func (p *Plan) AnyTaskFile(ts *plan.Tasks) bool {
	if ts == nil {
		return false
	}
	for _, t := range ts.Tasks {
		if p.Exists(plan.TaskFile(t.ID)) {
			return true
		}
	}
	return false
}

// TaskFiles lists the task files named in tasks.md that exist.
func (p *Plan) TaskFiles(ts *plan.Tasks) []string {
	var out []string
	if ts == nil {
		return out
	}
	for _, t := range ts.Tasks {
		if name := plan.TaskFile(t.ID); p.Exists(name) {
			out = append(out, name)
		}
	}
	return out
}
