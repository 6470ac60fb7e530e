package lifecycle

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWhoMayDoWhat is the actor × action table: each action is tried by
// every actor on a task where it applies; the allowed ones succeed, the
// others are refused with ErrRefused and a message naming who may.
func TestWhoMayDoWhat(t *testing.T) {
	all := Actors()
	want := map[Action][]Actor{
		ActMove:        all,
		ActFail:        all,
		ActRetry:       {ActorCTO, ActorHuman},
		ActGuidedRetry: {ActorCTO, ActorHuman},
		ActRollback:    {ActorCTO, ActorHuman},
		ActSkip:        {ActorCTO},
		ActAbandon:     {ActorHuman},
		ActResolve:     {ActorHuman},
		ActEscalate:    {ActorAgent, ActorCTO, ActorHuman, ActorSystem},
	}
	inCTO := reach(t, CTOIntervention, Testing)
	inHuman := reach(t, HumanEscalation, Testing)
	inTesting := reach(t, Testing, "")
	now := t0.Add(time.Hour)
	run := map[Action]func(Actor) error{
		ActMove:        func(a Actor) error { _, _, err := Move(inTesting, QualityReview, a, "", now); return err },
		ActFail:        func(a Actor) error { _, _, err := Fail(inTesting, a, "", now); return err },
		ActRetry:       func(a Actor) error { _, _, err := Retry(inCTO, a, "", now); return err },
		ActGuidedRetry: func(a Actor) error { _, _, err := GuidedRetry(inCTO, a, "note", now); return err },
		ActRollback:    func(a Actor) error { _, _, err := Rollback(inTesting, Planning, a, "", now); return err },
		ActSkip:        func(a Actor) error { _, _, err := Skip(inTesting, a, "", now); return err },
		ActAbandon:     func(a Actor) error { _, _, err := Abandon(inTesting, a, "", now); return err },
		ActResolve:     func(a Actor) error { _, _, err := Resolve(inHuman, a, "", now); return err },
		ActEscalate:    func(a Actor) error { _, _, err := Escalate(inTesting, a, "", now); return err },
	}
	for _, act := range Actions() {
		for _, actor := range all {
			t.Run(string(act)+"/"+string(actor), func(t *testing.T) {
				allowed := slices.Contains(want[act], actor)
				if Allowed(actor, act) != allowed {
					t.Errorf("Allowed(%s, %s) = %v, want %v", actor, act, !allowed, allowed)
				}
				err := run[act](actor)
				switch {
				case allowed && err != nil:
					t.Errorf("refused: %v", err)
				case !allowed && !errors.Is(err, ErrRefused):
					t.Errorf("err = %v, want ErrRefused", err)
				case !allowed && !strings.Contains(err.Error(), string(actor)+" may not"):
					t.Errorf("message %q does not say who was refused", err)
				}
			})
		}
	}
	if diff := cmp.Diff(want[ActSkip], Permitted(ActSkip)); diff != "" {
		t.Errorf("Permitted(skip) (-want +got):\n%s", diff)
	}
}

// inCTOWith is task 1 escalated from s after 3 failures there, with
// attempts CTO attempts already used (attempts < 2).
func inCTOWith(tb testing.TB, s State, attempts int) Task {
	tb.Helper()
	t := reach(tb, s, "")
	now := t.Since
	for round := 0; ; round++ {
		for range MaxFailures {
			now = now.Add(time.Minute)
			t = res(Fail(t, ActorAgent, "", now)).ok(tb)
		}
		if round == attempts {
			return t
		}
		t = res(Retry(t, ActorCTO, "", now)).ok(tb)
	}
}

