package parallel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Wave is a group of tasks that can run at the same time.
type Wave struct {
	Number int // 1-based
	Tasks  []Placement
}

// IDs returns the ids of the wave's tasks, in placement order.
func (w Wave) IDs() []domain.TaskID {
	ids := make([]domain.TaskID, len(w.Tasks))
	for i, p := range w.Tasks {
		ids[i] = p.Task.ID
	}
	return ids
}

// Placement is a task in a wave and why it is there, for --verbose:
// "wave 2: depends on 1 (wave 1)", "moved to wave 3: shares internal/a.go
// with task 4", "moved to wave 4: wave 3 full (5)".
type Placement struct {
	Task    Task
	Reasons []string
}

// Groups splits the tasks that are not done or cancelled into waves:
// every task comes after the waves of its dependencies, no two tasks of a
// wave share a file (see NormPath for directories), and a wave holds at
// most max tasks (max ≤ 0 is domain.DefaultGroupSize).
//
// The schedule is greedy: wave by wave, the tasks whose dependencies are
// all in earlier waves (or done, or cancelled) are taken in scheduling
// order — in progress first, then inherited priority, own priority, id —
// each joining the wave unless it is full or the task shares a file with
// a task already in it; a task left out waits for the next wave. Tasks
// are therefore reordered freely where dependencies allow. Each wave
// holds at least one task, so the waves number at most the tasks.
//
// Duplicate ids, unknown dependencies and cycles are a *ValidationError.
func Groups(tasks []Task, max int) ([]Wave, error) {
	if max <= 0 {
		max = domain.DefaultGroupSize
	}
	if ps := Check(tasks); len(ps) > 0 {
		return nil, &ValidationError{Problems: ps}
	}
	return newScheduler(tasks, max).run()
}

// scheduler holds the state of one Groups call; tasks are referred to by
// index.
type scheduler struct {
	g          *graph
	r          *ranking
	max        int
	files      [][]string // normalised file set per task
	wave       []int      // wave per task, 0 until placed
	earliest   []int      // first wave its dependencies allowed
	waiting    []int      // open dependencies not yet placed
	dependents [][]int    // open tasks waiting on each task
	clashes    [][]clash  // waves a task was turned away from for a file
	ready      []int      // tasks that may be placed, in scheduling order
	spare      []int      // the other buffer of ready, for merging

	// The current wave's files.
	owner map[string]int // path → task
	paths []pathOwner    // every path, in order, for directory checks
	dirs  []pathOwner    // directories only
}

type pathOwner struct {
	path string
	task int
}

// clash records that a task could not join a wave because its file mine
// overlaps theirs, of task other.
type clash struct {
	wave         int
	mine, theirs string
	other        int
}

func newScheduler(tasks []Task, max int) *scheduler {
	n := len(tasks)
	g := newGraph(tasks)
	s := &scheduler{
		g: g, r: newRanking(g), max: max,
		files: make([][]string, n), wave: make([]int, n), earliest: make([]int, n),
		waiting: make([]int, n), dependents: make([][]int, n), clashes: make([][]clash, n),
		owner: make(map[string]int),
	}
	var buf []int
	for i, t := range tasks {
		if !s.r.open[i] {
			continue
		}
		s.files[i] = normFiles(t.Files)
		for _, d := range g.deps(i, buf) {
			if s.r.open[d] {
				s.waiting[i]++
				s.dependents[d] = append(s.dependents[d], i)
			}
		}
		if s.waiting[i] == 0 {
			s.earliest[i] = 1
			s.ready = append(s.ready, i)
		}
	}
	s.r.sort(s.ready)
	return s
}

// normFiles normalises a file set, dropping empties and repeats.
func normFiles(files []string) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		if p := NormPath(f); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func (s *scheduler) run() ([]Wave, error) {
	left := 0
	for i := range s.g.tasks {
		if s.r.open[i] {
			left++
		}
	}
	var waves []Wave
	for w := 1; left > 0; w++ {
		members := s.fill(w)
		if len(members) == 0 {
			return nil, fmt.Errorf("wave %d: no task can be placed, %d left", w, left)
		}
		left -= len(members)
		s.advance(w, members)
		wave := Wave{Number: w, Tasks: make([]Placement, len(members))}
		for k, i := range members {
			wave.Tasks[k] = Placement{Task: s.g.tasks[i], Reasons: s.reasons(i)}
		}
		waves = append(waves, wave)
	}
	return waves, nil
}

// fill places ready tasks in wave w, in order, until it is full.
func (s *scheduler) fill(w int) []int {
	clear(s.owner)
	s.paths, s.dirs = s.paths[:0], s.dirs[:0]
	members := make([]int, 0, s.max)
	for _, i := range s.ready {
		if len(members) == s.max {
			break
		}
		if c, found := s.clash(i); found {
			c.wave = w
			s.clashes[i] = append(s.clashes[i], c)
			continue
		}
		s.take(i)
		s.wave[i] = w
		members = append(members, i)
	}
	return members
}

// clash finds the first of task i's files that overlaps a file of the
// current wave.
func (s *scheduler) clash(i int) (clash, bool) {
	for _, f := range s.files[i] {
		if o, ok := s.owner[f]; ok {
			return clash{mine: f, theirs: f, other: o}, true
		}
		others := s.dirs
		if isDir(f) {
			others = s.paths
		}
		for _, p := range others {
			if covers(p.path, f) || covers(f, p.path) {
				return clash{mine: f, theirs: p.path, other: p.task}, true
			}
		}
	}
	return clash{}, false
}

// take adds task i's files to the current wave.
func (s *scheduler) take(i int) {
	for _, f := range s.files[i] {
		s.owner[f] = i
		s.paths = append(s.paths, pathOwner{f, i})
		if isDir(f) {
			s.dirs = append(s.dirs, pathOwner{f, i})
		}
	}
}

func isDir(p string) bool { return strings.HasSuffix(p, "/") }

// covers reports whether p is dir or lies under it; "./" is the whole
// repository.
func covers(dir, p string) bool {
	return isDir(dir) && (dir == "./" || strings.HasPrefix(p, dir))
}

// advance removes wave w's members from the ready list and adds the tasks
// they release, which may join wave w+1.
func (s *scheduler) advance(w int, members []int) {
	kept := s.ready[:0]
	for _, i := range s.ready {
		if s.wave[i] == 0 {
			kept = append(kept, i)
		}
	}
	var released []int
	for _, m := range members {
		for _, d := range s.dependents[m] {
			if s.waiting[d]--; s.waiting[d] == 0 {
				s.earliest[d] = w + 1
				released = append(released, d)
			}
		}
	}
	s.r.sort(released)
	s.ready, s.spare = s.merge(kept, released, s.spare[:0]), s.ready
}

// merge merges two lists sorted in scheduling order into out.
func (s *scheduler) merge(a, b, out []int) []int {
	for len(a) > 0 && len(b) > 0 {
		if s.r.compare(a[0], b[0]) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}
