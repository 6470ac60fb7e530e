package parallel

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
)

// ptr returns a pointer to a copy of c.
func ptr(c Claim) *Claim { return &c }

// fresh is the lease agent gets at t0 for ttl, acquired at acquired.
func fresh(task int, agent string, acquired time.Time, ttl time.Duration) Claim {
	return Claim{Task: domain.TaskID(task), Agent: agent, Acquired: acquired, Expires: t0.Add(ttl), Heartbeat: t0}
}

func TestDecideClaim(t *testing.T) {
	live := claim(3, "a", 10*time.Minute)
	expired := claim(3, "a", -time.Minute)
	tests := []struct {
		name    string
		current *Claim
		agent   string
		ttl     time.Duration
		want    ClaimDecision
		err     string
	}{
		{"free: granted", nil, "a", time.Hour,
			ClaimDecision{Outcome: Granted, Claim: fresh(3, "a", t0, time.Hour)}, ""},
		{"free, no ttl: default lease", nil, "a", 0,
			ClaimDecision{Outcome: Granted, Claim: fresh(3, "a", t0, domain.DefaultLeaseTTL)}, ""},
		{"same agent, live: renewed, acquired kept", ptr(live), "a", time.Hour,
			ClaimDecision{Outcome: Renewed, Claim: fresh(3, "a", live.Acquired, time.Hour)}, ""},
		{"same agent, expired: renewed and revived", ptr(expired), "a", time.Hour,
			ClaimDecision{Outcome: Renewed, Claim: fresh(3, "a", expired.Acquired, time.Hour), Revived: true}, ""},
		{"other agent, expired: takeover names the previous holder", ptr(expired), "b", time.Hour,
			ClaimDecision{Outcome: Takeover, Claim: fresh(3, "b", t0, time.Hour), Previous: ptr(expired)}, ""},
		{"other agent, expiring exactly now: takeover", ptr(claim(3, "a", 0)), "b", time.Hour,
			ClaimDecision{Outcome: Takeover, Claim: fresh(3, "b", t0, time.Hour), Previous: ptr(claim(3, "a", 0))}, ""},
		{"other agent, live: refused", ptr(live), "b", time.Hour,
			ClaimDecision{Outcome: Refused, Previous: ptr(live)},
			"task 3: claimed by a until 2026-05-01T12:10:00Z (10m0s left)"},
		{"no agent: refused", nil, "", time.Hour,
			ClaimDecision{Outcome: Refused}, "an agent name is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideClaim(3, tc.current, tc.agent, t0, tc.ttl)
			checkDecision(t, tc.want, got, tc.err)
		})
	}
}

func TestDecideHeartbeat(t *testing.T) {
	live := claim(3, "a", 10*time.Minute)
	expired := claim(3, "a", -time.Minute)
	tests := []struct {
		name    string
		current *Claim
		agent   string
		want    ClaimDecision
		err     string
	}{
		{"holder, live: renewed", ptr(live), "a",
			ClaimDecision{Outcome: Renewed, Claim: fresh(3, "a", live.Acquired, time.Hour)}, ""},
		{"holder, expired and not taken: revived", ptr(expired), "a",
			ClaimDecision{Outcome: Renewed, Claim: fresh(3, "a", expired.Acquired, time.Hour), Revived: true}, ""},
		{"another agent: refused", ptr(live), "b",
			ClaimDecision{Outcome: Refused, Previous: ptr(live)},
			"task 3: claimed by a until 2026-05-01T12:10:00Z (10m0s left)"},
		{"another agent's expired lease: refused", ptr(expired), "b",
			ClaimDecision{Outcome: Refused, Previous: ptr(expired)},
			"task 3: claimed by a, whose lease expired at 2026-05-01T11:59:00Z; claim it to take it over"},
		{"not claimed: refused", nil, "a",
			ClaimDecision{Outcome: Refused}, "task 3: not claimed: claim it first"},
		{"no agent: refused", ptr(live), "",
			ClaimDecision{Outcome: Refused, Previous: ptr(live)}, "an agent name is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideHeartbeat(3, tc.current, tc.agent, t0, time.Hour)
			checkDecision(t, tc.want, got, tc.err)
		})
	}
}

func TestDecideRelease(t *testing.T) {
	live := claim(3, "a", 10*time.Minute)
	expired := claim(3, "a", -time.Minute)
	tests := []struct {
		name    string
		current *Claim
		agent   string
		want    ClaimDecision
		err     string
	}{
		{"holder, live: released", ptr(live), "a", ClaimDecision{Outcome: Released, Claim: live}, ""},
		{"holder, expired: released", ptr(expired), "a", ClaimDecision{Outcome: Released, Claim: expired}, ""},
		{"another agent, live: refused", ptr(live), "b",
			ClaimDecision{Outcome: Refused, Previous: ptr(live)},
			"task 3: claimed by a until 2026-05-01T12:10:00Z (10m0s left)"},
		{"another agent, expired: refused", ptr(expired), "b",
			ClaimDecision{Outcome: Refused, Previous: ptr(expired)},
			"task 3: claimed by a, whose lease expired at 2026-05-01T11:59:00Z; claim it to take it over"},
		{"not claimed: refused", nil, "a", ClaimDecision{Outcome: Refused}, "task 3: not claimed"},
		{"no agent: refused", ptr(live), "", ClaimDecision{Outcome: Refused, Previous: ptr(live)}, "an agent name is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideRelease(3, tc.current, tc.agent, t0)
			checkDecision(t, tc.want, got, tc.err)
		})
	}
}

// checkDecision compares a decision, its error by message.
func checkDecision(t *testing.T, want, got ClaimDecision, errMsg string) {
	t.Helper()
	gotErr := ""
	if got.Err != nil {
		gotErr = got.Err.Error()
	}
	if gotErr != errMsg {
		t.Errorf("error = %q, want %q", gotErr, errMsg)
	}
	got.Err = nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("decision (-want +got):\n%s", d)
	}
}

func TestRefusalErrors(t *testing.T) {
	d := DecideClaim(3, ptr(claim(3, "a", time.Minute)), "b", t0, time.Hour)
	var held *HeldError
	if !errors.As(d.Err, &held) || held.Holder.Agent != "a" || held.Agent != "b" {
		t.Errorf("err = %#v, want a *HeldError naming a and b", d.Err)
	}
	if d := DecideRelease(3, nil, "a", t0); !errors.Is(d.Err, ErrNotClaimed) {
		t.Errorf("err = %v, want ErrNotClaimed", d.Err)
	}
	if d := DecideClaim(3, nil, "", t0, time.Hour); !errors.Is(d.Err, ErrNoAgent) {
		t.Errorf("err = %v, want ErrNoAgent", d.Err)
	}
	if got := Takeover.String(); got != "takeover" {
		t.Errorf("Takeover.String() = %q", got)
	}
}

func TestLeasesKeepsTheLatest(t *testing.T) {
	m := leases([]Claim{claim(1, "a", time.Minute), claim(1, "b", time.Hour), claim(1, "c", -time.Hour)})
	if got := m[1].Agent; got != "b" {
		t.Errorf("lease of task 1 held by %q, want b", got)
	}
}
