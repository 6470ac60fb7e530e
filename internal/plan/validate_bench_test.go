package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigTasks renders a tasks.md with n rows, using several columns so the
// parser does realistic work.
func bigTasks(n int) []byte {
	var b strings.Builder
	b.WriteString("| Id | Status | Title | Depends on | Files |\n|---|---|---|---|---|\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "| %d | pending | Task %d with a \\| pipe | %d | `pkg/f%d.go`, pkg/g.go |\n", i, i, i-1, i)
	}
	return []byte(b.String())
}

// writeBigPlan creates the plan of docs/performance.md: 1,000 tasks, 1,000 task files and
// 5,000 review/post-review files in valid series.
func writeBigPlan(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("plan.md", []byte("# Plan\n"))
	write("tasks.md", bigTasks(1000))
	write("state.json", []byte("{}"))
	// Each task: reviews 1-3 and post-reviews 1-2 (the latest review has
	// none yet), 5 files × 1,000 tasks = 5,000 review files.
	for t := 1; t <= 1000; t++ {
		write(TaskFile(t), []byte("# Task\n"))
		for i := 1; i <= 3; i++ {
			write(ReviewFile("code-review", t, i), nil)
			if i < 3 {
				write(PostReviewFile("code-review", t, i), nil)
			}
		}
	}
	return dir
}

func BenchmarkValidate(b *testing.B) {
	dir := writeBigPlan(b)
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 3+1000+5000 {
		b.Fatalf("generated %d entries (%v), want 6003", len(entries), err)
	}
	if vs := Validate(dir, nil); len(vs) != 0 {
		b.Fatalf("generated plan is not valid: %v", vs[0])
	}
	b.ReportAllocs()
	for b.Loop() {
		Validate(dir, nil)
	}
}

func BenchmarkParseTasks(b *testing.B) {
	data := bigTasks(1000)
	if ts, problems := ParseTasks(data); len(problems) != 0 || len(ts.Tasks) != 1000 {
		b.Fatalf("bad fixture: %d tasks, problems %v", len(ts.Tasks), problems)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ParseTasks(data)
	}
}

// BenchmarkParseTasks10k is tasks.md of the 10,000-task plan of
// docs/performance.md: every read of the plan parses it.
func BenchmarkParseTasks10k(b *testing.B) {
	data := bigTasks(10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ParseTasks(data)
	}
}

// BenchmarkParseFileName classifies the 60,000 names of the 10,000-task
// plan's directory (task files, reviews and post-reviews), as every read of
// the plan does.
func BenchmarkParseFileName(b *testing.B) {
	var names []string
	for t := 1; t <= 10000; t++ {
		names = append(names, TaskFile(t))
		for i := 1; i <= 3; i++ {
			names = append(names, ReviewFile("code-review", t, i))
			if i < 3 {
				names = append(names, PostReviewFile("code-review", t, i))
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			ParseFileName(n)
		}
	}
}
