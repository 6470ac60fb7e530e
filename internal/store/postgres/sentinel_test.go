package postgres

import (
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
)

// TestSentinelTS: the constant the statements replace is the sentinel time
// the lifecycle lines are written with.
func TestSentinelTS(t *testing.T) {
	if got := store.TimeSentinel.Format(time.RFC3339); got != sentinelTS {
		t.Fatalf("sentinelTS = %q, want %q", sentinelTS, got)
	}
}
