package parallel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
)

// benchTasks is a plan of n tasks: each depends on 0–3 earlier tasks and
// touches 3 files from a pool of 300; priorities are mixed and about a
// tenth of the tasks are done. The seed is fixed.
func benchTasks(n int) []Task {
	rng := rand.New(rand.NewPCG(1, 2))
	tasks := make([]Task, n)
	for i := range tasks {
		t := Task{ID: domain.TaskID(i + 1), Status: "pending", Priority: PriorityHigh + rng.IntN(3)}
		if i > 0 {
			for range rng.IntN(4) {
				d := domain.TaskID(1 + rng.IntN(i))
				if !slices.Contains(t.Deps, d) {
					t.Deps = append(t.Deps, d)
				}
			}
		}
		for len(t.Files) < 3 {
			k := rng.IntN(300)
			f := fmt.Sprintf("internal/pkg%02d/file%03d.go", k/10, k)
			if !slices.Contains(t.Files, f) {
				t.Files = append(t.Files, f)
			}
		}
		tasks[i] = t
	}
	// Done tasks come first in a real plan: mark the first tenth done.
	for i := range n / 10 {
		tasks[i].Status = "done"
	}
	return tasks
}

func BenchmarkGroups1000(b *testing.B) {
	tasks := benchTasks(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Groups(tasks, 5); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReady1000(b *testing.B) {
	tasks := benchTasks(1000)
	b.ReportAllocs()
	for b.Loop() {
		Ready(tasks, nil, t0)
	}
}

// benchTaskFile is a task file as agents write them (about 2 KB): prose,
// acceptance criteria, a fenced code block, backticked paths, and words
// that look like files but are not (e.g., v1.2, node.js, plan.md). It
// names about 13 files from a pool of 3,000; one task in 20 also names
// two files shared with others.
func benchTaskFile(id int, rng *rand.Rand) []byte {
	f := func() string {
		k := rng.IntN(3000)
		return fmt.Sprintf("internal/pkg%03d/file%04d.go", k/10, k)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Task %d: rework the parser of the %s module\n\n", id, f())
	fmt.Fprintf(&b, "## Goal\n\nThe current implementation in `%s` reads the whole input before it\n", f())
	b.WriteString("validates anything, e.g. a 2 MB file is held in memory twice. Follow plan.md part 3 and the\n")
	b.WriteString("design in design.md; see https://example.com/docs/v1.2 for the format (node.js users\n")
	fmt.Fprintf(&b, "rely on it). Keep the exported API of %s stable; callers live in `%s`\n", f(), f())
	fmt.Fprintf(&b, "and [the CLI](%s#L12).\n\n", f())
	b.WriteString("## Acceptance criteria\n\n")
	for k := 1; k <= 6; k++ {
		fmt.Fprintf(&b, "- [ ] %d. The parser streams its input: a test in `%s` feeds 10,000 lines and checks\n", k, f())
		b.WriteString("  that memory stays flat; errors name the line and column (\"line 3, column 7\").\n")
	}
	b.WriteString("\n## Notes\n\n```go\nfunc Parse(r io.Reader) (*Doc, error) {\n\t// see ")
	b.WriteString(f())
	b.WriteString(":42\n\treturn nil, nil\n}\n```\n\n")
	b.WriteString("Run `go test ./internal/...` and `make lint` before committing.\n")
	if id%20 == 0 { // a few tasks also touch shared files
		b.WriteString("Record the new figures in docs/performance.md; add the dependency to `go.mod`.\n")
	}
	return []byte(b.String())
}

// benchTable is tasks.md for benchTasks(n) without a Files column, with
// each task's files named only in its task file.
func benchTable(n int) (*plan.Tasks, map[domain.TaskID][]byte) {
	tasks := benchTasks(n)
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("| Id | Status | Priority | Depends on | Title |\n|----|--------|----------|------------|-------|\n")
	files := make(map[domain.TaskID][]byte, n)
	for _, t := range tasks {
		deps := make([]string, len(t.Deps))
		for i, d := range t.Deps {
			deps[i] = d.String()
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | task %d |\n", t.ID, t.Status, PriorityName(t.Priority), strings.Join(deps, ", "), t.ID)
		files[t.ID] = benchTaskFile(int(t.ID), rng)
	}
	ts, ps := plan.ParseTasks([]byte(b.String()))
	if len(ps) > 0 {
		panic(fmt.Sprint(ps))
	}
	return ts, files
}

// BenchmarkGroupsFromTaskFiles1000 is what `taskie groups` computes on a
// 1,000-task plan whose files come from the task files: FilesIn on every
// task file, then the waves (reading the files is the caller's).
func BenchmarkGroupsFromTaskFiles1000(b *testing.B) {
	ts, files := benchTable(1000)
	b.ReportAllocs()
	for b.Loop() {
		tasks, _ := FromTable(ts, files)
		if _, err := Groups(tasks, 5); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilesIn(b *testing.B) {
	data := benchTaskFile(1, rand.New(rand.NewPCG(5, 6)))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		FilesIn(data)
	}
}
