package plan

import (
	"strconv"
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
		if base := baseFileOf(f.fn); !v.mdSet[base] {
			v.add(4, f.name, 0, "%s reviews %s, which is missing", f.name, base)
		}
	}
}

// seriesKey identifies a review series: reviews of one file.
type seriesKey struct {
	base string
	task int
}

// series holds the review and post-review files of one series by
// iteration; legacy and current names count alike.
type series struct {
	reviews map[int]string
	posts   map[int]string
	latest  int
}

// seriesName is the current-style name of a series file, for messages.
func seriesName(k seriesKey, kind string, n int) string {
	prefix := k.base
	if k.base == "task" {
		prefix = "task-" + strconv.Itoa(k.task)
	}
	return prefix + "-" + kind + "-" + strconv.Itoa(n) + ".md"
}

// checkSeries is rule 5.
func (v *validator) checkSeries() {
	all := map[seriesKey]*series{}
	var order []seriesKey
	for _, f := range v.md {
		if f.fn.Kind != KindReview && f.fn.Kind != KindPostReview {
			continue
		}
		k := seriesKey{f.fn.Base, f.fn.Task}
		s := all[k]
		if s == nil {
			s = &series{reviews: map[int]string{}, posts: map[int]string{}}
			all[k] = s
			order = append(order, k)
		}
		if f.fn.Kind == KindPostReview {
			s.posts[f.fn.N] = f.name
			continue
		}
		s.reviews[f.fn.N] = f.name
		s.latest = max(s.latest, f.fn.N)
	}
	for _, k := range order {
		v.checkOneSeries(k, all[k])
	}
}

func (v *validator) checkOneSeries(k seriesKey, s *series) {
	for n, post := range s.posts {
		if s.reviews[n] == "" {
			v.add(5, post, 0, "%s has no review %s", post, seriesName(k, "review", n))
		}
	}
	for n, review := range s.reviews {
		if n < s.latest && s.posts[n] == "" {
			v.add(5, review, 0, "%s is followed by review %d but has no post-review %s", review, s.latest, seriesName(k, "post-review", n))
		}
	}
}

// checkTaskFiles is rule 6, reported once on the missing tasks.md.
func (v *validator) checkTaskFiles() {
	if v.mdSet["tasks.md"] {
		return
	}
	var first string
	count := 0
	for _, f := range v.md {
		if f.fn.Task > 0 {
			if first == "" {
				first = f.name
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

// checkTable is rule 7: every tasks.md parse problem.
func (v *validator) checkTable() {
	if !v.mdSet["tasks.md"] {
		return
	}
	if !v.in.HasTasks {
		v.add(7, "tasks.md", 0, "cannot read tasks.md")
		return
	}
	problems := v.in.TaskProblems
	if !v.in.TasksParsed {
		_, problems = ParseTasks(v.in.Tasks)
	}
	for _, p := range problems {
		v.add(7, "tasks.md", p.Line, "%s", p.Msg)
	}
}

// checkState is rule 8; its findings never block (§7).
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
