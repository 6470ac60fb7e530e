package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
)

// TestEncodeDecodeRoundTrip: records written by real moves survive
// Encode and Decode unchanged, and Encode is canonical (Decode then
// Encode gives the same bytes).
func TestEncodeDecodeRoundTrip(t *testing.T) {
	for seed := range uint64(10) {
		s := newSim(seed)
		for range 300 {
			s.step(6)
		}
		data := Encode(s.tasks)
		got, err := Decode(data)
		if err != nil {
			t.Fatalf("seed %d: Decode: %v\n%s", seed, err, data)
		}
		if diff := cmp.Diff(s.tasks, got); diff != "" {
			t.Fatalf("seed %d: round trip (-want +got):\n%s", seed, diff)
		}
		if again := Encode(got); string(again) != string(data) {
			t.Fatalf("seed %d: Encode is not canonical:\n%s\n%s", seed, data, again)
		}
	}
}

func TestEncodeForm(t *testing.T) {
	task := reach(t, QualityReview, "")
	task = res(Fail(task, ActorHook, "red", task.Since.Add(time.Minute))).ok(t)
	other := reach(t, CTOIntervention, Testing)
	other.ID = 12
	got := string(Encode(map[domain.TaskID]Task{12: other, 1: task}))
	want := `{"1":{"state":"quality_review","since":"2026-03-01T09:06:00Z","created":"2026-03-01T09:00:00Z",` +
		`"failures":{"quality_review":1},"time":{"pending":60,"assigned":60,"planning":60,"validated":60,"in_progress":60,"testing":60}},` +
		`"12":{"state":"cto_intervention","since":"2026-03-01T09:06:00Z","created":"2026-03-01T09:00:00Z","escalated_from":"testing",` +
		`"time":{"pending":60,"assigned":60,"planning":60,"validated":60,"in_progress":60,"testing":60}}}`
	if got != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}
	if Encode(nil) != nil || Encode(map[domain.TaskID]Task{}) != nil {
		t.Error("no records should encode to nothing")
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[]`, "cannot unmarshal array"},
		{`{"x":{}}`, `key "x" is not a task id`},
		{`{"0":{}}`, `key "0" is not a task id`},
		{`{"1":{"state":"pending","since":"yesterday","created":"2026-03-01T09:00:00Z"}}`, `lifecycle.1: since: "yesterday" is not an RFC 3339 time`},
		{`{"1":{"state":"pending","since":"2026-03-01T09:00:00Z","created":"2026-03-01T09:00:00Z","colour":"red"}}`, `unknown field "colour"`},
		{`{"1":{"state":"pending","since":"2026-03-01T09:00:00Z","created":"2026-03-01T09:00:00Z","time":{"pending":1.5}}}`, "not a whole number"},
		{`{"1":{"state":3}}`, "cannot unmarshal number"},
	} {
		_, err := Decode([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	for _, empty := range []string{"", "null", "{}"} {
		if got, err := Decode([]byte(empty)); err != nil || len(got) != 0 {
			t.Errorf("Decode(%q) = %v, %v; want no records", empty, got, err)
		}
	}
}

// TestDecodeKeepsBrokenRecords: Decode judges the form only; what a
// hand-edited record says is for Check to report.
func TestDecodeKeepsBrokenRecords(t *testing.T) {
	got, err := Decode([]byte(`{"4":{"state":"flying","since":"2026-03-01T09:00:00Z","created":"2026-03-01T09:00:00Z","failures":{"testing":5},"cto_attempts":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	var rules []Rule
	for _, v := range Check(got[4]) {
		rules = append(rules, v.Rule)
	}
	want := []Rule{RuleOneState, RuleFailures, RuleCTOAttempts}
	if diff := cmp.Diff(want, rules); diff != "" {
		t.Errorf("Check rules (-want +got):\n%s", diff)
	}
}

// TestMovesCheckInvariants: every move checks the record it returns, so a
// record broken by hand is refused instead of carried on.
func TestMovesCheckInvariants(t *testing.T) {
	task := reach(t, Testing, "")
	task.CTOAttempts = 3
	_, effs, err := Move(task, QualityReview, ActorAgent, "", task.Since.Add(time.Minute))
	if !errors.Is(err, ErrInvalid) || effs != nil || !strings.Contains(err.Error(), "CTO attempts ≤ 2") {
		t.Errorf("Move on a broken record = %v, %v", effs, err)
	}
}
