package parallel

import (
	"encoding/json"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Result statuses a subagent reports.
const (
	ResultComplete = "complete"
	ResultFailed   = "failed"
	// ResultRetry is not reported by a subagent: it records that a task
	// was claimed again deliberately (claim --retry), which sets aside its
	// earlier results and restarts its failure count.
	ResultRetry = "retry"
)

// Result is a subagent's one-line reference to its task output (docs/parallel.md#results-and-retries).
type Result struct {
	Task   domain.TaskID `json:"task"`
	Commit string        `json:"commit"`
	Status string        `json:"status"`
	// Output is the task's output file (task-T-output.md, relative to the
	// repository root), where a complete result's details are.
	Output string `json:"output,omitempty"`
}

// ResultRef returns the one-line reference a subagent returns:
// {"task":3,"commit":"…","status":"complete"}, without a newline.
func ResultRef(task domain.TaskID, commit, status string) string {
	return ResultRefTo(task, commit, status, "")
}

// ResultRefTo is ResultRef pointing to the task's output file:
// {"task":3,"commit":"…","status":"complete","output":"…/task-3-output.md"}.
func ResultRefTo(task domain.TaskID, commit, status, output string) string {
	b, err := json.Marshal(Result{Task: task, Commit: commit, Status: status, Output: output})
	if err != nil { // cannot happen: an int and strings
		panic(err)
	}
	return string(b)
}
