package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNew(t *testing.T) {
	task, effs, err := New(3, ActorSystem, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := Task{ID: 3, State: Pending, Since: t0, Created: t0, Failures: map[State]int{}, Entered: map[State]time.Duration{}}
	if diff := cmp.Diff(want, task); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Effect{{Task: 3, Kind: KindCreated, At: t0, To: Pending, Actor: ActorSystem, Reason: "task created"}}, effs); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	if _, _, err := New(0, ActorSystem, t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("New(0) = %v, want ErrInvalid", err)
	}
	if _, _, err := New(1, "robot", t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("New with an unknown actor = %v, want ErrInvalid", err)
	}
}

func TestMoveRecordsTimeAndEffect(t *testing.T) {
	task := fresh(t)
	at := t0.Add(10 * time.Minute)
	got, effs, err := Move(task, Assigned, ActorAgent, "picked up", at)
	if err != nil {
		t.Fatal(err)
	}
	want := Effect{Task: 1, Kind: KindTransition, At: at, From: Pending, To: Assigned, Actor: ActorAgent, Reason: "picked up"}
	if diff := cmp.Diff([]Effect{want}, effs); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	if got.State != Assigned || !got.Since.Equal(at) || got.Entered[Pending] != 10*time.Minute {
		t.Errorf("after the move: %+v", got)
	}
	if task.State != Pending || len(task.Entered) != 0 {
		t.Errorf("Move changed its input: %+v", task)
	}
}

