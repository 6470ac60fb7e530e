package taskrec

import (
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
)

var (
	created = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now     = created.Add(2 * time.Hour)
)

// table parses a tasks.md made of rows "id|title|status|deps".
func table(t testing.TB, rows ...string) *plan.Tasks {
	t.Helper()
	var b strings.Builder
	b.WriteString("| ID | Title | Status | Depends on |\n|----|-------|--------|------------|\n")
	for _, r := range rows {
		b.WriteString("| " + strings.ReplaceAll(r, "|", " | ") + " |\n")
	}
	ts, probs := plan.ParseTasks([]byte(b.String()))
	if ts == nil {
		t.Fatalf("tasks.md does not parse: %v", probs)
	}
	return ts
}

// rec is a record of task id in state s since at.
func rec(id domain.TaskID, s lifecycle.State, at time.Time) lifecycle.Task {
	return lifecycle.Task{ID: id, State: s, Since: at, Created: created,
		Failures: map[lifecycle.State]int{}, Entered: map[lifecycle.State]time.Duration{}}
}

// gridInput is task 1 with Status cell c and, unless s is "", a record in s.
func gridInput(s lifecycle.State, c string) Input {
	var b strings.Builder
	b.WriteString("| ID | Title | Status |\n|----|-------|--------|\n| 1 | One | " + c + " |\n")
	ts, _ := plan.ParseTasks([]byte(b.String()))
	in := Input{Tasks: ts, Created: created, Now: now}
	if s != "" {
		in.Records = map[domain.TaskID]lifecycle.Task{1: rec(1, s, created.Add(time.Hour))}
	}
	return in
}
