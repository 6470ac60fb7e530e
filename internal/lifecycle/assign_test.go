package lifecycle

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAssignAndRelease: a claim assigns a pending task to its agent (on
// the move and in the record); a release without a result returns it to
// pending, nobody's, keeping the failures counted in assigned; the log
// replays to the same record.
func TestAssignAndRelease(t *testing.T) {
	type step struct {
		name      string
		do        func(Task, time.Time) (Task, []Effect, error)
		wantState State
		wantAgent string
		wantFails int // failures in assigned after the step
		wantErr   error
	}
	assign := func(agent string) func(Task, time.Time) (Task, []Effect, error) {
		return func(t Task, now time.Time) (Task, []Effect, error) {
			return Assign(t, agent, ActorAgent, "claimed by "+agent, now)
		}
	}
	release := func(t Task, now time.Time) (Task, []Effect, error) {
		return Move(t, Pending, ActorAgent, "claim released", now)
	}
	fail := func(t Task, now time.Time) (Task, []Effect, error) { return Fail(t, ActorAgent, "result failed", now) }
	steps := []step{
		{name: "claim", do: assign("alice"), wantState: Assigned, wantAgent: "alice"},
		{name: "claim again while assigned", do: assign("bob"), wantState: Assigned, wantAgent: "alice", wantErr: ErrIllegal},
		{name: "failed result", do: fail, wantState: Assigned, wantAgent: "alice", wantFails: 1},
		{name: "release", do: release, wantState: Pending, wantFails: 1},
		{name: "release from pending", do: release, wantState: Pending, wantFails: 1, wantErr: ErrIllegal},
		{name: "claim by another", do: assign("bob"), wantState: Assigned, wantAgent: "bob", wantFails: 1},
		{name: "work starts: the agent stays", do: func(t Task, now time.Time) (Task, []Effect, error) {
			return Move(t, Planning, ActorAgent, "", now)
		}, wantState: Planning, wantAgent: "bob"},
		{name: "no release from planning", do: release, wantState: Planning, wantAgent: "bob", wantErr: ErrIllegal},
	}
	task := fresh(t)
	log := []Effect{{Task: 1, Kind: KindCreated, At: t0, To: Pending, Actor: ActorSystem, Reason: "task created"}}
	now := t0
	for _, s := range steps {
		now = now.Add(time.Minute)
		got, effs, err := s.do(task, now)
		switch {
		case s.wantErr != nil && !errors.Is(err, s.wantErr):
			t.Fatalf("%s: err = %v, want %v", s.name, err, s.wantErr)
		case s.wantErr == nil && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		}
		if err == nil {
			task, log = got, append(log, effs...)
		}
		if task.State != s.wantState || task.Agent != s.wantAgent || task.Failures[Assigned] != s.wantFails {
			t.Errorf("%s: state %s, agent %q, failures in assigned %d; want %s, %q, %d",
				s.name, task.State, task.Agent, task.Failures[Assigned], s.wantState, s.wantAgent, s.wantFails)
		}
	}
	if vs := CheckLog(log); len(vs) > 0 {
		t.Fatalf("CheckLog: %v", vs)
	}
	replayed, err := Replay(log)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(task, replayed[1]); diff != "" {
		t.Errorf("replay differs (-moves +replay):\n%s", diff)
	}
	dec, err := Decode(Encode(replayed))
	if err != nil {
		t.Fatal(err)
	}
	if dec[1].Agent != "bob" {
		t.Errorf("decoded agent %q, want bob", dec[1].Agent)
	}
	if raw, _ := json.Marshal(Meta{Agent: "bob"}.Map()); !strings.Contains(string(raw), `"agent":"bob"`) {
		t.Errorf("meta agent written as %s", raw)
	}
	if m, err := ParseMeta([]byte(`{"agent":"bob"}`)); err != nil || m.Agent != "bob" {
		t.Errorf("meta agent round trip: %+v, %v", m, err)
	}
}
