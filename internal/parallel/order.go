package parallel

import (
	"cmp"
	"slices"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
)

// ranking is the scheduling order of a task list.
type ranking struct {
	g    *graph
	open []bool          // not done or cancelled, and not a duplicate row
	eff  []int           // inherited priority
	from []domain.TaskID // the task eff was inherited from; 0 when its own
}

func newRanking(g *graph) *ranking { return newRankingExcept(g, nil) }

// newRankingExcept ranks the tasks, leaving out (as if closed) those whose
// index out reports; out may be nil.
func newRankingExcept(g *graph, out []Aside) *ranking {
	n := len(g.tasks)
	r := &ranking{g: g, open: make([]bool, n), eff: make([]int, n), from: make([]domain.TaskID, n)}
	for i, t := range g.tasks {
		r.open[i] = g.idx[t.ID] == i && !closed(t) && (out == nil || out[i] == 0)
		r.eff[i] = t.Priority
	}
	r.inherit()
	return r
}

// inherit lowers each open task's rank to the best rank of the open tasks
// that wait on it, visiting dependents before their dependencies (Kahn's
// algorithm on the reversed graph). Tasks on a cycle keep what reached
// them; Check reports the cycle.
func (r *ranking) inherit() {
	g := r.g
	waiting := make([]int, len(g.tasks)) // open dependents not yet visited, by edge
	var buf []int
	for i := range g.tasks {
		if !r.open[i] {
			continue
		}
		for _, d := range g.deps(i, buf) {
			waiting[d]++
		}
	}
	queue := make([]int, 0, len(g.tasks))
	for i := range g.tasks {
		if r.open[i] && waiting[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, d := range g.deps(v, buf) {
			if !r.open[d] {
				continue
			}
			if r.eff[v] < r.eff[d] {
				r.eff[d], r.from[d] = r.eff[v], cmp.Or(r.from[v], g.tasks[v].ID)
			}
			if waiting[d]--; waiting[d] == 0 {
				queue = append(queue, d)
			}
		}
	}
}

// compare orders task indexes i and j: tasks in progress first (work is
// under way), then inherited priority, own priority and id.
func (r *ranking) compare(i, j int) int {
	a, b := r.g.tasks[i], r.g.tasks[j]
	return cmp.Or(cmp.Compare(started(b), started(a)), cmp.Compare(r.eff[i], r.eff[j]),
		cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.ID, b.ID))
}

// started is 1 for a task in progress, for sorting.
func started(t Task) int {
	if t.Status == plan.StatusInProgress {
		return 1
	}
	return 0
}

// sort orders task indexes by compare.
func (r *ranking) sort(idx []int) { slices.SortFunc(idx, r.compare) }
