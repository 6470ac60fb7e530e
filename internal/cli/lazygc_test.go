package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestLazyGCRestoresTheCollector: the collector left off by a plan read
// is set back as it was by the first collection.
func TestLazyGCRestoresTheCollector(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	pct := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) })
	lazyGCStart()
	if got := debug.SetMemoryLimit(-1); got != lazyGCLimit {
		t.Fatalf("memory limit after the start = %d, want %d", got, lazyGCLimit)
	}
	runtime.GC()
	for end := time.Now().Add(5 * time.Second); debug.SetMemoryLimit(-1) != limit; {
		if time.Now().After(end) {
			t.Fatalf("memory limit after a collection = %d, want %d", debug.SetMemoryLimit(-1), limit)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent after a collection = %d, want 100", got)
	}
}
