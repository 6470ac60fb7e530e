package plan

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// baseFileOf names the file a review is about (rule 4). all-code reviews
// are about the task table.
func baseFileOf(fn FileName) string {
	switch fn.Base {
	case "task":
		return TaskFile(fn.Task)
	case "all-code":
		return "tasks.md"
	}
	return fn.Base + ".md"
}

// checkBases is rule 4.
func (v *validator) checkBases() {
	for _, f := range v.md {
		if f.fn.Kind != KindReview {
			continue
		}
		if !v.hasBase(f.fn) {
			v.add(4, f.name, 0, "%s reviews %s, which is missing", f.name, baseFileOf(f.fn))
		}
	}
}

// hasBase reports whether the file a review is about exists (baseFileOf).
func (v *validator) hasBase(fn FileName) bool {
	switch fn.Base {
	case "task":
		return v.taskFiles[fn.Task]
	case "all-code", "tasks":
		return v.hasTasks
	case "plan":
		return v.hasPlan
	case "design":
		return v.hasDesign
	}
	return false
}

// seriesKey identifies a review series: reviews of one file.
type seriesKey struct {
	base string
	task int
}

// seriesFile is a review or post-review file of a series; legacy and
// current names count alike.
type seriesFile struct {
	k    seriesKey
	rank int // of k.base, to sort by numbers only
	n    int
	post bool
	name string
}

// baseRank orders the review bases (ParseFileName knows these five).
func baseRank(base string) int {
	switch base {
	case "all-code":
		return 0
	case "design":
		return 1
	case "plan":
		return 2
	case "task":
		return 3
	case "tasks":
		return 4
	}
	return 5
}

// seriesName is the current-style name of a series file, for messages.
func seriesName(k seriesKey, kind string, n int) string {
	prefix := k.base
	if k.base == "task" {
		prefix = "task-" + strconv.Itoa(k.task)
	}
	return prefix + "-" + kind + "-" + strconv.Itoa(n) + ".md"
}

// checkSeries is rule 5. The files are sorted into series rather than
// kept in maps: the hook validates at every stop, in a fresh process
// where each allocation costs a page.
func (v *validator) checkSeries() {
	files := make([]seriesFile, 0, len(v.md))
	for _, f := range v.md {
		if f.fn.Kind == KindReview || f.fn.Kind == KindPostReview {
			files = append(files, seriesFile{seriesKey{f.fn.Base, f.fn.Task}, baseRank(f.fn.Base), f.fn.N, f.fn.Kind == KindPostReview, f.name})
		}
	}
	sortSeries(files)
	for i := 0; i < len(files); {
		j, latest := i, 0
		for ; j < len(files) && files[j].k == files[i].k; j++ {
			if !files[j].post {
				latest = max(latest, files[j].n)
			}
		}
		v.checkOneSeries(files[i:j], latest)
		i = j
	}
}

// sortSeries sorts series files by base, task and iteration. The usual
// plan (task ids below 2^28, iterations below 2^14, fewer than 2^19 files)
// sorts one number per file, its key above its index: a plan of 10,000
// tasks sorts 50,000 review files, and moving their 64-byte records
// through a comparison function was most of validating it.
func sortSeries(files []seriesFile) {
	packable := len(files) < 1<<19
	for _, f := range files {
		if !packable || f.k.task >= 1<<28 || f.n >= 1<<14 || f.rank > 7 {
			packable = false
			break
		}
	}
	if !packable {
		slices.SortFunc(files, func(a, b seriesFile) int {
			switch {
			case a.rank != b.rank:
				return cmp.Compare(a.rank, b.rank)
			case a.k.task != b.k.task:
				return cmp.Compare(a.k.task, b.k.task)
			}
			return cmp.Compare(a.n, b.n)
		})
		return
	}
	keys := make([]uint64, len(files))
	for i, f := range files {
		keys[i] = uint64(f.rank)<<61 | uint64(f.k.task)<<33 | uint64(f.n)<<19 | uint64(i)
	}
	slices.Sort(keys)
	sorted := make([]seriesFile, len(files))
	for i, k := range keys {
		sorted[i] = files[k&(1<<19-1)]
	}
	copy(files, sorted)
}

