package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

func ev(kind, task, from, to string, meta map[string]any) events.Event {
	return events.Event{TS: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), Plan: "p", Task: task, Event: kind, From: from, To: to, Meta: meta}
}

func TestEventMessage(t *testing.T) {
	tests := []struct {
		e    events.Event
		want string
	}{
		{ev(events.ReviewFinished, "3", "", "", map[string]any{"review": "code-review", "iteration": 2.0, "model": "sonnet", "verdict": "PASS", "cost_usd": 0.123, "duration_ms": 45000.0}),
			"code-review 2 of task 3 by sonnet: PASS ($0.12, 45s)"},
		{ev(events.ReviewFinished, "", "", "", map[string]any{"review": "plan-review", "iteration": 1.0, "model": "opus", "verdict": "FAIL", "recorded": false}),
			"plan-review 1 by opus: FAIL, not recorded (state.json changed meanwhile)"},
		{ev(events.ReviewFinished, "", "", "", map[string]any{"review": "plan-review", "iteration": 1.0}), "plan-review 1: no readable verdict"},
		{ev(events.ReviewStarted, "3", "", "", map[string]any{"review": "code-review", "iteration": 1.0, "model": "opus"}), "code-review 1 of task 3 by opus started"},
		{ev(events.ReviewFailed, "0", "", "", map[string]any{"review": "all-code-review", "iteration": 1.0, "model": "opus", "failure": "timeout", "log": "x.log"}),
			"all-code-review 1 by opus failed: timeout (log x.log)"},
		{ev(events.PhaseChange, "3", "next-task", "code-review", map[string]any{"next_phase": "post-code-review", "phase_iteration": 1.0}),
			"task 3: next-task → code-review (next post-code-review, iteration 1)"},
		{ev(events.PhaseChange, "", "new-plan", "new-plan", map[string]any{"next_phase": nil, "phase_iteration": nil}), "new-plan (next none)"},
		{ev(events.FieldSet, "", "", "", map[string]any{"field": "max_reviews", "value": "12"}), "max_reviews = 12"},
		{ev(events.PlanCreated, "", "", "", map[string]any{"tdd": true, "auto": true}), "plan p created (automated, test-first)"},
		{ev(events.TaskStatus, "2", "", "done", nil), "task 2: status done"},
		{events.Event{Event: events.Progress, Task: "2", Reason: "session 1: wrote\nthe parser"}, "task 2: session 1: wrote the parser"},
		{events.Event{Event: events.ReviewsArchived, Reason: "a new plan-review cycle starts", Meta: map[string]any{"files": []any{"a", "b"}, "dir": ".taskie/archive/p"}},
			"a new plan-review cycle starts: 2 file(s) moved to .taskie/archive/p"},
		{events.Event{Event: "CTO_INTERVENTION", Task: "4", From: "a", To: "b", Reason: "stuck"}, "task 4: a → b: stuck"},
		{events.Event{Event: "MYSTERY"}, "-"},
		// the actor named; an unchanged from → to left out; a value set by the commit shown
		{events.Event{Event: events.Claim, Task: "2", Actor: "alice", Meta: map[string]any{"ttl": "30m0s"}}, "task 2: ttl=30m0s (by alice)"},
		{events.Event{Event: events.Paused, From: "next-task", To: "next-task", Actor: "cli", Reason: "pause"}, "pause"},
		{events.Event{Event: events.FieldSet, Task: "4", Actor: "agent-1", Meta: map[string]any{"field": "failed_tasks", "task": "4", "action": "escalate"},
			Set: map[string]json.RawMessage{"failed_tasks": json.RawMessage(`["4"]`)}}, `task 4: failed_tasks = ["4"] (action=escalate) (by agent-1)`},
	}
	for _, tc := range tests {
		if got := eventMessage(tc.e); got != tc.want {
			t.Errorf("eventMessage(%s) = %q, want %q", tc.e.Event, got, tc.want)
		}
	}
}

func TestEventHistoryRow(t *testing.T) {
	tests := []struct {
		e    events.Event
		want string
	}{
		{ev(events.PhaseChange, "3", "next-task", "code-review", map[string]any{"next_phase": "post-code-review", "phase_iteration": 1.0}),
			"2026-11-26T10:00:00Z|PHASE_CHANGE|3|-|next-task → code-review|next_phase=post-code-review phase_iteration=1"},
		{events.Event{Event: events.TaskStatus, Task: "2", To: "done", Reason: "x\ty"}, "0001-01-01T00:00:00Z|TASK_STATUS|2|-|→ done|x y"},
		{events.Event{Event: events.FieldSet, Reason: "r", Meta: map[string]any{"value": map[string]any{"a": 1.0}, "field": "f"}}, "0001-01-01T00:00:00Z|FIELD_SET|-|-|-|r; field=f value={\"a\":1}"},
		{events.Event{Event: "X"}, "0001-01-01T00:00:00Z|X|-|-|-|-"},
		// a commit whose phase stayed: no from → to; the actor named
		{events.Event{Event: events.LifecycleCommit, Task: "2", From: "post-code-review", To: "post-code-review", Actor: "cli", Reason: "task 2 claimed by alice"},
			"0001-01-01T00:00:00Z|LIFECYCLE_CHANGED|2|cli|-|task 2 claimed by alice"},
		{events.Event{Event: events.Claim, Task: "2", Actor: "alice"}, "0001-01-01T00:00:00Z|CLAIM|2|alice|-|-"},
	}
	for _, tc := range tests {
		if got := strings.Join(eventHistoryRow(tc.e).Cells(), "|"); got != tc.want {
			t.Errorf("eventHistoryRow = %q\nwant              %q", got, tc.want)
		}
	}
	if got := clipLine(strings.Repeat("é", 100), 10); got != strings.Repeat("é", 9)+"…" {
		t.Errorf("clipLine clip = %q", got)
	}
}

