package history

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/events"
)

func TestMessage(t *testing.T) {
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
		if got := Message(tc.e); got != tc.want {
			t.Errorf("Message(%s) = %q, want %q", tc.e.Event, got, tc.want)
		}
	}
}

func TestHistoryRow(t *testing.T) {
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
		if got := strings.Join(HistoryRow(tc.e).Cells(), "|"); got != tc.want {
			t.Errorf("HistoryRow = %q\nwant         %q", got, tc.want)
		}
	}
	if got := oneLine(strings.Repeat("é", 100), 10); got != strings.Repeat("é", 9)+"…" {
		t.Errorf("oneLine clip = %q", got)
	}
}

func TestDuration(t *testing.T) {
	for ms, want := range map[int]string{850: "850ms", 45000: "45s", 125400: "2m5s"} {
		if got := Duration(ms); got != want {
			t.Errorf("Duration(%d) = %q, want %q", ms, got, want)
		}
	}
}
