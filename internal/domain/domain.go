// Package domain holds taskie's vocabulary as types — phases, review kinds,
// verdicts, task ids, models, severities — and every default in one place.
// It imports nothing of taskie's and does no I/O.
package domain

import (
	"fmt"
	"strconv"
	"strings"
)

// Phase is a value of state.json's "phase" or "next_phase".
type Phase string

// Phases, in the order a plan goes through them.
const (
	NewPlan           Phase = "new-plan"
	PlanReview        Phase = "plan-review"
	PostPlanReview    Phase = "post-plan-review"
	CreateTasks       Phase = "create-tasks"
	TasksReview       Phase = "tasks-review"
	PostTasksReview   Phase = "post-tasks-review"
	NextTask          Phase = "next-task"
	NextTaskTDD       Phase = "next-task-tdd"
	ContinueTask      Phase = "continue-task"
	CodeReview        Phase = "code-review"
	PostCodeReview    Phase = "post-code-review"
	AllCodeReview     Phase = "all-code-review"
	PostAllCodeReview Phase = "post-all-code-review"
	Complete          Phase = "complete"

	// Advance targets: only valid in next_phase.
	CompleteTask    Phase = "complete-task"
	CompleteTaskTDD Phase = "complete-task-tdd"
)

// Verdict is a reviewer's answer; "" means no readable verdict.
type Verdict string

// Verdicts.
const (
	Pass Verdict = "PASS"
	Fail Verdict = "FAIL"
)

// TaskID is a task's id: a positive integer; 0 means no task.
type TaskID int

// ParseTaskID reads a task id as users and files write it ("3", " 3 "):
// plain decimal digits around optional white space, so "+3", "3.0" and "0"
// are refused.
func ParseTaskID(s string) (TaskID, error) {
	t := strings.TrimSpace(s)
	if t == "" || strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, fmt.Errorf("task id %q is not a positive integer", s)
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("task id %q is not a positive integer", s)
	}
	return TaskID(n), nil
}

// String returns the id as written in files ("" for no task).
func (t TaskID) String() string {
	if t <= 0 {
		return ""
	}
	return strconv.Itoa(int(t))
}

// Model names a review model, optionally with its reviewer ("codex:gpt-5.5").
type Model string

// Severity ranks a review finding.
type Severity string

// Severities, most serious first.
const (
	Blocker Severity = "blocker"
	Major   Severity = "major"
	Minor   Severity = "minor"
	Nit     Severity = "nit"
)
