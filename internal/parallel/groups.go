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
	waves, _, err := GroupsAside(tasks, max, nil)
	return waves, err
}

// Aside says why a task is kept out of the waves although it is open.
type Aside int

// Reasons to set a task aside.
const (
	// AsideFailed: the task failed past its retries (failed_tasks). It is
	// left out, and so is every open task that waits on it, directly or
	// not: none of them can start until a person decides.
	AsideFailed Aside = iota + 1
	// AsideFinished: the task's result is complete and waits to be merged
	// and marked done. It is left out, and the tasks that wait on it are
	// planned as if it were done: no agent must take it again, and it must
	// not hold a wave slot or its files.
	AsideFinished
	// asideBehind marks a task left out because it waits on a failed one
	// (or one with a human).
	asideBehind
	// asideHuman marks a task in human_escalation (StandingOf: WithHuman),
	// left out with the tasks that wait on it, like a failed one.
	asideHuman
)

// anyWithHuman reports whether some task is in human_escalation.
func anyWithHuman(tasks []Task) bool {
	for _, t := range tasks {
		if t.standing() == WithHuman {
			return true
		}
	}
	return false
}

// Omitted is a task GroupsAside left out of the waves, and why.
type Omitted struct {
	Task   Task
	Reason string
}

// GroupsAside is Groups with some tasks set aside (see Aside); it also
// returns the tasks it left out, in task order, each with its reason. The
// graph is still checked whole: a cycle through a task set aside is an
// error too.
func GroupsAside(tasks []Task, max int, aside map[domain.TaskID]Aside) ([]Wave, []Omitted, error) {
	if max <= 0 {
		max = domain.DefaultGroupSize
	}
	if ps := Check(tasks); len(ps) > 0 {
		return nil, nil, &ValidationError{Problems: ps}
	}
	s := newScheduler(tasks, max, aside)
	waves, err := s.run()
	if err != nil {
		return nil, nil, err
	}
	return waves, s.omitted(), nil
}

// scheduler holds the state of one Groups call; tasks are referred to by
// index.
type scheduler struct {
	g          *graph
	out        []Aside         // why each task is set aside; 0 when it is not
	behind     []domain.TaskID // for asideBehind: the failed task it waits on
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

	// Files are interned: fids[i] are task i's files as indexes into
	// stamp and own, so the check of a file against the current wave is
	// two array reads, not a map lookup (a task turned away is checked
	// again at every wave).
	fids  [][]int32
	stamp []int32 // the wave that last took each file
	own   []int32 // the task that took it
	cur   int32   // the wave being filled

	// The current wave's paths, for directory checks.
	paths []pathOwner // every path, in order
	dirs  []pathOwner // directories only
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

func newScheduler(tasks []Task, max int, aside map[domain.TaskID]Aside) *scheduler {
	n := len(tasks)
	g := newGraph(tasks)
	out, behind := setAside(g, aside)
	s := &scheduler{
		g: g, r: newRankingExcept(g, out), max: max, out: out, behind: behind,
		files: make([][]string, n), wave: make([]int, n), earliest: make([]int, n),
		waiting: make([]int, n), dependents: make([][]int, n), clashes: make([][]clash, n),
		fids: make([][]int32, n),
	}
	ids := make(map[string]int32)
	var buf []int
	for i, t := range tasks {
		if !s.r.open[i] {
			continue
		}
		s.files[i] = normFiles(t.Files)
		s.fids[i] = make([]int32, len(s.files[i]))
		for k, f := range s.files[i] {
			id, ok := ids[f]
			if !ok {
				id = int32(len(ids))
				ids[f] = id
			}
			s.fids[i][k] = id
		}
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
	s.stamp, s.own = make([]int32, len(ids)), make([]int32, len(ids))
	return s
}

// setAside marks, per task index, why an open task is left out: the
// tasks named in aside, then every open task that waits on a failed one,
// transitively (breadth-first over the dependents, so each names the
// nearest failed task on its way). Nil when nothing is set aside.
func setAside(g *graph, aside map[domain.TaskID]Aside) ([]Aside, []domain.TaskID) {
	if len(aside) == 0 && !anyWithHuman(g.tasks) {
		return nil, nil
	}
	n := len(g.tasks)
	out, behind := make([]Aside, n), make([]domain.TaskID, n)
	var queue []int
	for i, t := range g.tasks {
		if g.idx[t.ID] != i || closed(t) {
			continue
		}
		a := aside[t.ID]
		if t.standing() == WithHuman {
			a = asideHuman
		}
		switch a {
		case AsideFinished:
			out[i] = AsideFinished
		case AsideFailed, asideHuman:
			out[i], behind[i] = a, t.ID
			queue = append(queue, i)
		}
	}
	if len(queue) == 0 {
		return out, behind
	}
	dependents := make([][]int, n)
	var buf []int
	for i := range g.tasks {
		for _, d := range g.deps(i, buf) {
			dependents[d] = append(dependents[d], i)
		}
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range dependents[v] {
			if out[w] == 0 && g.idx[g.tasks[w].ID] == w && !closed(g.tasks[w]) {
				out[w], behind[w] = asideBehind, behind[v]
				queue = append(queue, w)
			}
		}
	}
	return out, behind
}

// omitted lists the tasks set aside, in task order, with their reasons.
func (s *scheduler) omitted() []Omitted {
	var list []Omitted
	for i, a := range s.out {
		var why string
		switch a {
		case AsideFailed:
			why = "in failed_tasks (retries exhausted): left out until a person decides"
		case AsideFinished:
			why = "result complete, waiting to be merged and marked done: left out; the tasks waiting on it are planned as if it were done"
		case asideHuman:
			why = "in human_escalation: left out until a person decides (`taskie task resolve " + s.g.tasks[i].ID.String() + " --actor human`)"
		case asideBehind:
			why = "waits on failed task " + s.behind[i].String() + ": left out"
			if j, ok := s.g.idx[s.behind[i]]; ok && s.out[j] == asideHuman {
				why = "waits on task " + s.behind[i].String() + ", in human_escalation: left out"
			}
		default:
			continue
		}
		list = append(list, Omitted{Task: s.g.tasks[i], Reason: why})
	}
	return list
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
	s.cur = int32(w)
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
	for k, f := range s.files[i] {
		if id := s.fids[i][k]; s.stamp[id] == s.cur {
			return clash{mine: f, theirs: f, other: int(s.own[id])}, true
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
	for k, f := range s.files[i] {
		id := s.fids[i][k]
		s.stamp[id], s.own[id] = s.cur, int32(i)
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
