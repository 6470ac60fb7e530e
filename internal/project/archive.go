package project

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// startsCycle reports whether cur opens a fresh review cycle: a review is
// next at iteration 0, and the review, the task or the iteration moved.
func startsCycle(old, cur *state.State) bool {
	r := cur.Next()
	if !workflow.IsReview(r) || cur.Iteration() != 0 {
		return false
	}
	return old.Next() != r || old.Task() != cur.Task() || old.Iteration() != 0
}

// archiveSeries moves the review and post-review files of an earlier cycle
// of the same series (a reopened task, a second all-code review) out of the
// plan directory, so the new cycle numbers its files from 1 again without
// overwriting them or mistaking them for its own. Nothing is deleted.
func (p *Plan) archiveSeries(review string, task int, now time.Time) (*events.Event, error) {
	entries, err := os.ReadDir(p.Dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		fn := plan.ParseFileName(e.Name())
		if (fn.Kind == plan.KindReview || fn.Kind == plan.KindPostReview) && fn.Base == baseOf(review) && fn.Task == task {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	series := review
	if task > 0 {
		series = "task-" + strconv.Itoa(task) + "-" + review
	}
	base := filepath.Join(p.Repo.TaskieDir(), "archive", p.ID, series+"-"+now.UTC().Format("20060102T150405Z"))
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	dir := base
	for i := 1; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !os.IsExist(err) || i > 100 {
			return nil, err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
	for i, n := range names {
		if err := os.Rename(p.Path(n), filepath.Join(dir, n)); err != nil {
			for _, back := range names[:i] { // all or nothing
				_ = os.Rename(filepath.Join(dir, back), p.Path(back))
			}
			return nil, err
		}
	}
	rel, _ := filepath.Rel(p.Repo.Root, dir)
	return &events.Event{Event: events.ReviewsArchived, Task: strconv.Itoa(task), Reason: "a new " + review + " cycle starts",
		Meta: map[string]any{"files": names, "dir": filepath.ToSlash(rel)}}, nil
}
