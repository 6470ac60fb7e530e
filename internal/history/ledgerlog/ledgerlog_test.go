package ledgerlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/state"
)

func mk(phase, next domain.Phase, task domain.TaskID, iter int) *state.State {
	s := state.New()
	s.Phase, s.NextPhase, s.CurrentTask, s.PhaseIteration = phase, state.Opt(next), state.Opt(task), state.Int(iter)
	return s
}

func TestCurrent(t *testing.T) {
	tests := []struct {
		name string
		s    *state.State
		want Series
		ok   bool
	}{
		{"implementing, code-review due", mk(domain.NextTask, domain.CodeReview, 3, 0), Series{domain.CodeReview, 3}, true},
		{"review done, post-review due", mk(domain.CodeReview, domain.PostCodeReview, 3, 2), Series{domain.CodeReview, 3}, true},
		{"post-review done, review due", mk(domain.PostCodeReview, domain.CodeReview, 3, 2), Series{domain.CodeReview, 3}, true},
		{"cycle passed, next task due", mk(domain.CodeReview, domain.CompleteTask, 3, 5), Series{domain.CodeReview, 3}, true},
		{"last task passed: all-code-review due", mk(domain.CodeReview, domain.AllCodeReview, 3, 0), Series{domain.AllCodeReview, 0}, true},
		{"plan-wide review: no task", mk(domain.PostPlanReview, domain.PlanReview, 3, 1), Series{domain.PlanReview, 0}, true},
		{"standalone post-review", mk(domain.PostTasksReview, "", 0, 1), Series{domain.TasksReview, 0}, true},
		{"no cycle", mk(domain.NextTask, "", 3, 0), Series{}, false},
		{"no state", nil, Series{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Current(tc.s)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Current = %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// roundTrip writes events as events.jsonl lines and reads them back.
func roundTrip(t *testing.T, evs []events.Event) []events.Event {
	t.Helper()
	var b bytes.Buffer
	for _, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	var out []events.Event
	if err := events.ScanReader(&b, "events.jsonl", func(e events.Event) { out = append(out, e) }, func(w string) { t.Error(w) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestToLogFromLogRoundTrip(t *testing.T) {
	s := Series{domain.CodeReview, 3}
	evs := []ledger.Event{
		{Kind: ledger.KindOpened, ID: "F1", Iteration: 1, Severity: domain.Major, Title: "error ignored", File: "b.go", Line: 20, Actor: ledger.ActorReviewer},
		{Kind: ledger.KindOpened, ID: "F2", Iteration: 1, Severity: domain.Nit, Title: "naming", Actor: ledger.ActorReviewer, Note: "reviewer's id \"F9\" is unknown; recorded as new"},
		{Kind: ledger.KindReviewed, Iteration: 1, Verdict: domain.Fail, Actor: ledger.ActorReviewer},
		{Kind: ledger.KindFixed, ID: "F1", Iteration: 1, Note: "checked the error", Actor: ledger.ActorPostReview},
		{Kind: ledger.KindDeclined, ID: "F2", Iteration: 1, Note: "house style", Actor: ledger.ActorPostReview},
		{Kind: ledger.KindReopened, ID: "F1", Iteration: 2, Severity: domain.Blocker, Actor: ledger.ActorReviewer},
		{Kind: ledger.KindSeverity, ID: "F1", Iteration: 3, Severity: domain.Minor, From: domain.Blocker, Actor: ledger.ActorReviewer},
		{Kind: ledger.KindResumed, Iteration: 2, Note: "accepted as is", Actor: ledger.ActorHuman},
	}
	logged := roundTrip(t, ToLog(s, evs))
	var back []ledger.Event
	for _, e := range logged {
		gs, le, ok := FromLog(e)
		if !ok || gs != s {
			t.Fatalf("FromLog(%+v) = %v %v", e, gs, ok)
		}
		back = append(back, le)
	}
	if diff := cmp.Diff(evs, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got := logged[0].Reason; got != "code-review: F1 (major) b.go:20 — error ignored" {
		t.Errorf("reason = %q", got)
	}
	if got := logged[4].Reason; got != "code-review: F2 declined: house style" {
		t.Errorf("reason = %q", got)
	}
	if got := logged[6].Reason; got != "code-review: F1 severity blocker → minor" {
		t.Errorf("reason = %q", got)
	}
	if logged[0].Task != "3" || logged[0].Event != "FINDING_OPENED" || logged[0].Actor != "reviewer" {
		t.Errorf("event = %+v", logged[0])
	}
	plan := ToLog(Series{Review: domain.PlanReview}, evs[:1])[0]
	if plan.Task != "" || plan.Meta["review"] != "plan-review" {
		t.Errorf("plan-review event = %+v", plan)
	}
}

func TestFromLogIgnoresOtherEvents(t *testing.T) {
	for _, e := range []events.Event{
		{Event: events.ReviewFinished, Meta: map[string]any{"review": "code-review"}},
		{Event: NeedsHuman, Meta: map[string]any{"review": "code-review"}},
		{Event: "FINDING_OPENED", Meta: map[string]any{"review": "next-task", "id": "F1"}},
		{Event: "FINDING_OPENED"},
	} {
		if _, _, ok := FromLog(e); ok {
			t.Errorf("FromLog(%+v) read a ledger event", e)
		}
	}
}

func finished(task string, review domain.Phase, it int, cost float64, meta map[string]any) events.Event {
	m := map[string]any{"review": string(review), "iteration": it, "cost_usd": cost, "duration_ms": 1500}
	for k, v := range meta {
		m[k] = v
	}
	return events.Event{Task: task, Event: events.ReviewFinished, Meta: m}
}

func opened(s Series, it int, id, title string) []events.Event {
	return ToLog(s, []ledger.Event{{Kind: ledger.KindOpened, ID: id, Iteration: it, Severity: domain.Major, Title: title, Actor: ledger.ActorReviewer},
		{Kind: ledger.KindReviewed, Iteration: it, Verdict: domain.Fail, Actor: ledger.ActorReviewer}})
}

func read(t *testing.T, evs []events.Event) *Reader {
	t.Helper()
	logged := roundTrip(t, evs)
	r, err := Read(func(fn func(events.Event), _ func(string)) error {
		for _, e := range logged {
			fn(e)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func titles(l ledger.Ledger) string {
	var ts []string
	for _, f := range l.Findings() {
		ts = append(ts, f.ID+"="+f.Title)
	}
	return strings.Join(ts, ",")
}

// A series' ledger starts afresh at its review 1; series do not mix; a
// review whose cycle moved on starts nothing.
func TestReaderCycles(t *testing.T) {
	t3, t4, plan := Series{domain.CodeReview, 3}, Series{domain.CodeReview, 4}, Series{Review: domain.PlanReview}
	var log []events.Event
	add := func(evs ...events.Event) { log = append(log, evs...) }
	add(finished("", domain.PlanReview, 1, 0.5, nil))
	add(opened(plan, 1, "F1", "plan gap")...)
	add(finished("3", domain.CodeReview, 1, 0.25, nil))
	add(opened(t3, 1, "F1", "old cycle")...)
	add(finished("3", domain.CodeReview, 2, 0.25, nil))
	add(opened(t3, 2, "F2", "old cycle too")...)
	add(finished("4", domain.CodeReview, 1, 0.25, nil))
	add(opened(t4, 1, "F1", "task 4")...)
	// Task 3 again: a new cycle.
	add(finished("3", domain.CodeReview, 1, 0.25, nil))
	add(opened(t3, 1, "F1", "new cycle")...)
	// A review 1 not recorded (its cycle moved on) starts nothing.
	add(finished("3", domain.CodeReview, 1, 0.25, map[string]any{"recorded": false}))
	add(events.Event{Event: events.ReviewFailed, Task: "3", Meta: map[string]any{"review": "code-review", "iteration": 2, "took_ms": 90000}})

	r := read(t, log)
	for s, want := range map[Series]string{plan: "F1=plan gap", t3: "F1=new cycle", t4: "F1=task 4", {Review: domain.AllCodeReview}: ""} {
		if got := titles(r.Ledger(s)); got != want {
			t.Errorf("ledger of %s = %q, want %q", s, got, want)
		}
	}
	if r.SpentUSD != 1.75 || r.Reviews != 6 {
		t.Errorf("spent %v on %d reviews, want 1.75 on 6", r.SpentUSD, r.Reviews)
	}
	if r.LastTook != 90*time.Second {
		t.Errorf("LastTook = %v, want the failed review's 1m30s", r.LastTook)
	}

	_, l, ok := r.Current(mk(domain.CodeReview, domain.PostCodeReview, 3, 1))
	if !ok || titles(l) != "F1=new cycle" {
		t.Errorf("Current ledger = %q %v", titles(l), ok)
	}
	if _, l, ok := r.Current(mk(domain.NextTask, domain.CodeReview, 3, 0)); !ok || len(l.Findings()) != 0 {
		t.Errorf("a cycle with no review yet has findings: %q", titles(l))
	}
}
