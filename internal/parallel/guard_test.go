package parallel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecideWrite(t *testing.T) {
	live := claim(3, "a", 10*time.Minute)
	expired := claim(3, "a", -time.Minute)
	tests := []struct {
		name    string
		current *Claim
		actor   string
		force   bool
		want    WriteOutcome
		holder  *Claim
		err     string
	}{
		{"no claim: free", nil, "b", false, WriteFree, nil, ""},
		{"no claim, no name: free", nil, "", false, WriteFree, nil, ""},
		{"expired claim: free", ptr(expired), "b", false, WriteFree, nil, ""},
		{"expiring exactly now: free", ptr(claim(3, "a", 0)), "b", false, WriteFree, nil, ""},
		{"holder: allowed", ptr(live), "a", false, WriteHolder, nil, ""},
		{"holder with force: still the holder", ptr(live), "a", true, WriteHolder, nil, ""},
		{"another agent: refused", ptr(live), "b", false, WriteRefused, ptr(live),
			"task 3: claimed by a until 2026-05-01T12:10:00Z (10m0s left)"},
		{"no name: refused", ptr(live), "", false, WriteRefused, ptr(live),
			"task 3: claimed by a until 2026-05-01T12:10:00Z (10m0s left)"},
		{"another agent, forced: overrides", ptr(live), "b", true, WriteForced, ptr(live), ""},
		{"no name, forced: overrides", ptr(live), "", true, WriteForced, ptr(live), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideWrite(3, tc.current, tc.actor, tc.force, t0)
			if got.Outcome != tc.want {
				t.Errorf("outcome = %s, want %s", got.Outcome, tc.want)
			}
			if diff := cmp.Diff(tc.holder, got.Holder); diff != "" {
				t.Errorf("holder (-want +got):\n%s", diff)
			}
			errText := ""
			if got.Err != nil {
				errText = got.Err.Error()
			}
			if errText != tc.err {
				t.Errorf("err = %q, want %q", errText, tc.err)
			}
		})
	}
}

func TestClaimOf(t *testing.T) {
	a, b := claim(3, "a", time.Minute), claim(3, "b", time.Hour)
	if diff := cmp.Diff(ptr(b), ClaimOf([]Claim{a, b, claim(4, "c", time.Hour)}, 3)); diff != "" {
		t.Errorf("ClaimOf (-want +got):\n%s", diff)
	}
	if got := ClaimOf([]Claim{a}, 5); got != nil {
		t.Errorf("ClaimOf(unclaimed) = %v, want nil", got)
	}
}

func TestLeaseBounded(t *testing.T) {
	d := DecideClaim(3, nil, "a", t0, 100*365*24*time.Hour)
	if want := t0.Add(MaxLeaseTTL); !d.Claim.Expires.Equal(want) {
		t.Errorf("expires = %s, want %s", d.Claim.Expires, want)
	}
}
