package cli

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskie-dev/taskie/internal/benchfix"
	"github.com/taskie-dev/taskie/internal/events"
)

// benchFormat scans a 100,000-event log leanly, formatting each event with
// fn, and reports ns/event.
func benchFormat(b *testing.B, fn func(*events.Lean)) {
	plan, _, err := benchfix.EventsPlan(b.TempDir(), 100_000)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(plan, events.FileName)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		file, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		err = events.ScanLean(file, path, events.Filter{}, func(l *events.Lean) error { n++; fn(l); return nil }, func(string) {})
		file.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/line")
	b.ReportMetric(float64(n), "events")
}

// BenchmarkLeanHistory is `taskie history` piped over 100,000 events.
func BenchmarkLeanHistory(b *testing.B) {
	w := bufio.NewWriter(io.Discard)
	benchFormat(b, func(l *events.Lean) {
		for _, c := range leanHistoryRow(l).Cells() {
			w.WriteString(c)
		}
	})
}

// BenchmarkLeanLog is `taskie log` over 100,000 events.
func BenchmarkLeanLog(b *testing.B) {
	w := bufio.NewWriter(io.Discard)
	benchFormat(b, func(l *events.Lean) { w.WriteString(leanEventMessage(l)) })
}
