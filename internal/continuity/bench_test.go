package continuity

import (
	"fmt"
	"strings"
	"testing"
)

// typicalPlan is a 20-task plan in the middle of task 12, which depends on
// two finished tasks and has had six sessions.
func typicalPlan() map[string]string {
	files := map[string]string{
		"plan.md":    "# Plan\n\nBuild the config loader.\n",
		"design.md":  "# Design\n",
		"state.json": `{"phase":"post-code-review","current_task":"12","phase_iteration":1,"next_phase":"code-review","review_model":"sonnet"}`,
	}
	var tb strings.Builder
	tb.WriteString("| Id | Status | Priority | Title | Depends on | Files |\n|----|----|----|----|----|----|\n")
	for i := 1; i <= 20; i++ {
		status, deps := "done", "-"
		switch {
		case i == 12:
			status, deps = "in-progress", "10, 11"
		case i > 12:
			status = "pending"
		}
		fmt.Fprintf(&tb, "| %d | %s | medium | Task number %d of the loader | %s | `internal/x%d.go` |\n", i, status, i, deps, i)
		if i < 12 {
			files[fmt.Sprintf("task-%d.md", i)] = fmt.Sprintf("# Task %d\n\nDo part %d.\n\n## Acceptance Criteria\n- [x] done\n\n"+
				"## Chain Output\n\n### Summary\nPart %d is in `internal/x%d.go`: `Load%d(dir)` returns the values with defaults applied.\n\n"+
				"### For Downstream Tasks\nCall `Load%d` once; its errors name the file and line.\n", i, i, i, i, i, i)
		}
	}
	files["tasks.md"] = tb.String()
	var t12 strings.Builder
	t12.WriteString("# Task 12: Validate the loaded config\n\n" +
		"Validate every field of the loaded configuration (plan.md part 4) and report all problems at once, each with\n" +
		"the key path, the value found and the values allowed. Unknown keys are warnings, not errors. The\n" +
		"validation runs in `taskie validate` and at every stop, so it must stay under a millisecond.\n\n")
	for k := 1; k <= 4; k++ {
		st := "done"
		if k > 2 {
			st = "pending"
		}
		fmt.Fprintf(&t12, "### Subtask 12.%d: Part %d of the checks\n- **Status**: %s\n\nWhat this step does, which files change, how it is tested.\n\n", k, k, st)
	}
	t12.WriteString("## Acceptance Criteria\n")
	for k := 1; k <= 6; k++ {
		box := "[x]"
		if k > 3 {
			box = "[ ]"
		}
		fmt.Fprintf(&t12, "- %s check %d of the config is reported with its key path (unit test)\n", box, k)
	}
	t12.WriteString("\n## Progress Log\n")
	for s := 1; s <= 6; s++ {
		fmt.Fprintf(&t12, "\n### Session %d — 2025-06-0%dT10:00:00Z\n- **Did**: checks %d and their unit tests; refactored the error type\n"+
			"- **Issues**: none\n- **Next**: check %d, then the script test for all problems at once\n", s, s, s, s+1)
	}
	files["task-12.md"] = t12.String()
	return files
}

// TestTypicalContextBudget (docs/performance.md): a typical task's context is under
// 2 KB and needs no clipping.
func TestTypicalContextBudget(t *testing.T) {
	p := newPlan(t, typicalPlan())
	b, err := Context(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	text := b.Text()
	if len(text) >= 2048 {
		t.Errorf("context is %d bytes:\n%s", len(text), text)
	}
	for _, part := range b.Parts(Budget) {
		if part.Clipped() {
			t.Errorf("part %s clipped (%d of %d bytes):\n%s", part.Name, part.Size, part.Full, text)
		}
	}
	t.Logf("typical context: %d bytes\n%s", len(text), text)
}

// BenchmarkContext gathers and renders the context of a typical task, as
// `taskie context` and the SessionStart hook do.
func BenchmarkContext(b *testing.B) {
	p := newPlan(b, typicalPlan())
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		br, err := Context(p, 0)
		if err != nil {
			b.Fatal(err)
		}
		size = len(br.Text())
	}
	b.ReportMetric(float64(size), "bytes/context")
}
