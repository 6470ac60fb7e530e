package lifecycle

import (
	"fmt"
	"sync"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
)

// benchLogs are logs of exactly one million effects written by random
// actions, keyed by how many tasks are live at a time.
var benchLogs = map[int]func() []Effect{
	100:  sync.OnceValue(func() []Effect { return simLog(100) }),
	1000: sync.OnceValue(func() []Effect { return simLog(1000) }),
}

func simLog(live int) []Effect {
	const n = 1_000_000
	s := newSim(42)
	for len(s.log) < n {
		s.step(live)
	}
	return s.log[:n]
}

// BenchmarkFold folds a million-effect log into task records, as recover
// and the queries do. One op is the whole log; ns/effect and allocs/effect
// are per line.
func BenchmarkFold(b *testing.B) {
	for _, live := range []int{100, 1000} {
		b.Run(fmt.Sprintf("live=%d", live), func(b *testing.B) {
			log := benchLogs[live]()
			fold := func() map[domain.TaskID]Task {
				var tasks map[domain.TaskID]Task
				var err error
				for _, e := range log {
					if tasks, err = Fold(tasks, e); err != nil {
						b.Fatal(err)
					}
				}
				return tasks
			}
			allocs := testing.AllocsPerRun(1, func() { fold() })
			b.ReportAllocs()
			b.ResetTimer()
			var tasks map[domain.TaskID]Task
			for b.Loop() {
				tasks = fold()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(log)), "ns/effect")
			b.ReportMetric(allocs/float64(len(log)), "allocs/effect")
			b.ReportMetric(float64(len(tasks)), "tasks")
		})
	}
}
