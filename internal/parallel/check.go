package parallel

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
)

// ProblemKind says what is wrong with the task graph.
type ProblemKind int

// Problem kinds.
const (
	UnknownDependency ProblemKind = iota + 1 // a Depends on id that is no task
	DependencyCycle                          // tasks that wait on each other
	DuplicateTask                            // one id given twice
	UnknownPriority                          // a Priority cell that is not a priority
)

// Problem is something that stops the tasks from being scheduled, or that
// was guessed (an unknown priority). Msg starts with its subject: "task 3:
// …" or "dependency cycle: …".
type Problem struct {
	Task  domain.TaskID // the task concerned; for a cycle, its smallest id
	Kind  ProblemKind
	Cycle []domain.TaskID // a cycle, first id repeated at the end: 1 → 3 → 1
	Msg   string
}

func (p Problem) String() string { return p.Msg }

// ValidationError is returned when the task graph cannot be scheduled: a
// dependency on an unknown id, a cycle or a duplicate id.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Msg
	}
	return strings.Join(msgs, "; ")
}

// Check returns every problem that makes the tasks impossible to
// schedule: duplicate ids, dependencies on unknown ids and dependency
// cycles, in that order, each in task order. Cycles are named from their
// smallest id, arrows reading "depends on": "dependency cycle: 1 → 3 → 1".
func Check(tasks []Task) []Problem {
	g := newGraph(tasks)
	var ps []Problem
	for _, id := range g.dups {
		ps = append(ps, Problem{Task: id, Kind: DuplicateTask, Msg: fmt.Sprintf("task %d: listed more than once", id)})
	}
	for _, t := range tasks {
		for _, d := range t.Deps {
			if _, ok := g.idx[d]; !ok {
				ps = append(ps, Problem{Task: t.ID, Kind: UnknownDependency,
					Msg: fmt.Sprintf("task %d: depends on unknown task %d (known: %s)", t.ID, d, plan.IDRanges(slices.Collect(maps.Keys(g.idx))))})
			}
		}
	}
	for _, c := range g.cycles() {
		ps = append(ps, Problem{Task: c[0], Kind: DependencyCycle, Cycle: c, Msg: "dependency cycle: " + arrows(c)})
	}
	return ps
}

// graph indexes tasks by id; edges go from a task to its dependencies.
type graph struct {
	tasks []Task
	idx   map[domain.TaskID]int // id → index of its first occurrence
	dups  []domain.TaskID
}

func newGraph(tasks []Task) *graph {
	g := &graph{tasks: tasks, idx: make(map[domain.TaskID]int, len(tasks))}
	for i, t := range tasks {
		if _, dup := g.idx[t.ID]; dup {
			if !slices.Contains(g.dups, t.ID) {
				g.dups = append(g.dups, t.ID)
			}
			continue
		}
		g.idx[t.ID] = i
	}
	return g
}

// deps returns the indexes of i's known dependencies.
func (g *graph) deps(i int, buf []int) []int {
	buf = buf[:0]
	for _, d := range g.tasks[i].Deps {
		if j, ok := g.idx[d]; ok {
			buf = append(buf, j)
		}
	}
	return buf
}

// cycles returns one cycle per group of tasks that wait on each other,
// ordered by the group's smallest id (plan.Cycles).
func (g *graph) cycles() [][]domain.TaskID {
	byIndex := plan.Cycles(len(g.tasks), func(v int) []int { return g.deps(v, nil) },
		func(v int) bool { return g.idx[g.tasks[v].ID] == v }, // duplicates are skipped
		func(a, b int) bool { return g.tasks[a].ID < g.tasks[b].ID })
	out := make([][]domain.TaskID, len(byIndex))
	for i, c := range byIndex {
		out[i] = make([]domain.TaskID, len(c))
		for j, v := range c {
			out[i][j] = g.tasks[v].ID
		}
	}
	return out
}

// arrows writes ids joined by " → ".
func arrows(ids []domain.TaskID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return strings.Join(parts, " → ")
}