func TestMsDuration(t *testing.T) {
	for ms, want := range map[int]string{850: "850ms", 45000: "45s", 125400: "2m5s"} {
		if got := msDuration(ms); got != want {
			t.Errorf("msDuration(%d) = %q, want %q", ms, got, want)
		}
	}
}

// parityEvents cover every kind of message and meta value.
var parityEvents = []events.Event{
	ev(events.ReviewFinished, "3", "", "", map[string]any{"review": "code-review", "iteration": 2.0, "model": "sonnet", "verdict": "PASS", "cost_usd": 0.123, "duration_ms": 45000.0}),
	ev(events.ReviewFinished, "", "", "", map[string]any{"review": "plan-review", "iteration": 1.0, "model": "opus", "verdict": "FAIL", "recorded": false}),
	ev(events.ReviewStarted, "3", "", "", map[string]any{"review": "code-review", "iteration": 1.0, "model": "opus"}),
	ev(events.ReviewFailed, "0", "", "", map[string]any{"review": "all-code-review", "iteration": 1.0, "failure": "timeout", "log": "x.log"}),
	ev(events.PhaseChange, "3", "next-task", "code-review", map[string]any{"next_phase": "post-code-review", "phase_iteration": 1.0}),
	ev(events.PhaseChange, "", "new-plan", "new-plan", map[string]any{"next_phase": nil, "phase_iteration": nil}),
	ev(events.FieldSet, "", "", "", map[string]any{"field": "max_reviews", "value": "12"}),
	ev(events.FieldSet, "", "", "", map[string]any{"field": "f", "value": map[string]any{"a": 1.0, "b": []any{true, nil, "x<y"}}}),
	ev(events.PlanCreated, "", "", "", map[string]any{"tdd": true, "auto": true}),
	ev(events.TaskStatus, "2", "", "done", nil),
	{Event: events.Progress, Task: "2", Reason: "session 1: wrote\nthe parser\twith  tabs", TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))},
	{Event: events.ReviewsArchived, Reason: "a new cycle", Meta: map[string]any{"files": []any{"a", "b"}, "dir": ".taskie/archive/p"}},
	{Event: "CTO_INTERVENTION", Task: "4", From: "a", To: "b", Reason: "stuck", Meta: map[string]any{"n": 1e21, "s": "é ✓", "f": 0.5}},
	ev(string(lifecycle.KindFailure), "3", "quality_review", "quality_review", map[string]any{"failures": 2.0}),
	ev(string(lifecycle.KindRecovery), "3", "cto_intervention", "testing", map[string]any{"action": "guided_retry", "note": "use X", "cto_attempts": 1.0}),
	{Event: "MYSTERY"},
}

// TestEventTextLeanParity: an event read lean formats exactly as the decoded event.
func TestEventTextLeanParity(t *testing.T) {
	for _, e := range parityEvents {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var l events.Lean
		if err := events.ParseLean(line, &l); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if diff := cmp.Diff(eventHistoryRow(e), leanHistoryRow(&l)); diff != "" {
			t.Errorf("%s: row (-decoded +lean):\n%s", line, diff)
		}
		if got, want := leanEventMessage(&l), eventMessage(e); got != want {
			t.Errorf("%s: message %q, want %q", line, got, want)
		}
	}
}

func TestLifecycleEventMessages(t *testing.T) {
	for _, tc := range []struct {
		e    events.Event
		want string
	}{
		{events.Event{Event: "TASK_CREATED", Task: "3", To: "pending", Actor: "hook", Reason: "task created"}, "task 3: created in pending by hook: task created"},
		{events.Event{Event: "STATE_TRANSITION", Task: "3", From: "in_progress", To: "testing", Actor: "hook", Reason: "code review started"},
			"task 3: in_progress → testing by hook: code review started"},
		{events.Event{Event: "FAILURE", Task: "3", From: "quality_review", To: "quality_review", Actor: "hook", Meta: map[string]any{"failures": 2.0}},
			"task 3: failure 2 in quality_review by hook"},
		{events.Event{Event: "RECOVERY", Task: "3", From: "cto_intervention", To: "testing", Actor: "cto", Reason: "r",
			Meta: map[string]any{"action": "guided_retry", "note": "use X", "cto_attempts": 1.0}},
			"task 3: guided_retry cto_intervention → testing by cto (CTO attempt 1) [note: use X]: r"},
		{events.Event{Event: events.LifecycleCommit, Task: "3", Reason: "task fail 3 by agent"}, "task 3: task fail 3 by agent"},
	} {
		if got := eventMessage(tc.e); got != tc.want {
			t.Errorf("eventMessage(%s) = %q, want %q", tc.e.Event, got, tc.want)
		}
	}
}

// TestLeanSummaryByHand: meta written by hand (keys out of order, one
// repeated) reads as encoding/json would decode it.
func TestLeanSummaryByHand(t *testing.T) {
	var l events.Lean
	if err := events.ParseLean([]byte(`{"event":"X","meta":{"b":1,"a":"x  y","b":2.50,"c":{"z": 1}}}`), &l); err != nil {
		t.Fatal(err)
	}
	if got, want := leanHistoryRow(&l).Summary, `a=x y b=2.5 c={"z":1}`; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
