package parallel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func readyIDs(ts []Task) []int {
	out := []int{}
	for _, t := range ts {
		out = append(out, int(t.ID))
	}
	return out
}

func TestReady(t *testing.T) {
	tasks := []Task{
		pending(1).status("done"),
		pending(2, 1).prio(PriorityLow),
		pending(3, 2),                                      // waits on 2
		pending(4),                                         // live lease
		pending(5).prio(PriorityHigh),                      // expired lease: reclaimable
		pending(6).status("in-progress"),                   // started, no lease: someone works on it
		pending(7).status("in-progress").prio(PriorityLow), // expired lease: abandoned
		pending(8).status("postponed"),
		pending(9).status("blocked"),
		pending(10).status("cancelled"),
		pending(11, 10), // a cancelled dependency is satisfied
		pending(12, 99), // unknown dependency: never ready
		pending(13, 6),  // waits on a task in progress
		pending(14),     // lease expires exactly now
		retrying(15),    // failed, awaiting its retry, no lease: ready again
		retrying(16),    // awaiting its retry, live lease: the next agent has it
		retrying(17),    // awaiting its retry, expired lease
	}
	claims := []Claim{
		claim(4, "a", time.Minute),
		claim(5, "b", -time.Minute),
		claim(7, "c", -time.Second),
		claim(14, "d", 0),
		claim(16, "e", time.Minute),
		claim(17, "f", -time.Minute),
	}
	tests := []struct {
		name   string
		claims []Claim
		now    time.Time
		want   []int
	}{
		// In progress first, then priority, then id.
		{"with claims", claims, t0, []int{15, 17, 7, 5, 11, 14, 2}},
		{"no claims", nil, t0, []int{15, 16, 17, 5, 4, 11, 14, 2}},
		{"an hour earlier every lease is live", claims, t0.Add(-time.Hour), []int{15, 11, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readyIDs(Ready(tasks, tc.claims, tc.now))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ready (-want +got):\n%s", d)
			}
		})
	}
}

// retrying is a task in progress whose latest result failed: it waits
// for its retry.
func retrying(id int) Task {
	t := pending(id).status("in-progress")
	t.Retry = true
	return t
}

func TestReadyInheritsPriority(t *testing.T) {
	tasks := []Task{
		pending(1).prio(PriorityMedium),
		pending(2).prio(PriorityLow),
		pending(3, 4).prio(PriorityHigh),
		pending(4, 2).prio(PriorityLow),
	}
	// 2 blocks 4, which blocks the high-priority 3.
	if d := cmp.Diff([]int{2, 1}, readyIDs(Ready(tasks, nil, t0))); d != "" {
		t.Errorf("ready (-want +got):\n%s", d)
	}
}

func TestNext(t *testing.T) {
	tasks := []Task{
		pending(1).prio(PriorityHigh),
		pending(2),
		pending(3).status("done"),
		pending(4).prio(PriorityLow),
	}
	tests := []struct {
		name    string
		claims  []Claim
		agent   string
		ok      bool
		outcome Outcome
		task    int
	}{
		{"first ready", nil, "a", true, Granted, 1},
		{"skips a live lease", []Claim{claim(1, "b", time.Minute)}, "a", true, Granted, 2},
		{"takes over an expired lease", []Claim{claim(1, "b", -time.Minute)}, "a", true, Takeover, 1},
		{"resumes its own live lease", []Claim{claim(4, "a", time.Minute)}, "a", true, Renewed, 4},
		{"own lease on a done task is not resumed", []Claim{claim(3, "a", time.Minute)}, "a", true, Granted, 1},
		{"nothing ready", []Claim{claim(1, "b", time.Minute), claim(2, "c", time.Minute), claim(4, "d", time.Minute)}, "a", false, 0, 0},
		{"no agent", nil, "", true, Refused, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := Next(tasks, tc.claims, tc.agent, t0, time.Hour)
			if ok != tc.ok || d.Outcome != tc.outcome || int(d.Claim.Task) != tc.task {
				t.Errorf("Next = %v, %v task %d (err %v); want %v, %v task %d", ok, d.Outcome, d.Claim.Task, d.Err, tc.ok, tc.outcome, tc.task)
			}
			if d.Outcome == Granted || d.Outcome == Takeover {
				if d.Claim.Agent != tc.agent || !d.Claim.Expires.Equal(t0.Add(time.Hour)) {
					t.Errorf("claim = %+v", d.Claim)
				}
			}
		})
	}
}

// TestOwnLive: the task given back to an agent holding several live leases
// is the first in scheduling order (in progress, inherited priority, own
// priority, id), as Ready orders them — not the lowest id.
func TestOwnLive(t *testing.T) {
	tasks := []Task{
		pending(1).prio(PriorityLow),
		pending(2).prio(PriorityHigh),
		pending(3).prio(PriorityLow).status("in-progress"),
		pending(4).status("postponed").prio(PriorityHighest),
		pending(5).status("done").prio(PriorityHighest),
		pending(6).prio(PriorityLow),
		pending(7, 6).prio(PriorityHighest), // 6 inherits highest from 7
	}
	mine := func(ids ...int) []Claim {
		var cs []Claim
		for _, id := range ids {
			cs = append(cs, claim(id, "a", time.Minute))
		}
		return cs
	}
	skip3 := func(id domain.TaskID) bool { return id == 3 }
	tests := []struct {
		name   string
		claims []Claim
		skip   func(domain.TaskID) bool
		ok     bool
		want   int
	}{
		{"priority before id", mine(1, 2), nil, true, 2},
		{"in progress first", mine(1, 2, 3), nil, true, 3},
		{"skipped tasks are not given back", mine(1, 2, 3), skip3, true, 2},
		{"parked and closed tasks are not given back", mine(4, 5), nil, false, 0},
		{"inherited priority counts", mine(1, 2, 6), nil, true, 6},
		{"another agent's lease", []Claim{claim(2, "b", time.Minute)}, nil, false, 0},
		{"an expired lease", []Claim{claim(2, "a", -time.Minute)}, nil, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := OwnLive(tasks, tc.claims, "a", t0, tc.skip)
			if ok != tc.ok || int(got) != tc.want {
				t.Errorf("OwnLive = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
			if !tc.ok {
				return
			}
			d, _ := Next(tasks, tc.claims, "a", t0, time.Hour)
			if tc.skip == nil && (d.Outcome != Renewed || int(d.Claim.Task) != tc.want) {
				t.Errorf("Next = %v task %d; want renewed %d", d.Outcome, d.Claim.Task, tc.want)
			}
		})
	}
}
