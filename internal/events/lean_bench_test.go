package events_test

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

// benchLog is a log of 100,000 realistic events, written once.
var benchLog = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "taskie-events-bench-*")
	if err != nil {
		return "", err
	}
	benchDir = dir
	plan, _, err := benchfix.EventsPlan(dir, 100_000)
	return filepath.Join(plan, events.FileName), err
})

// BenchmarkScanLean reads 100,000 events leanly (`taskie history`'s and
// `taskie query`'s reading), the whole log or one task's events; one op
// is the whole log. Compare BenchmarkScanReader, which decodes every event.
func BenchmarkScanLean(b *testing.B) {
	for _, tc := range []struct {
		name string
		f    events.Filter
	}{
		{"all", events.Filter{}},
		{"task", events.Filter{Task: "1459"}},
		{"lifecycle", events.Filter{Kinds: []string{"TASK_CREATED", "STATE_TRANSITION", "FAILURE", "CTO_INTERVENTION", "ESCALATED", "RECOVERY"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path, err := benchLog()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				err = events.ScanLean(f, path, tc.f, func(*events.Lean) error { return nil }, func(string) {})
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/event")
		})
	}
}

// BenchmarkScanReader decodes every one of the 100,000 events whole
// (encoding/json into events.Event): what the queries did before.
func BenchmarkScanReader(b *testing.B) {
	path, err := benchLog()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		err = events.ScanReader(f, path, func(events.Event) {}, func(string) {})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/event")
}
