package parallel

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecideFence(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	live := &Claim{Task: 3, Agent: "a", Expires: now.Add(time.Minute), Token: 5, Place: "m:c:."}
	expired := &Claim{Task: 3, Agent: "a", Expires: now.Add(-time.Minute), Token: 5, Place: "m:c:."}
	old := &Claim{Task: 3, Agent: "a", Expires: now.Add(time.Minute)} // from before tokens and places
	tests := []struct {
		name    string
		current *Claim
		agent   string
		f       Fence
		want    string // "", "stale", "place"
	}{
		{"current token", live, "a", Fence{Place: "m:c:.", Token: 5}, ""},
		{"no token", live, "a", Fence{Place: "m:c:."}, ""},
		{"older token", live, "a", Fence{Place: "m:c:.", Token: 4}, "stale"},
		{"claim gone", nil, "a", Fence{Token: 5}, "stale"},
		{"taken over by another agent", &Claim{Task: 3, Agent: "b", Expires: now.Add(time.Minute), Token: 6}, "a", Fence{Token: 5}, "stale"},
		{"token of another agent's claim", live, "b", Fence{Token: 5}, "stale"},
		{"another place, live", live, "a", Fence{Place: "m2:c:."}, "place"},
		{"another place, expired", expired, "a", Fence{Place: "m2:c:."}, ""},
		{"place not known", old, "a", Fence{Place: "m2:c:."}, ""},
		{"no place given", live, "a", Fence{}, ""},
		{"free, no token", nil, "a", Fence{Place: "m:c:."}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := DecideFence(3, tc.current, tc.agent, tc.f, now)
			var stale *StaleTokenError
			var place *PlaceError
			got := ""
			switch {
			case errors.As(err, &stale):
				got = "stale"
			case errors.As(err, &place):
				got = "place"
			case err != nil:
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecideFence (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideClaimAtPlaces(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	held := &Claim{Task: 3, Agent: "a", Acquired: now.Add(-time.Hour), Expires: now.Add(time.Minute), Token: 5, Place: "m:c:."}
	expired := &Claim{Task: 3, Agent: "a", Acquired: now.Add(-time.Hour), Expires: now.Add(-time.Minute), Token: 5, Place: "m:c:."}
	tests := []struct {
		name    string
		current *Claim
		f       Fence
		want    Outcome
		token   int64 // kept by a renewal; 0 when the store issues a new one
		place   string
	}{
		{"renewal from its place keeps the token", held, Fence{Place: "m:c:."}, Renewed, 5, "m:c:."},
		{"live, from another place", held, Fence{Place: "m2:c:."}, Refused, 0, ""},
		{"expired, from another place: a new claim", expired, Fence{Place: "m2:c:."}, Takeover, 0, "m2:c:."},
		{"expired, from its place: revived", expired, Fence{Place: "m:c:."}, Renewed, 5, "m:c:."},
		{"free", nil, Fence{Place: "m:c:."}, Granted, 0, "m:c:."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := DecideClaimAt(3, tc.current, "a", tc.f, now, time.Minute)
			got := struct {
				O     Outcome
				Token int64
				Place string
			}{d.Outcome, d.Claim.Token, d.Claim.Place}
			want := struct {
				O     Outcome
				Token int64
				Place string
			}{tc.want, tc.token, tc.place}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecideClaimAt (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideWriteAtStaleEvenForced(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cur := &Claim{Task: 3, Agent: "b", Expires: now.Add(time.Minute), Token: 6, Place: "m:c:."}
	for _, force := range []bool{false, true} {
		d := DecideWriteAt(3, cur, "a", Fence{Token: 5}, force, now)
		if d.Outcome != WriteRefused {
			t.Errorf("force=%v: %v, want refused", force, d.Outcome)
		}
	}
	mine := &Claim{Task: 3, Agent: "a", Expires: now.Add(time.Minute), Token: 6, Place: "m:c:."}
	if d := DecideWriteAt(3, mine, "a", Fence{Place: "m2:c:."}, false, now); d.Outcome != WriteRefused {
		t.Errorf("another place: %v, want refused", d.Outcome)
	}
	if d := DecideWriteAt(3, mine, "a", Fence{Place: "m2:c:."}, true, now); d.Outcome != WriteForced {
		t.Errorf("another place, forced: %v, want forced", d.Outcome)
	}
	if d := DecideWriteAt(3, mine, "a", Fence{Place: "m:c:.", Token: 6}, false, now); d.Outcome != WriteHolder {
		t.Errorf("holder: %v", d.Outcome)
	}
}

func TestIdentity(t *testing.T) {
	tests := []struct{ host, clone, wt, session, want string }{
		{"vm", "app-1a2b3c", ".", "", "vm:app-1a2b3c:."},
		{"vm", "app-1a2b3c", "app-p-task-3", "0123456789abcdef", "vm:app-1a2b3c:app-p-task-3:01234567"},
		{"my host", "a:b", "", "", "my-host:a-b:-"},
	}
	for _, tc := range tests {
		if got := Identity(PlaceOf(tc.host, tc.clone, tc.wt), tc.session); got != tc.want {
			t.Errorf("Identity(%q, %q, %q, %q) = %q, want %q", tc.host, tc.clone, tc.wt, tc.session, got, tc.want)
		}
	}
}
