package workflow

import (
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
)

// ReviewFiles are the .md files of a plan directory, parsed (plan.ParseFileName):
// a value the shell hands over, in which the decisions look up the review
// and post-review files of a series.
type ReviewFiles []plan.FileName

// Review reports whether review file n of a series exists (task counts
// for code reviews only).
func (r ReviewFiles) Review(review domain.Phase, task domain.TaskID, n int) bool {
	return r.has(plan.KindReview, review, task, n)
}

// Post reports whether post-review file n of a series exists.
func (r ReviewFiles) Post(review domain.Phase, task domain.TaskID, n int) bool {
	return r.has(plan.KindPostReview, review, task, n)
}

// Latest returns the highest review iteration of a series on disk (0: none).
func (r ReviewFiles) Latest(review domain.Phase, task domain.TaskID) int {
	base, t := fileSeries(review, task)
	best := 0
	for _, fn := range r {
		if fn.Kind == plan.KindReview && fn.Base == base && fn.Task == t && fn.N > best {
			best = fn.N
		}
	}
	return best
}

func (r ReviewFiles) has(kind plan.FileKind, review domain.Phase, task domain.TaskID, n int) bool {
	base, t := fileSeries(review, task)
	for _, fn := range r {
		if fn.Kind == kind && fn.Base == base && fn.Task == t && fn.N == n {
			return true
		}
	}
	return false
}

// fileSeries is how plan.ParseFileName names a review series: its file base
// and its task (code reviews only; the other series carry none).
func fileSeries(review domain.Phase, task domain.TaskID) (string, int) {
	if review == domain.CodeReview {
		return "task", int(task)
	}
	return strings.TrimSuffix(string(review), "-review"), 0
}

// ReviewAt is one iteration of a review series, as the log names it (the
// task the hook logged with the review).
type ReviewAt struct {
	Review domain.Phase
	Task   domain.TaskID
	N      int
}
