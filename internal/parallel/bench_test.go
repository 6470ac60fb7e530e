package parallel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
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
