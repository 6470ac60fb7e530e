package lifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCheckGoodRecords(t *testing.T) {
	for _, s := range States() {
		task := reach(t, s, Testing)
		if vs := Check(task); len(vs) > 0 {
			t.Errorf("%s: %v", s, vs)
		}
	}
}

func TestCheckBadRecords(t *testing.T) {
	good := reach(t, Testing, "")
	edit := func(f func(*Task)) Task {
		x := good.clone()
		f(&x)
		return x
	}
	cases := []struct {
		name string
		task Task
		want []Rule
	}{
		{"no state", edit(func(x *Task) { x.State = "" }), []Rule{RuleOneState}},
		{"unknown state", edit(func(x *Task) { x.State = "done" }), []Rule{RuleOneState}},
		{"four failures", edit(func(x *Task) { x.Failures[Testing] = 4 }), []Rule{RuleFailures}},
		{"failures in completed", edit(func(x *Task) { x.Failures[Completed] = 1 }), []Rule{RuleTerminal}},
		{"three CTO attempts", edit(func(x *Task) { x.CTOAttempts = 3 }), []Rule{RuleCTOAttempts}},
		{"reached without its predecessor", edit(func(x *Task) { delete(x.Entered, InProgress) }), []Rule{RuleNoSkip}},
		{"left completed", edit(func(x *Task) { x.Entered[Completed] = time.Minute }), []Rule{RuleTerminal, RuleNoSkip}},
		{"escalated while working", edit(func(x *Task) { x.EscalatedFrom = InProgress }), []Rule{RuleOneState}},
		{"escalated from nowhere", edit(func(x *Task) { x.State = CTOIntervention }), []Rule{RuleOneState}},
		{"negative time", edit(func(x *Task) { x.Entered[Planning] = -time.Second }), []Rule{RuleTime}},
		{"entered before created", edit(func(x *Task) { x.Since = x.Created.Add(-time.Hour) }), []Rule{RuleTime}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []Rule
			for _, v := range Check(tc.task) {
				if v.Pos != -1 || v.Task != 1 || v.Msg == "" {
					t.Errorf("violation %+v", v)
				}
				got = append(got, v.Rule)
			}
			slices.Sort(got)
			slices.Sort(tc.want)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckLogHandEdits breaks good logs by hand and expects each break
// reported once, at its position.
func TestCheckLogHandEdits(t *testing.T) {
	completed, doneLog := reachLog(t, Completed, "")
	_, workLog := reachLog(t, InProgress, "")
	_, testLog := reachLog(t, Testing, "")
	at := completed.Since.Add(time.Hour)
	ef := func(k Kind, from, to State, a Actor, m Meta) Effect {
		return Effect{Task: 1, Kind: k, At: at, From: from, To: to, Actor: a, Meta: m}
	}
	plus := func(log []Effect, es ...Effect) []Effect { return append(slices.Clone(log), es...) }
	fourFailures := plus(workLog, slices.Repeat([]Effect{ef(KindFailure, InProgress, InProgress, ActorHook, Meta{})}, 4)...)
	third := thirdAttemptLog(t)
	cases := []struct {
		name string
		log  []Effect
		want []Violation
	}{
		{"good", doneLog, nil},
		{"out of completed", plus(doneLog, ef(KindTransition, Completed, InProgress, ActorHuman, Meta{})),
			[]Violation{{Pos: len(doneLog), Task: 1, Rule: RuleTerminal}}},
		{"failure in completed", plus(doneLog, ef(KindFailure, Completed, Completed, ActorHuman, Meta{})),
			[]Violation{{Pos: len(doneLog), Task: 1, Rule: RuleTerminal}}},
		{"four failures in one state", fourFailures,
			[]Violation{{Pos: len(workLog) + 3, Task: 1, Rule: RuleFailures}}},
		{"failure count edited", plus(workLog, ef(KindFailure, InProgress, InProgress, ActorHook, Meta{Failures: 2})),
			[]Violation{{Pos: len(workLog), Task: 1, Rule: RuleFailures}}},
		{"skipped states", plus(doneLog[:1], ef(KindTransition, Pending, InProgress, ActorAgent, Meta{})),
			[]Violation{{Pos: 1, Task: 1, Rule: RuleNoSkip}}},
		{"skip by an agent", plus(testLog, ef(KindRecovery, Testing, QualityReview, ActorAgent, Meta{Action: ActSkip})),
			[]Violation{{Pos: len(testLog), Task: 1, Rule: RuleNoSkip}}},
		{"third CTO attempt", third, []Violation{{Pos: len(third) - 1, Task: 1, Rule: RuleCTOAttempts}}},
		{"line deleted", slices.Delete(slices.Clone(doneLog), 3, 4),
			[]Violation{{Pos: 3, Task: 1, Rule: RuleOneState}}},
		{"task never created", plus(doneLog, Effect{Task: 9, Kind: KindFailure, At: at, From: Testing, To: Testing, Actor: ActorHook}),
			[]Violation{{Pos: len(doneLog), Task: 9, Rule: RuleOneState}}},
		{"created twice", plus(doneLog, doneLog[0]), []Violation{{Pos: len(doneLog), Task: 1, Rule: RuleOneState}}},
		{"time goes backwards", plus(workLog, Effect{Task: 1, Kind: KindTransition, At: t0, From: InProgress, To: Testing, Actor: ActorAgent}),
			[]Violation{{Pos: len(workLog), Task: 1, Rule: RuleTime}}},
		{"escalation without failures", plus(workLog, ef(KindCTO, InProgress, CTOIntervention, ActorSystem, Meta{})),
			[]Violation{{Pos: len(workLog), Task: 1, Rule: RuleLegal}}},
		{"escalation by the hook", plus(workLog, ef(KindCTO, InProgress, CTOIntervention, ActorHook, Meta{Action: ActEscalate})),
			[]Violation{{Pos: len(workLog), Task: 1, Rule: RuleLegal}}},
		{"unknown kind", plus(workLog, ef("NOTE", InProgress, InProgress, ActorHook, Meta{})),
			[]Violation{{Pos: len(workLog), Task: 1, Rule: RuleLegal}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckLog(tc.log)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Violation{}, "Msg")); diff != "" {
				t.Errorf("CheckLog (-want +got):\n%s", diff)
			}
			for _, v := range got {
				t.Log(v)
			}
			_, err := Replay(tc.log)
			if (err == nil) != (tc.want == nil) {
				t.Errorf("Replay err = %v", err)
			}
			if err != nil && err.(Violation).Pos != tc.want[0].Pos {
				t.Errorf("Replay stopped at %v, want position %d", err, tc.want[0].Pos)
			}
		})
	}
}

// thirdAttemptLog is a real log in which a task used both CTO attempts
// and was escalated again, with its automatic move to human_escalation
// replaced by a hand-written third retry.
func thirdAttemptLog(tb testing.TB) []Effect {
	tb.Helper()
	task, log := reachLog(tb, InProgress, "")
	now := task.Since
	do := func(r result) {
		tb.Helper()
		task, log = r.ok(tb), append(log, r.effs...)
	}
	for range 2 {
		for range MaxFailures {
			now = now.Add(time.Minute)
			do(res(Fail(task, ActorAgent, "", now)))
		}
		do(res(Retry(task, ActorCTO, "", now)))
	}
	do(res(Escalate(task, ActorAgent, "", now)))
	log = log[:len(log)-1] // the automatic ESCALATED
	return append(log, Effect{Task: 1, Kind: KindRecovery, At: now, From: CTOIntervention, To: InProgress, Actor: ActorCTO, Meta: Meta{Action: ActRetry}})
}

func TestViolationString(t *testing.T) {
	v := Violation{Pos: 12, Task: 3, Rule: RuleTerminal, Msg: "completed is terminal"}
	if got, want := v.String(), "effect 12: task 3: completed is terminal (terminal states do not move)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	v.Pos = -1
	if got, want := v.Error(), "task 3: completed is terminal (terminal states do not move)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
