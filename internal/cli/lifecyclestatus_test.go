package cli

import (
	"testing"
	"time"
)

// TestTimeoutPercent: a state held for years is far over its timeout, not
// a negative percentage (elapsed × 100 overflowed a duration).
func TestTimeoutPercent(t *testing.T) {
	year := 365 * 24 * time.Hour
	for _, tc := range []struct {
		name           string
		elapsed, limit time.Duration
		want           string
	}{
		{"at 80 %", 48 * time.Minute, time.Hour, "80%"},
		{"over", 3 * time.Hour, time.Hour, "300%"},
		{"999 %", 999 * time.Minute, 100 * time.Minute, "999%"},
		{"just over 999 %", 1000 * time.Minute, 100 * time.Minute, ">999%"},
		{"years", 30 * year, 2 * time.Hour, ">999%"},
		{"longest duration", time.Duration(1<<63 - 1), time.Minute, ">999%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := percentOf(tc.elapsed, tc.limit)
			if p < 0 {
				t.Fatalf("percentOf(%s, %s) = %d, negative", tc.elapsed, tc.limit, p)
			}
			if got := percentText(p); got != tc.want {
				t.Errorf("percentText(percentOf(%s, %s)) = %q, want %q", tc.elapsed, tc.limit, got, tc.want)
			}
		})
	}
}
