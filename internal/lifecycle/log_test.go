package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
)

// TestLogForgetFinished: a Log that forgets finished tasks holds the same
// live records as one that keeps them all, and reports the same
// violations, a move of a forgotten task included.
func TestLogForgetFinished(t *testing.T) {
	s := newSim(7)
	for range 2000 {
		s.step(5)
	}
	log := s.log
	// a completed task moved again, by hand
	var done Task
	for _, tk := range s.tasks {
		if tk.State == Completed {
			done = tk
			break
		}
	}
	if done.ID == 0 {
		t.Fatal("no completed task in the simulation")
	}
	log = append(log, Effect{Task: done.ID, Kind: KindTransition, At: s.now.Add(time.Hour), From: Completed, To: InProgress, Actor: ActorHuman})
	all, live := NewLog(), NewLog()
	live.ForgetFinished()
	for i, e := range log {
		all.Add(i, e)
		live.Add(i, e)
	}
	want := map[domain.TaskID]Task{}
	for id, tk := range all.Tasks() {
		if tk.State != Completed && tk.State != Abandoned {
			want[id] = tk
		}
	}
	if len(want) == len(all.Tasks()) {
		t.Fatal("nothing finished")
	}
	if got := live.Tasks(); len(got) != len(want) {
		t.Fatalf("%d live records, want %d", len(got), len(want))
	}
	for id, tk := range want {
		if id == done.ID {
			continue // rebuilt from what was kept: state and time only
		}
		if diff := cmp.Diff(tk, live.Tasks()[id]); diff != "" {
			t.Errorf("task %s (-all +live):\n%s", id, diff)
		}
	}
	if live.Tasks()[done.ID].State != InProgress {
		t.Errorf("the moved task is in %s", live.Tasks()[done.ID].State)
	}
	va, _ := all.Violations()
	vl, _ := live.Violations()
	if diff := cmp.Diff(va, vl); diff != "" || len(va) != 1 || va[0].Rule != RuleTerminal {
		t.Errorf("violations %v (-all +live):\n%s", va, diff)
	}
}

func TestParseEffect(t *testing.T) {
	e, err := ParseEffect(Fields{Task: "3", Kind: "RECOVERY", At: "2026-03-01T10:00:00+01:00", From: "cto_intervention", To: "testing",
		Actor: "cto", Reason: "r", Meta: []byte(`{"action":"guided_retry","note":"n","cto_attempts":1,"other":[1]}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := Effect{Task: 3, Kind: KindRecovery, At: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), From: CTOIntervention, To: Testing,
		Actor: ActorCTO, Reason: "r", Meta: Meta{Action: ActGuidedRetry, Note: "n", CTOAttempts: 1}}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, f := range []Fields{
		{Task: "3", Kind: "PHASE_CHANGE", At: "2026-03-01T10:00:00Z"},
		{Task: "x", Kind: "FAILURE", At: "2026-03-01T10:00:00Z"},
		{Task: "3", Kind: "FAILURE", At: "today"},
		{Task: "3", Kind: "FAILURE", At: "2026-03-01T10:00:00Z", Meta: []byte(`{"failures":"two"}`)},
	} {
		if _, err := ParseEffect(f); err == nil {
			t.Errorf("ParseEffect(%+v) succeeded", f)
		}
	}
}
