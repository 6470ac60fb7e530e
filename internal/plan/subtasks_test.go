package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSubtasks(t *testing.T) {
	in := lines(
		"# Task 3",
		"### Subtask 3.1: Write parser",
		"- **Status**: done",
		"### Subtask 3.2: Tests",
		"Some text",
		"- **Status:** in-progress",
		"### Subtask 3.3: No status",
		"## Notes",
		"- **Status**: not a subtask's",
	)
	want := []Subtask{
		{ID: "3.1", Title: "Write parser", Status: "done", Line: 2},
		{ID: "3.2", Title: "Tests", Status: "in-progress", Line: 4},
		{ID: "3.3", Title: "No status", Line: 7},
	}
	if d := cmp.Diff(want, ParseSubtasks([]byte(in))); d != "" {
		t.Errorf("subtasks (-want +got):\n%s", d)
	}
	if got := ParseSubtasks([]byte("no subtasks here\n")); got != nil {
		t.Errorf("ParseSubtasks without subtasks = %v", got)
	}
}