func TestIllegalMoveSaysWhy(t *testing.T) {
	task := reach(t, QualityReview, "")
	_, _, err := Move(task, Completed, ActorAgent, "", task.Since)
	if !errors.Is(err, ErrIllegal) {
		t.Fatalf("err = %v", err)
	}
	want := "task 1: quality_review → completed is not a legal move"
	if err.Error() != want {
		t.Errorf("error\n got %q\nwant %q", err, want)
	}
	_, _, err = Move(reach(t, Completed, ""), InProgress, ActorHuman, "", t0.Add(time.Hour))
	if err == nil || !strings.Contains(err.Error(), "completed is terminal") {
		t.Errorf("move out of completed: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	task := reach(t, InProgress, "")
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"unknown actor", func() error { _, _, err := Move(task, Testing, "robot", "", task.Since); return err }, ErrInvalid},
		{"clock before the state", func() error {
			_, _, err := Move(task, Testing, ActorAgent, "", task.Since.Add(-time.Second))
			return err
		}, ErrInvalid},
		{"unknown state", func() error {
			x := task
			x.State = "done"
			_, _, err := Fail(x, ActorAgent, "", task.Since)
			return err
		}, ErrInvalid},
		{"unknown target", func() error { _, _, err := Move(task, "done", ActorAgent, "", task.Since); return err }, ErrIllegal},
		{"record over the failure limit", func() error {
			x := task.clone()
			x.Failures[InProgress] = 3
			_, _, err := Fail(x, ActorAgent, "", task.Since)
			return err
		}, ErrInvalid},
		{"guided retry without a note", func() error {
			_, _, err := GuidedRetry(reach(t, CTOIntervention, Testing), ActorCTO, " ", t0.Add(time.Hour))
			return err
		}, ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// chainStep is an action in a scripted path and what it must leave.
type chainStep struct {
	name     string
	do       func(Task, time.Time) (Task, []Effect, error)
	state    State
	failures map[State]int
	attempts int
	kinds    []Kind
}

// runSteps plays steps a minute apart, checking each; the effects of the
// whole path must replay to the final record.
func runSteps(t *testing.T, task Task, log []Effect, steps []chainStep) {
	t.Helper()
	now := task.Since
	for i, st := range steps {
		now = now.Add(time.Minute)
		got, effs, err := st.do(task, now)
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, st.name, err)
		}
		if got.State != st.state || got.CTOAttempts != st.attempts {
			t.Errorf("step %d (%s): state %s, CTO attempts %d; want %s, %d", i, st.name, got.State, got.CTOAttempts, st.state, st.attempts)
		}
		if diff := cmp.Diff(st.failures, got.Failures, cmpEmpty); diff != "" {
			t.Errorf("step %d (%s): failures (-want +got):\n%s", i, st.name, diff)
		}
		if diff := cmp.Diff(st.kinds, kinds(effs)); diff != "" {
			t.Errorf("step %d (%s): effect kinds (-want +got):\n%s", i, st.name, diff)
		}
		if vs := Check(got); len(vs) > 0 {
			t.Errorf("step %d (%s): %v", i, st.name, vs)
		}
		task, log = got, append(log, effs...)
	}
	replayed, err := Replay(log)
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	if diff := cmp.Diff(task, replayed[task.ID]); diff != "" {
		t.Errorf("replay differs (-direct +replayed):\n%s", diff)
	}
	if vs := CheckLog(log); len(vs) > 0 {
		t.Errorf("CheckLog: %v", vs)
	}
}

var cmpEmpty = cmp.Transformer("nonzero", func(m map[State]int) map[State]int {
	out := map[State]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
})

func move(to State, a Actor) func(Task, time.Time) (Task, []Effect, error) {
	return func(t Task, now time.Time) (Task, []Effect, error) { return Move(t, to, a, "", now) }
}

func failBy(a Actor) func(Task, time.Time) (Task, []Effect, error) {
	return func(t Task, now time.Time) (Task, []Effect, error) { return Fail(t, a, "broken", now) }
}

func action(f func(Task, Actor, string, time.Time) (Task, []Effect, error), a Actor) func(Task, time.Time) (Task, []Effect, error) {
	return func(t Task, now time.Time) (Task, []Effect, error) { return f(t, a, "", now) }
}

var (
	fK  = []Kind{KindFailure}
	fT  = []Kind{KindFailure, KindTransition}
	fC  = []Kind{KindFailure, KindCTO}
	fCE = []Kind{KindFailure, KindCTO, KindEscalated}
	tr  = []Kind{KindTransition}
	rec = []Kind{KindRecovery}
)

// TestEscalationPaths plays docs/lifecycle.md's escalation end to end: three failed
// reviews go to the CTO, a CTO retry returns, a second round uses the
// second attempt, and the next failure goes to a human, who resolves it.
func TestEscalationPaths(t *testing.T) {
	task, log := reachLog(t, QualityReview, "")
	qr := func(n int) map[State]int { return map[State]int{QualityReview: n} }
	reviewAgain := []chainStep{
		{"tested", move(Testing, ActorAgent), Testing, nil, 0, tr},
		{"reviewed", move(QualityReview, ActorHook), QualityReview, nil, 0, tr},
	}
	var steps []chainStep
	add := func(s ...chainStep) { steps = append(steps, s...) }
	add(chainStep{"review 1 fails", move(InProgress, ActorHook), InProgress, qr(1), 0, fT})
	add(withQR(reviewAgain, 1, 0)...)
	add(chainStep{"review 2 fails", move(InProgress, ActorHook), InProgress, qr(2), 0, fT})
	add(withQR(reviewAgain, 2, 0)...)
	add(chainStep{"review 3 fails: CTO", move(InProgress, ActorHook), CTOIntervention, qr(3), 0, fC})
	add(chainStep{"CTO retry", action(Retry, ActorCTO), QualityReview, nil, 1, rec})
	add(chainStep{"fail", failBy(ActorHook), QualityReview, qr(1), 1, fK})
	add(chainStep{"fail", failBy(ActorHook), QualityReview, qr(2), 1, fK})
	add(chainStep{"fail: CTO again", failBy(ActorHook), CTOIntervention, qr(3), 1, fC})
	add(chainStep{"CTO guided retry", func(t Task, now time.Time) (Task, []Effect, error) {
		return GuidedRetry(t, ActorCTO, "split the handler", now)
	}, QualityReview, nil, 2, rec})
	add(chainStep{"one failure after 2 attempts: human", move(InProgress, ActorHook), HumanEscalation, qr(1), 2, fCE})
	add(chainStep{"human resolves", action(Resolve, ActorHuman), QualityReview, nil, 0, rec})
	add(chainStep{"passes", move(Approved, ActorHook), Approved, nil, 0, tr})
	runSteps(t, task, log, steps)
}

// withQR sets the quality_review failure count steps must keep.
func withQR(steps []chainStep, n, attempts int) []chainStep {
	out := make([]chainStep, len(steps))
	for i, s := range steps {
		s.failures, s.attempts = map[State]int{QualityReview: n}, attempts
		out[i] = s
	}
	return out
}

func TestEscalationEffectsSayWhy(t *testing.T) {
	task := reach(t, Planning, "")
	now := task.Since
	for range 2 {
		now = now.Add(time.Minute)
		task = res(Move(task, Planning, ActorAgent, "approach rejected", now)).ok(t)
	}
	_, effs, err := Move(task, Planning, ActorAgent, "approach rejected", now)
	if err != nil {
		t.Fatal(err)
	}
	want := []Effect{
		{Task: 1, Kind: KindFailure, At: now, From: Planning, To: Planning, Actor: ActorAgent, Reason: "approach rejected", Meta: Meta{Failures: 3}},
		{Task: 1, Kind: KindCTO, At: now, From: Planning, To: CTOIntervention, Actor: ActorSystem, Reason: "3 failures in planning"},
	}
	if diff := cmp.Diff(want, effs); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
}

func TestFailuresInCTOInterventionGoToHuman(t *testing.T) {
	task, log := reachLog(t, CTOIntervention, Committing)
	cto := func(n int) map[State]int { return map[State]int{CTOIntervention: n} }
	runSteps(t, task, log, []chainStep{
		{"fail", failBy(ActorCTO), CTOIntervention, cto(1), 0, fK},
		{"fail", failBy(ActorCTO), CTOIntervention, cto(2), 0, fK},
		{"fail: human", failBy(ActorCTO), HumanEscalation, cto(3), 0, []Kind{KindFailure, KindEscalated}},
		{"abandoned", action(Abandon, ActorHuman), Abandoned, cto(3), 0, rec},
	})
}

func TestForwardClearsOnlyTheStateLeft(t *testing.T) {
	task, log := reachLog(t, Committing, "")
	runSteps(t, task, log, []chainStep{
		{"pre-commit fails", move(InProgress, ActorAgent), InProgress, map[State]int{Committing: 1}, 0, fT},
		{"fail in progress", failBy(ActorAgent), InProgress, map[State]int{Committing: 1, InProgress: 1}, 0, fK},
		{"code done", move(Testing, ActorAgent), Testing, map[State]int{Committing: 1}, 0, tr},
		{"to review", move(QualityReview, ActorAgent), QualityReview, map[State]int{Committing: 1}, 0, tr},
		{"passes", move(Approved, ActorAgent), Approved, map[State]int{Committing: 1}, 0, tr},
		{"commits", move(Committing, ActorAgent), Committing, map[State]int{Committing: 1}, 0, tr},
		{"committed", move(Completed, ActorAgent), Completed, nil, 0, tr},
	})
}

func TestTerminalStatesDoNotMove(t *testing.T) {
	type act struct {
		name string
		do   func(Task, Actor, time.Time) error
	}
	wrap := func(f func(Task, Actor, string, time.Time) (Task, []Effect, error)) func(Task, Actor, time.Time) error {
		return func(t Task, a Actor, now time.Time) error { _, _, err := f(t, a, "", now); return err }
	}
	acts := []act{
		{"fail", wrap(Fail)}, {"retry", wrap(Retry)}, {"skip", wrap(Skip)}, {"escalate", wrap(Escalate)},
		{"abandon", wrap(Abandon)}, {"resolve", wrap(Resolve)},
		{"guided retry", func(t Task, a Actor, now time.Time) error { _, _, err := GuidedRetry(t, a, "n", now); return err }},
		{"rollback", func(t Task, a Actor, now time.Time) error { _, _, err := Rollback(t, Pending, a, "", now); return err }},
	}
	for _, s := range []State{Completed, Abandoned, HumanEscalation} {
		task := reach(t, s, InProgress)
		now := task.Since.Add(time.Hour)
		for _, a := range acts {
			for _, actor := range Actors() {
				err := a.do(task, actor, now)
				humanWayOut := s == HumanEscalation && actor == ActorHuman && (a.name == "resolve" || a.name == "abandon")
				if humanWayOut != (err == nil) {
					t.Errorf("%s: %s by %s: err = %v", s, a.name, actor, err)
				}
			}
			for _, to := range States() {
				_, _, err := Move(task, to, ActorHuman, "", now)
				humanWayOut := s == HumanEscalation && (to == InProgress || to == Abandoned)
				if humanWayOut != (err == nil) {
					t.Errorf("%s: Move to %s by a human: err = %v", s, to, err)
				}
			}
		}
	}
}

func TestQueryPredicates(t *testing.T) {
	task := reach(t, QualityReview, "")
	if task.Failing() || task.Escalated() {
		t.Errorf("fresh task: failing %v, escalated %v", task.Failing(), task.Escalated())
	}
	now := task.Since
	for range 2 {
		now = now.Add(time.Minute)
		task = res(Fail(task, ActorHook, "", now)).ok(t)
	}
	if !task.Failing() {
		t.Error("2 failures: not failing")
	}
	if !reach(t, CTOIntervention, Testing).Escalated() || !reach(t, HumanEscalation, Testing).Escalated() {
		t.Error("escalated tasks not reported")
	}
}

func TestTimesAreKeptToTheSecond(t *testing.T) {
	task := fresh(t)
	at := time.Now().Add(time.Hour) // has a monotonic reading and nanoseconds
	got, effs, err := Move(task, Assigned, ActorAgent, "", at)
	if err != nil {
		t.Fatal(err)
	}
	want := at.Round(0).Truncate(time.Second)
	if !effs[0].At.Equal(want) || !got.Since.Equal(want) || strings.Contains(effs[0].At.String(), "m=") {
		t.Errorf("recorded %v / %v, want %v", effs[0].At, got.Since, want)
	}
	if got.Entered[Pending] != want.Sub(t0) {
		t.Errorf("time in pending %s, want %s", got.Entered[Pending], want.Sub(t0))
	}
}
