package events

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// payloads is one filled value of every payload, as its writers fill it.
var payloads = []any{
	PlanCreatedMeta{TDD: true},
	FieldSetMeta{Field: "failed_tasks", Value: "3", Task: "3", Action: "retry"},
	FieldSetMeta{Field: "phase", Value: "implement", By: "hand", Started: []string{"phase_iteration"}},
	ReviewStartedMeta{ReviewRun: ReviewRun{Review: "code-review", Iteration: 2, Model: "opus", Standalone: true}, Reviewer: "claude"},
	ReviewFinishedMeta{ReviewRun: ReviewRun{Review: "code-review", Iteration: 1, Model: "opus"}, Verdict: "FAIL",
		ReviewCost: ReviewCost{CostUSD: 0.25, DurationMS: 1200, TookMS: 1300, ReviewerSession: "s", Usage: Usage{Tokens: 900, Input: 700, Output: 200}},
		ReviewFile: "code-review-1-1.md", WroteFile: yes(), Clean: no(), Rule: "ratchet", Recorded: no()},
	ReviewFinishedMeta{ReviewRun: ReviewRun{Review: "cto-review", Iteration: 1, Model: "opus"}, Decision: "rollback",
		ReviewCost: ReviewCost{ReviewerSession: "s"}, CTOFile: "cto-1-1.md", RollbackTo: "implement"},
	ReviewFailedMeta{ReviewRun: ReviewRun{Review: "plan-review", Iteration: 1, Model: "sonnet"}, Failure: "timeout", Log: ".taskie/logs/x.log", TookMS: 5},
	FindingMeta{Review: "code-review", Iteration: 1, ID: "F1", Severity: "major", Title: "t", File: "a.go", Line: 3},
	NeedsHumanMeta{Review: "code-review", Iteration: 4, Reason: "ratchet", Going: []string{"F1"}},
	LifecycleMeta{Action: "guided_retry", Note: "n", Failures: 2, CTOAttempts: 1},
	LifecycleMeta{Level: "alert", State: "in_progress", Limit: "4h0m0s"},
	ClaimMeta{Expires: "2026-01-01T00:00:00Z", TTL: "1h0m0s", Token: 7, Place: "clone"},
	TaskResultMeta{Status: "failed", Attempt: 2, Action: "retry", Note: "n", Forced: Forced{ForcedOver: "a", Agent: "b"}},
	TaskResultMeta{Status: "complete", Commit: "abc", Output: "o", Files: []string{"a.go"}},
	ClaimOverrideMeta{Command: "task result", Holder: "a", Expires: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	TaskAddedMeta{Title: "t", DependsOn: []int{1}},
	ProgressMeta{Session: 3, Did: "d", Next: "n", Archived: "1–2"},
	WaveMeta{Wave: 1, Waves: 2, Tasks: []string{"1", "2"}},
	OwnerChangedMeta{Previous: "s1"},
	CheckpointMeta{Notes: []string{"x"}},
}

// TestMetaWritesWhatJSONWrites checks that an event's meta packed by Meta
// is written as encoding/json writes the payload (the json tags are the
// format), and that MetaOf reads it back whole, from the line as from the
// event not yet written.
func TestMetaWritesWhatJSONWrites(t *testing.T) {
	for _, p := range payloads {
		name := reflect.TypeOf(p).Name()
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(Meta(p))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(decode(t, want), decode(t, got)); d != "" {
				t.Errorf("Meta(%s) written (-json.Marshal +Meta):\n%s", name, d)
			}
			line, err := json.Marshal(Event{Event: "X", Meta: Meta(p)})
			if err != nil {
				t.Fatal(err)
			}
			var e Event
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatal(err)
			}
			for _, from := range []Event{e, {Meta: Meta(p)}} {
				back := reflect.New(reflect.TypeOf(p))
				if err := decodeMeta(from.Meta, back.Elem()); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(p, back.Elem().Interface()); d != "" {
					t.Errorf("read back (-written +read):\n%s", d)
				}
			}
		})
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMetaOfIsTolerant reads meta objects of old and hand-edited logs.
func TestMetaOfIsTolerant(t *testing.T) {
	line := func(meta string) Event {
		var e Event
		if err := json.Unmarshal([]byte(`{"event":"REVIEW_FINISHED","meta":`+meta+`}`), &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	tests := []struct {
		name, meta string
		want       ReviewFinishedMeta
		err        string
	}{
		{"no meta", `null`, ReviewFinishedMeta{}, ""},
		{"a numeric string", `{"iteration":" 2 ","cost_usd":"0.5"}`, ReviewFinishedMeta{ReviewRun: ReviewRun{Iteration: 2}, ReviewCost: ReviewCost{CostUSD: 0.5}}, ""},
		{"a fraction", `{"iteration":1.5,"verdict":"PASS"}`, ReviewFinishedMeta{Verdict: "PASS"}, "meta.iteration: 1.5 is not a whole number"},
		{"a wrong type", `{"verdict":3,"model":"opus","recorded":"no"}`, ReviewFinishedMeta{ReviewRun: ReviewRun{Model: "opus"}}, "meta.verdict: 3 is not a string\nmeta.recorded: no is not a bool"},
		{"null", `{"recorded":null,"review":null}`, ReviewFinishedMeta{}, ""},
		{"other keys", `{"whatever":[1],"review":"code-review"}`, ReviewFinishedMeta{ReviewRun: ReviewRun{Review: "code-review"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MetaOf[ReviewFinishedMeta](line(tt.meta))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
			if tt.err != "" && !BadMeta(err, strings.TrimPrefix(strings.SplitN(tt.err, ":", 2)[0], "meta.")) {
				t.Errorf("BadMeta(%v) does not name the first key", err)
			}
		})
	}
	pc, err := MetaOf[PhaseChangeMeta](line(`{"next_phase":null}`))
	if err != nil || !pc.NextPhase.Set || pc.NextPhase.V != nil || pc.PhaseIteration.Set {
		t.Errorf("PhaseChangeMeta: %+v, %v; want next_phase set to null, phase_iteration absent", pc, err)
	}
}

// BenchmarkMetaOf is the cost of reading one finished review's meta, as
// the folds of the log do for every review.
func BenchmarkMetaOf(b *testing.B) {
	var e Event
	raw, _ := json.Marshal(Event{Event: ReviewFinished, Meta: Meta(payloads[4])})
	if err := json.Unmarshal(raw, &e); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MetaOf[ReviewFinishedMeta](e); err != nil {
			b.Fatal(err)
		}
	}
}