func TestRecoveryActions(t *testing.T) {
	now := t0.Add(24 * time.Hour)
	exhausted := inCTOWith(t, InProgress, 1)
	exhausted.CTOAttempts = 2 // not reachable by moves: a hand-made record
	cases := []struct {
		name     string
		task     Task
		do       func(Task) (Task, []Effect, error)
		state    State
		attempts int
		failures map[State]int
		meta     Meta
		err      error
		msg      string
	}{
		{name: "retry returns to the state escalated from", task: inCTOWith(t, Testing, 0),
			do:    func(x Task) (Task, []Effect, error) { return Retry(x, ActorCTO, "again", now) },
			state: Testing, attempts: 1, meta: Meta{Action: ActRetry, CTOAttempts: 1}},
		{name: "guided retry records the note", task: inCTOWith(t, Testing, 1),
			do:    func(x Task) (Task, []Effect, error) { return GuidedRetry(x, ActorHuman, "mock the clock", now) },
			state: Testing, attempts: 2, meta: Meta{Action: ActGuidedRetry, Note: "mock the clock", CTOAttempts: 2}},
		{name: "retry needs cto_intervention", task: reach(t, Testing, ""),
			do:  func(x Task) (Task, []Effect, error) { return Retry(x, ActorCTO, "", now) },
			err: ErrIllegal, msg: "report a failure with fail"},
		{name: "retry of a human escalation", task: reach(t, HumanEscalation, Testing),
			do:  func(x Task) (Task, []Effect, error) { return Retry(x, ActorCTO, "", now) },
			err: ErrIllegal, msg: "a human resolves it"},
		{name: "no third CTO attempt", task: exhausted,
			do:  func(x Task) (Task, []Effect, error) { return Retry(x, ActorCTO, "", now) },
			err: ErrIllegal, msg: "escalate to a human"},
		{name: "rollback from a working state", task: reach(t, Testing, ""),
			do:    func(x Task) (Task, []Effect, error) { return Rollback(x, Planning, ActorHuman, "", now) },
			state: Planning, meta: Meta{Action: ActRollback}},
		{name: "rollback from cto_intervention is an attempt", task: inCTOWith(t, QualityReview, 0),
			do:    func(x Task) (Task, []Effect, error) { return Rollback(x, InProgress, ActorCTO, "", now) },
			state: InProgress, attempts: 1, meta: Meta{Action: ActRollback, CTOAttempts: 1}},
		{name: "rollback goes earlier", task: reach(t, Testing, ""),
			do:  func(x Task) (Task, []Effect, error) { return Rollback(x, Testing, ActorCTO, "", now) },
			err: ErrIllegal, msg: "one of pending, assigned, planning, validated, in_progress"},
		{name: "nothing before pending", task: fresh(t),
			do:  func(x Task) (Task, []Effect, error) { return Rollback(x, Pending, ActorCTO, "", now) },
			err: ErrIllegal, msg: "no state is earlier than pending"},
		{name: "skip passes the state", task: reach(t, Testing, ""),
			do:    func(x Task) (Task, []Effect, error) { return Skip(x, ActorCTO, "flaky suite", now) },
			state: QualityReview, meta: Meta{Action: ActSkip}},
		{name: "skip from cto_intervention passes the stuck state", task: inCTOWith(t, Committing, 0),
			do:    func(x Task) (Task, []Effect, error) { return Skip(x, ActorCTO, "no git", now) },
			state: Completed, attempts: 1, meta: Meta{Action: ActSkip, CTOAttempts: 1}},
		{name: "abandon from cto_intervention", task: inCTOWith(t, Planning, 0),
			do:    func(x Task) (Task, []Effect, error) { return Abandon(x, ActorHuman, "", now) },
			state: Abandoned, failures: map[State]int{Planning: 3}, meta: Meta{Action: ActAbandon}},
		{name: "resolve needs human_escalation", task: inCTOWith(t, Planning, 0),
			do:  func(x Task) (Task, []Effect, error) { return Resolve(x, ActorHuman, "", now) },
			err: ErrIllegal, msg: "the task is in cto_intervention"},
		{name: "escalate a working task", task: reach(t, Validated, ""),
			do:    func(x Task) (Task, []Effect, error) { return Escalate(x, ActorAgent, "unclear spec", now) },
			state: CTOIntervention, meta: Meta{Action: ActEscalate}},
		{name: "escalate from cto_intervention", task: reach(t, CTOIntervention, Validated),
			do:    func(x Task) (Task, []Effect, error) { return Escalate(x, ActorCTO, "", now) },
			state: HumanEscalation, meta: Meta{Action: ActEscalate}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, effs, err := tc.do(tc.task)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("err = %v, want %v containing %q", err, tc.err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tc.state || got.CTOAttempts != tc.attempts {
				t.Errorf("state %s, attempts %d; want %s, %d", got.State, got.CTOAttempts, tc.state, tc.attempts)
			}
			if diff := cmp.Diff(tc.failures, got.Failures, cmpEmpty); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.meta, effs[0].Meta); diff != "" {
				t.Errorf("meta (-want +got):\n%s", diff)
			}
			if vs := Check(got); len(vs) > 0 {
				t.Errorf("Check: %v", vs)
			}
		})
	}
}

func TestEscalateWithAttemptsUsedGoesToHuman(t *testing.T) {
	task := inCTOWith(t, InProgress, 1)
	now := task.Since.Add(time.Minute)
	task = res(Retry(task, ActorCTO, "", now)).ok(t)
	got, effs, err := Escalate(task, ActorAgent, "still stuck", now)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != HumanEscalation || got.EscalatedFrom != InProgress {
		t.Errorf("state %s from %s", got.State, got.EscalatedFrom)
	}
	if diff := cmp.Diff([]Kind{KindCTO, KindEscalated}, kinds(effs)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if effs[1].Actor != ActorSystem || effs[1].Reason != "2 CTO attempts used up" {
		t.Errorf("automatic escalation: %v", effs[1])
	}
}
