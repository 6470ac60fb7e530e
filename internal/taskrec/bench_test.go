package taskrec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/plan"
)

// BenchmarkFold folds a 10,000-task plan without records (every task
// never moved), as a read of a fresh big plan does.
func BenchmarkFold(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("| ID | Title | Status | Depends on |\n|----|-------|--------|------------|\n")
	for i := 1; i <= 10000; i++ {
		dep := "-"
		if i > 1 {
			dep = fmt.Sprint(i - 1)
		}
		fmt.Fprintf(&sb, "| %d | Task %d | pending | %s |\n", i, i, dep)
	}
	ts, _ := plan.ParseTasks([]byte(sb.String()))
	b.ReportAllocs()
	for b.Loop() {
		Fold(Input{Tasks: ts, Created: created, Now: now})
	}
}
