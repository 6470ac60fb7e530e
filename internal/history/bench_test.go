package history

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/taskie-dev/taskie/internal/benchfix"
	"github.com/taskie-dev/taskie/internal/events"
)

// benchDir holds the benchmarks' log; TestMain removes it.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchLog is a 100,000-event log written once per test binary.
var benchLog = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "taskie-bench-*")
	if err != nil {
		return "", err
	}
	benchDir = dir
	plan, _, err := benchfix.EventsPlan(dir, 100_000)
	return filepath.Join(plan, events.FileName), err
})

// benchScan scans the log leanly with f, calling fn per event, and reports
// ns/event.
func benchScan(b *testing.B, f events.Filter, fn func(*events.Lean) error) {
	path, err := benchLog()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		file, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		err = events.ScanLean(file, path, f, func(l *events.Lean) error { n++; return fn(l) }, func(string) {})
		file.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/line")
	b.ReportMetric(float64(n), "events")
}

// BenchmarkLeanTask is `taskie history T` over 100,000 events.
func BenchmarkLeanTask(b *testing.B) {
	benchScan(b, events.Filter{Task: "1459"}, func(*events.Lean) error { return nil })
}

// BenchmarkLeanQuery folds the lifecycle events of 100,000 events.
func BenchmarkLeanQuery(b *testing.B) {
	var f *Lifecycle
	benchScan(b, events.Filter{Kinds: LifecycleKinds()}, func(l *events.Lean) error {
		if l.Line == 1 || f == nil {
			f = NewLifecycle()
		}
		f.Add(l)
		return nil
	})
}