// checkOneSeries checks one series, sorted by iteration.
func (v *validator) checkOneSeries(fs []seriesFile, latest int) {
	has := func(n int, post bool) bool {
		return slices.ContainsFunc(fs, func(f seriesFile) bool { return f.n == n && f.post == post })
	}
	for _, f := range fs {
		switch {
		case f.post && !has(f.n, false):
			v.add(5, f.name, 0, "%s has no review %s", f.name, seriesName(f.k, "review", f.n))
		case !f.post && f.n < latest && !has(f.n, true):
			v.add(5, f.name, 0, "%s is followed by review %d but has no post-review %s", f.name, latest, seriesName(f.k, "post-review", f.n))
		}
	}
}

// checkTaskFiles is rule 6, reported once on the missing tasks.md.
func (v *validator) checkTaskFiles() {
	if v.hasTasks {
		return
	}
	var first string
	count := 0
	for _, f := range v.md {
		if f.fn.Task > 0 {
			if first == "" || f.name < first {
				first = f.name // the first by name, in whatever order the entries come
			}
			count++
		}
	}
	switch {
	case count == 1:
		v.add(6, "tasks.md", 0, "tasks.md is missing, but %s exists", first)
	case count > 1:
		v.add(6, "tasks.md", 0, "tasks.md is missing, but %s and %d other task files exist", first, count-1)
	}
}

// checkTable is rule 7: every tasks.md parse problem, then the
// dependencies (unknown ids, cycles).
func (v *validator) checkTable() {
	if !v.hasTasks {
		return
	}
	if !v.in.HasTasks {
		v.add(7, "tasks.md", 0, "cannot read tasks.md")
		return
	}
	ts, problems := v.in.Table, v.in.TaskProblems
	if !v.in.TasksParsed || ts == nil {
		ts, problems = ParseTasks(v.in.Tasks)
	}
	for _, p := range problems {
		v.add(7, "tasks.md", p.Line, "%s", p.Msg)
	}
	v.checkDeps(ts)
}

// checkState is rule 8; its findings never block (docs/validation.md).
func (v *validator) checkState(check func([]byte) []string) {
	if check == nil || !v.present["state.json"] {
		return
	}
	if !v.in.HasState {
		v.warn(8, "state.json", "cannot read state.json")
		return
	}
	for _, msg := range check(v.in.State) {
		v.warn(8, "state.json", msg)
	}
}

// checkDeps is rule 7's dependency part: every id in a Depends on cell is
// a task of the table, and no tasks wait on each other. Either makes the
// plan impossible to run in order or in parallel (no task of a cycle can
// ever start), so both are errors.
func (v *validator) checkDeps(ts *Tasks) {
	if ts == nil || len(ts.Tasks) == 0 {
		return
	}
	idx := make(map[int]int, len(ts.Tasks)) // id → first row
	for i, t := range ts.Tasks {
		if _, dup := idx[t.ID]; !dup {
			idx[t.ID] = i
		}
	}
	var known string
	for i, t := range ts.Tasks {
		if idx[t.ID] != i {
			continue // a repeated id: reported by the table check
		}
		for _, d := range t.DependsOn {
			if _, ok := idx[d]; ok {
				continue
			}
			if known == "" {
				known = IDRanges(ts.IDs())
			}
			v.add(7, "tasks.md", t.Line, "task %d depends on unknown task %d (the tasks are %s): fix its Depends on cell", t.ID, d, known)
		}
	}
	for _, c := range depCycles(ts.Tasks, idx) {
		ids := make([]string, len(c))
		for i, r := range c {
			ids[i] = strconv.Itoa(ts.Tasks[r].ID)
		}
		v.add(7, "tasks.md", ts.Tasks[c[0]].Line,
			"dependency cycle: %s (read \"depends on\"): none of these tasks can ever start; remove one of these dependencies from the Depends on column",
			strings.Join(ids, " → "))
	}
}

// depCycles returns one cycle per group of tasks that wait on each other,
// as row indexes from the group's first row back to it (Cycles).
func depCycles(tasks []Task, idx map[int]int) [][]int {
	deps := func(v int) []int {
		var out []int
		for _, d := range tasks[v].DependsOn {
			if w, ok := idx[d]; ok {
				out = append(out, w)
			}
		}
		return out
	}
	return Cycles(len(tasks), deps, func(v int) bool { return idx[tasks[v].ID] == v }, func(a, b int) bool { return a < b })
}

// IDRanges writes task ids compactly, sorted, each once: "1–8, 10".
func IDRanges[T ~int](ids []T) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return "none"
	}
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(ids[i])))
		if j > i {
			b.WriteString("–" + strconv.Itoa(int(ids[j])))
		}
		i = j + 1
	}
	return b.String()
}
