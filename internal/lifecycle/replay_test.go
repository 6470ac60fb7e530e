package lifecycle

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
)

// TestReplayEqualsDirect is the property test: random sequences of
// actions (legal or not, by any actor) on several tasks; every refused
// action leaves its task alone, every record keeps the invariants, and
// replaying the effects rebuilds exactly the records the actions returned.
func TestReplayEqualsDirect(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			s := newSim(seed)
			s.after = func(before Task, r result) {
				if r.err != nil {
					if !errors.Is(r.err, ErrIllegal) && !errors.Is(r.err, ErrRefused) {
						t.Fatalf("unexpected error kind: %v", r.err)
					}
					if diff := cmp.Diff(before, r.t); diff != "" || r.effs != nil {
						t.Fatalf("a refused action changed the task: %v\n%s", r.err, diff)
					}
					return
				}
				if vs := Check(r.t); len(vs) > 0 {
					t.Fatalf("after %v: %v", r.effs, vs)
				}
			}
			for range 600 {
				s.step(4)
			}
			got, err := Replay(s.log)
			if err != nil {
				t.Fatalf("Replay: %v", err)
			}
			if diff := cmp.Diff(s.tasks, got); diff != "" {
				t.Errorf("replay differs (-direct +replayed):\n%s", diff)
			}
			if vs := CheckLog(s.log); len(vs) > 0 {
				t.Errorf("CheckLog of a log the moves wrote: %v", vs)
			}
		})
	}
}

// TestRandomRunsReachEveryPath makes sure the property test is not
// vacuous: across seeds the simulator escalates, retries, resolves, skips
// and completes.
func TestRandomRunsReachEveryPath(t *testing.T) {
	seen := map[string]bool{}
	for seed := range uint64(40) {
		s := newSim(seed)
		for range 600 {
			s.step(4)
		}
		for _, e := range s.log {
			seen[string(e.Kind)+"/"+string(e.Meta.Action)+"/"+string(e.To)] = true
			seen[string(e.Kind)] = true
			seen[string(e.Meta.Action)] = true
		}
	}
	for _, want := range []string{
		"FAILURE", "CTO_INTERVENTION", "ESCALATED", "RECOVERY",
		"retry", "guided_retry", "rollback", "skip", "abandon", "resolve", "escalate",
		"STATE_TRANSITION//completed", "CTO_INTERVENTION//cto_intervention", "ESCALATED//human_escalation",
	} {
		if !seen[want] {
			t.Errorf("no %s in 40 random runs", want)
		}
	}
}

func TestFoldLeavesTasksOnError(t *testing.T) {
	_, log := reachLog(t, Testing, "")
	tasks, err := Replay(log)
	if err != nil {
		t.Fatal(err)
	}
	before := tasks[1].clone()
	bad := Effect{Task: 1, Kind: KindTransition, At: t0.Add(time.Hour), From: Testing, To: Completed, Actor: ActorAgent}
	tasks, err = Fold(tasks, bad)
	var v Violation
	if !errors.As(err, &v) || v.Rule != RuleNoSkip {
		t.Fatalf("Fold = %v, want a no-skip violation", err)
	}
	if diff := cmp.Diff(before, tasks[1]); diff != "" {
		t.Errorf("Fold changed the task on error:\n%s", diff)
	}
	if got, err := Fold(nil, log[0]); err != nil || got[1].State != Pending {
		t.Errorf("Fold(nil, created) = %v, %v", got, err)
	}
}

func TestMetaMapRoundTrip(t *testing.T) {
	cases := []Meta{
		{},
		{Action: ActGuidedRetry, Note: "use the cache", CTOAttempts: 2},
		{Failures: 3},
		{Level: "alert", State: InProgress, Limit: "4h0m0s"},
	}
	for _, m := range cases {
		raw, err := json.Marshal(m.Map())
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseMeta(raw)
		if err != nil || got != m {
			t.Errorf("ParseMeta(%s) = %+v, %v; want %+v", raw, got, err, m)
		}
	}
	for _, bad := range []string{`{"action":3}`, `{"note":true}`, `{"failures":1.5}`, `{"cto_attempts":"2"}`} {
		if _, err := ParseMeta([]byte(bad)); err == nil {
			t.Errorf("ParseMeta(%s) accepted", bad)
		}
	}
}

func TestParseKindAndActor(t *testing.T) {
	for _, k := range Kinds() {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%s) = %s, %v", k, got, err)
		}
	}
	if _, err := ParseKind("PHASE_CHANGE"); err == nil {
		t.Error("ParseKind accepted a phase event")
	}
	for _, a := range Actors() {
		if got, err := ParseActor(string(a)); err != nil || got != a {
			t.Errorf("ParseActor(%s) = %s, %v", a, got, err)
		}
	}
	if _, err := ParseActor("@agent-cto"); err == nil {
		t.Error("ParseActor accepted an unknown actor")
	}
}

func TestEffectString(t *testing.T) {
	e := Effect{Task: domain.TaskID(2), Kind: KindRecovery, From: CTOIntervention, To: Testing, Actor: ActorCTO, Reason: "mock it", Meta: Meta{Action: ActGuidedRetry}}
	want := "task 2 RECOVERY cto_intervention → testing by cto (guided_retry): mock it"
	if got := e.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFoldAcceptsHandBuiltRecords(t *testing.T) {
	tasks := map[domain.TaskID]Task{7: {ID: 7, State: InProgress, Since: t0, Created: t0}}
	e := Effect{Task: 7, Kind: KindFailure, At: t0, From: InProgress, To: InProgress, Actor: ActorHook}
	tasks, err := Fold(tasks, e)
	if err != nil || tasks[7].Failures[InProgress] != 1 {
		t.Fatalf("Fold = %v, %v", tasks[7], err)
	}
	e = Effect{Task: 7, Kind: KindTransition, At: t0.Add(time.Minute), From: InProgress, To: Testing, Actor: ActorAgent}
	if tasks, err = Fold(tasks, e); err != nil || tasks[7].Entered[InProgress] != time.Minute {
		t.Fatalf("Fold = %v, %v", tasks[7], err)
	}
}

func TestKindMoves(t *testing.T) {
	for _, k := range Kinds() {
		if want := k != KindFailure && k != KindCreated && k != KindTimeout; k.Moves() != want {
			t.Errorf("%s.Moves() = %v", k, !want)
		}
	}
}
