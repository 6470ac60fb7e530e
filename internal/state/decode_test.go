package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/taskie-dev/taskie/internal/domain"
)

var emptyEq = cmpopts.EquateEmpty()

func mustDecode(t *testing.T, data string) *State {
	t.Helper()
	s, err := Decode("state.json", []byte(data))
	if err != nil {
		t.Fatalf("Decode(%q): %v", data, err)
	}
	return s
}

func TestDecodeDefaults(t *testing.T) {
	got := mustDecode(t, `{}`)
	want := &State{MaxReviews: 8, Phase: "new-plan", ReviewModel: "opus"}
	if diff := cmp.Diff(want, got, emptyEq); diff != "" {
		t.Errorf("Decode({}) (-want +got):\n%s", diff)
	}
	if !got.IsEnabled() || got.Iteration() != 0 || got.Next() != "" || got.Task() != 0 {
		t.Errorf("accessors of a default state: enabled %v iteration %d next %q task %d",
			got.IsEnabled(), got.Iteration(), got.Next(), got.Task())
	}
}

func TestDecodeSpecExample(t *testing.T) {
	got := mustDecode(t, `{
  "max_reviews": 8,
  "current_task": "3",
  "phase": "code-review",
  "phase_iteration": 2,
  "next_phase": "post-code-review",
  "review_model": "opus",
  "consecutive_clean": 0,
  "tdd": false
}`)
	want := &State{MaxReviews: 8, CurrentTask: Opt[domain.TaskID](3), Phase: "code-review", PhaseIteration: Int(2),
		NextPhase: Opt[domain.Phase]("post-code-review"), ReviewModel: "opus"}
	if diff := cmp.Diff(want, got, emptyEq); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeTolerance(t *testing.T) {
	f, tr := false, true
	tests := []struct {
		name, in string
		want     func(*State)
	}{
		{"current_task as a number", `{"current_task": 3}`, func(s *State) { s.CurrentTask = Opt[domain.TaskID](3) }},
		{"current_task as a string", `{"current_task": "3"}`, func(s *State) { s.CurrentTask = Opt[domain.TaskID](3) }},
		{"current_task null", `{"current_task": null}`, func(s *State) {}},
		{"phase_iteration as a string", `{"phase_iteration": "2"}`, func(s *State) { s.PhaseIteration = Int(2) }},
		{"phase_iteration padded string", `{"phase_iteration": " 4 "}`, func(s *State) { s.PhaseIteration = Int(4) }},
		{"phase_iteration null", `{"phase_iteration": null}`, func(s *State) {}},
		{"phase_iteration 0 is not null", `{"phase_iteration": 0}`, func(s *State) { s.PhaseIteration = Int(0) }},
		{"max_reviews as a string", `{"max_reviews": "12"}`, func(s *State) { s.MaxReviews = 12 }},
		{"max_reviews 0", `{"max_reviews": 0}`, func(s *State) { s.MaxReviews = 0 }},
		{"max_reviews null keeps the default", `{"max_reviews": null}`, func(s *State) {}},
		{"consecutive_clean as a string", `{"consecutive_clean": "1"}`, func(s *State) { s.ConsecutiveClean = 1 }},
		{"consecutive_clean null", `{"consecutive_clean": null}`, func(s *State) {}},
		{"tdd as a string", `{"tdd": "true"}`, func(s *State) { s.TDD = true }},
		{"tdd true", `{"tdd": true}`, func(s *State) { s.TDD = true }},
		{"tdd null", `{"tdd": null}`, func(s *State) {}},
		{"enabled false", `{"enabled": false}`, func(s *State) { s.Enabled = &f }},
		{"enabled as a string", `{"enabled": "true"}`, func(s *State) { s.Enabled = &tr }},
		{"enabled null", `{"enabled": null}`, func(s *State) {}},
		{"next_phase null", `{"next_phase": null}`, func(s *State) {}},
		{"next_phase", `{"next_phase": "plan-review"}`, func(s *State) { s.NextPhase = Opt[domain.Phase]("plan-review") }},
		{"review_model null keeps the default", `{"review_model": null}`, func(s *State) {}},
		{"review_model", `{"review_model": "sonnet"}`, func(s *State) { s.ReviewModel = "sonnet" }},
		{"optional strings", `{"session_id": "s1", "worktree": "/w", "base_sha": "abc", "last_commit": 42}`, func(s *State) {
			s.SessionID, s.Worktree, s.BaseSHA, s.LastCommit = "s1", "/w", "abc", "42"
		}},
		{"optional strings null", `{"session_id": null, "worktree": null}`, func(s *State) {}},
		{"whitespace and a trailing newline", "\n\t{ \"phase\" : \"complete\" }\n\n", func(s *State) { s.Phase = "complete" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustDecode(t, tc.in)
			want := New()
			tc.want(want)
			if diff := cmp.Diff(want, got, emptyEq); diff != "" {
				t.Errorf("Decode(%s) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// "phase": null must not produce a state whose phase is "": taking the
// default (as review_model, max_reviews and tdd do) or an error naming the
// field would both be fine.
func TestDecodePhaseNull(t *testing.T) {
	s, err := Decode("state.json", []byte(`{"phase": null}`))
	var fe *FieldError
	if errors.As(err, &fe) && fe.Field == "phase" {
		return
	}
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if s.Phase != "new-plan" {
		t.Errorf("phase = %q, want the default new-plan", s.Phase)
	}
}

func TestUnknownFieldsPreserved(t *testing.T) {
	in := `{
  "phase": "code-review",
  "zeta": "last",
  "custom": {"nested": {"list": [1, 2, {"b": null}], "s": "x<y&z"}},
  "num": 1.50,
  "flag": false,
  "alpha": null
}`
	s := mustDecode(t, in)
	wantExtra := map[string]string{
		"zeta":   `"last"`,
		"custom": `{"nested": {"list": [1, 2, {"b": null}], "s": "x<y&z"}}`,
		"num":    `1.50`,
		"flag":   `false`,
		"alpha":  `null`,
	}
	gotExtra := map[string]string{}
	for k, v := range s.Extra {
		gotExtra[k] = string(v)
	}
	if diff := cmp.Diff(wantExtra, gotExtra); diff != "" {
		t.Errorf("Extra (-want +got):\n%s", diff)
	}
	out := string(s.Encode())
	want := `{
  "max_reviews": 8,
  "current_task": null,
  "phase": "code-review",
  "phase_iteration": null,
  "next_phase": null,
  "review_model": "opus",
  "consecutive_clean": 0,
  "tdd": false,
  "alpha": null,
  "custom": {"nested":{"list":[1,2,{"b":null}],"s":"x<y&z"}},
  "flag": false,
  "num": 1.50,
  "zeta": "last"
}
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Encode (-want +got):\n%s", diff)
	}
	// And through a second rewrite.
	again := mustDecode(t, out)
	if diff := cmp.Diff(s, again, emptyEq, cmp.Transformer("compact", compactRaw)); diff != "" {
		t.Errorf("Decode(Encode(s)) (-want +got):\n%s", diff)
	}
	if got := string(again.Encode()); got != out {
		t.Errorf("second Encode differs:\n%s\nvs\n%s", got, out)
	}
}

func compactRaw(r json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return string(r)
	}
	return b.String()
}

func TestEncodeFormat(t *testing.T) {
	f := false
	s := &State{MaxReviews: 3, CurrentTask: Opt[domain.TaskID](12), Phase: "post-code-review", PhaseIteration: Int(4),
		NextPhase: Opt[domain.Phase]("code-review"), ReviewModel: "sonnet", ConsecutiveClean: 1, TDD: true, Enabled: &f,
		SessionID: "sess-1", Worktree: "/wt", BaseSHA: "b1", LastCommit: "c2",
		Extra: map[string]json.RawMessage{"b": json.RawMessage(`[ 1 ]`), "a": json.RawMessage(`"x"`)}}
	want := `{
  "max_reviews": 3,
  "current_task": "12",
  "phase": "post-code-review",
  "phase_iteration": 4,
  "next_phase": "code-review",
  "review_model": "sonnet",
  "consecutive_clean": 1,
  "tdd": true,
  "enabled": false,
  "session_id": "sess-1",
  "worktree": "/wt",
  "base_sha": "b1",
  "last_commit": "c2",
  "a": "x",
  "b": [1]
}
`
	if diff := cmp.Diff(want, string(s.Encode())); diff != "" {
		t.Errorf("Encode (-want +got):\n%s", diff)
	}
	back := mustDecode(t, string(s.Encode()))
	s.Extra["b"] = json.RawMessage(`[1]`)
	if diff := cmp.Diff(s, back, emptyEq); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// current_task is a task id in memory and the string "3" in the file,
// whether the file said "3" or 3; an empty string stays one.
func TestCurrentTaskRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in, file string
		task     domain.TaskID
	}{
		{`{"current_task": "3"}`, `"3"`, 3},
		{`{"current_task": 3}`, `"3"`, 3},
		{`{"current_task": " 3 "}`, `"3"`, 3},
		{`{"current_task": null}`, `null`, 0},
		{`{"current_task": ""}`, `""`, 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s := mustDecode(t, tc.in)
			if s.Task() != tc.task {
				t.Errorf("Task() = %d, want %d", s.Task(), tc.task)
			}
			enc := s.Encode()
			if want := "\n  \"current_task\": " + tc.file + ",\n"; !strings.Contains(string(enc), want) {
				t.Errorf("Encode wrote\n%s\nwant a line %q", enc, want)
			}
			back := mustDecode(t, string(enc))
			if !bytes.Equal(back.Encode(), enc) {
				t.Errorf("a second rewrite changed the file:\n%s", back.Encode())
			}
			replay, err := Apply(nil, Full(s))
			if err != nil {
				t.Fatalf("replaying the full delta: %v", err)
			}
			if !bytes.Equal(replay.Encode(), enc) {
				t.Errorf("replaying the full delta wrote\n%s", replay.Encode())
			}
		})
	}
}

func TestEncodeNewOmitsOptionalFields(t *testing.T) {
	want := `{
  "max_reviews": 8,
  "current_task": null,
  "phase": "new-plan",
  "phase_iteration": null,
  "next_phase": null,
  "review_model": "opus",
  "consecutive_clean": 0,
  "tdd": false
}
`
	if diff := cmp.Diff(want, string(New().Encode())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	tests := []struct {
		name, in  string
		line, col int
		msg       string // substring
		bug       string // non-empty: known wrong today
	}{
		{name: "empty file", in: "", line: 1, col: 1, msg: "unexpected end of file"},
		{name: "only whitespace", in: "\n\n  ", line: 3, col: 3, msg: "unexpected end of file"},
		{name: "truncated object", in: `{"phase": "x"`, line: 1, col: 14, msg: "unexpected end of file"},
		{name: "truncated on line 2", in: "{\n  \"phase\":", line: 2, col: 11, msg: "unexpected end of file"},
		{name: "trailing data", in: `{"a":1}{"b":2}`, line: 1, col: 8, msg: "unexpected data after the JSON object"},
		{name: "trailing data after blank lines", in: "{}\n\nextra", line: 3, col: 1, msg: "unexpected data after the JSON object"},
		{name: "top-level null", in: "null", line: 1, col: 1, msg: "expected a JSON object, found null"},
		{name: "missing colon", in: `{"a" 1}`, line: 1, col: 6, msg: "invalid character '1' after object key",
			bug: "column is one past the offending character"},
		{name: "trailing comma", in: "{\n  \"phase\": \"x\",\n}", line: 3, col: 1, msg: "invalid character '}'",
			bug: "column is one past the offending character"},
		{name: "bad literal", in: `{"phase": nul}`, line: 1, col: 14, msg: "in literal null",
			bug: "column is one past the offending character"},
		{name: "array", in: "  \n  [1]", line: 2, col: 3, msg: "expected a JSON object",
			bug: "a top-level non-object is located after its first byte, not at it"},
		{name: "string", in: `"str"`, line: 1, col: 1, msg: "expected a JSON object",
			bug: "a top-level string is located at its end, not its start"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("/p/state.json", []byte(tc.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Decode(%q) = %v (%T), want a *SyntaxError", tc.in, err, err)
			}
			if se.Path != "/p/state.json" || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %+v: want path /p/state.json and a message containing %q", se, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "/p/state.json:") || !strings.Contains(err.Error(), "malformed JSON") {
				t.Errorf("Error() = %q", err)
			}
			if se.Line != tc.line || se.Col != tc.col {
				t.Errorf("position = %d:%d, want %d:%d", se.Line, se.Col, tc.line, tc.col)
			}
		})
	}
}

func TestFieldErrors(t *testing.T) {
	tests := []struct {
		in, field, msg string
	}{
		{`{"max_reviews": "x"}`, "max_reviews", `expected an integer, got "x"`},
		{`{"max_reviews": -1}`, "max_reviews", "must be ≥ 0, got -1"},
		{`{"max_reviews": "-3"}`, "max_reviews", "must be ≥ 0, got -3"},
		{`{"max_reviews": 2.5}`, "max_reviews", "expected an integer or null, got a number"},
		{`{"max_reviews": [8]}`, "max_reviews", "expected an integer or null, got an array"},
		{`{"consecutive_clean": -1}`, "consecutive_clean", "must be ≥ 0, got -1"},
		{`{"phase_iteration": true}`, "phase_iteration", "expected an integer or null, got a boolean"},
		{`{"current_task": {"id": 3}}`, "current_task", "expected a string or null, got an object"},
		{`{"current_task": [3]}`, "current_task", "expected a string or null, got an array"},
		{`{"current_task": "abc"}`, "current_task", `task id "abc" is not a positive integer`},
		{`{"current_task": "0"}`, "current_task", `task id "0" is not a positive integer`},
		{`{"current_task": -2}`, "current_task", `task id "-2" is not a positive integer`},
		{`{"current_task": 1.5}`, "current_task", `task id "1.5" is not a positive integer`},
		{`{"phase": false}`, "phase", "expected a string or null, got a boolean"},
		{`{"next_phase": {}}`, "next_phase", "expected a string or null, got an object"},
		{`{"review_model": ["opus"]}`, "review_model", "expected a string or null, got an array"},
		{`{"tdd": "maybe"}`, "tdd", `expected true or false, got "maybe"`},
		{`{"tdd": 1}`, "tdd", "expected true or false, got a number"},
		{`{"enabled": "no way"}`, "enabled", `expected true or false, got "no way"`},
		{`{"session_id": {}}`, "session_id", "expected a string or null, got an object"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			s, err := Decode("dir/state.json", []byte(tc.in))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode = %+v, %v; want a *FieldError", s, err)
			}
			if fe.Path != "dir/state.json" || fe.Field != tc.field || fe.Msg != tc.msg {
				t.Errorf("FieldError = %+v, want field %q msg %q", fe, tc.field, tc.msg)
			}
			want := `dir/state.json: field "` + tc.field + `": ` + tc.msg
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err, want)
			}
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := false
	s := &State{CurrentTask: Opt[domain.TaskID](1), NextPhase: Opt[domain.Phase]("code-review"), PhaseIteration: Int(2), Enabled: &f,
		Extra: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}
	c := s.Clone()
	*c.CurrentTask, *c.NextPhase, *c.PhaseIteration, *c.Enabled = 9, "x", 7, true
	c.Extra["k"] = json.RawMessage(`2`)
	c.Extra["new"] = json.RawMessage(`3`)
	if s.Task() != 1 || s.Next() != "code-review" || s.Iteration() != 2 || s.IsEnabled() || string(s.Extra["k"]) != "1" || len(s.Extra) != 1 {
		t.Errorf("changing the clone changed the original: %+v", s)
	}
}

func TestOptAndInt(t *testing.T) {
	if Opt[domain.Phase]("") != nil || Opt[domain.TaskID](0) != nil {
		t.Error("Opt of a zero value is not nil")
	}
	if p := Opt[domain.Phase]("a"); p == nil || *p != "a" {
		t.Error(`Opt("a")`)
	}
	if p := Opt[domain.TaskID](3); p == nil || *p != 3 {
		t.Error("Opt(3)")
	}
	if p := Int(0); p == nil || *p != 0 {
		t.Error("Int(0)")
	}
}
