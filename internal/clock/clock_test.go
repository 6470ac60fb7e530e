package clock

import (
	"strings"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	fixed := time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		now, test string
		want      time.Time // zero: the real clock
		wantLease time.Time // zero: the real clock
		err       string
	}{
		{name: "unset"},
		{name: "fixed, converted to UTC", now: "2026-05-01T12:30:00.7+02:00", want: fixed},
		{name: "spaces around", now: " 2026-05-01T10:30:00Z ", want: fixed},
		{name: "leases need the test switch", now: "2026-05-01T10:30:00Z", test: "1", want: fixed, wantLease: fixed},
		{name: "switch=0", now: "2099-01-01T00:00:00Z", test: "0", want: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)},
		{name: "switch=true", now: "2099-01-01T00:00:00Z", test: "true", want: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)},
		{name: "switch alone", test: "1"},
		{name: "not a time", now: "yesterday", test: "1", err: `TASKIE_NOW="yesterday" is not an RFC 3339 time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{Env: tc.now, TestEnv: tc.test}
			c, err := FromEnv(func(k string) string { return env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			check := func(what string, c Clock, want time.Time) {
				got := c.Now()
				if got.Location() != time.UTC || got.Nanosecond() != 0 {
					t.Errorf("%s: %v is not UTC to the second", what, got)
				}
				if want.IsZero() {
					if time.Since(got).Abs() > time.Minute || c.Fixed() {
						t.Errorf("%s = %v, want the real clock", what, got)
					}
				} else if !got.Equal(want) || !c.Fixed() {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("Now", c, tc.want)
			check("Lease().Now", c.Lease(), tc.wantLease)
		})
	}
}
