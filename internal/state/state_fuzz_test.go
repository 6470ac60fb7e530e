package state_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/taskie-dev/taskie/internal/state"
)

// FuzzStateDecode feeds arbitrary state.json content to Decode (docs/reliability.md#bad-input:
// malformed JSON, wrong types and unknown fields give a clear error with a
// position, or a state that is written back without loss).
// Seeds: f.Add below and testdata/fuzz/FuzzStateDecode.
func FuzzStateDecode(f *testing.F) {
	for _, s := range []string{
		`{"max_reviews":8,"current_task":"3","phase":"code-review","phase_iteration":2,"next_phase":"post-code-review","review_model":"opus","consecutive_clean":0,"tdd":false}`,
		`{"max_reviews":"5","current_task":3,"phase_iteration":"1","tdd":"true","enabled":"false","session_id":null,"x-custom":{"a":[1,2]}}`,
		`{"phase":"code-review",}`,
		`{"max_reviews":-1}`,
		`{"tdd":"maybe"}`,
		`{} {}`,
		`[]`,
		`null`,
		"{\n  \"phase\": \"new-plan\"\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := state.Decode("state.json", data)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		if s == nil {
			t.Fatal("Decode returned neither a state nor an error")
		}
		checkFixedPoint(t, s)
	})
}

// checkDecodeError requires a located, typed error.
func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	var se *state.SyntaxError
	var fe *state.FieldError
	switch {
	case errors.As(err, &se):
		if se.Line < 1 || se.Col < 1 {
			t.Fatalf("syntax error without a position: %+v", se)
		}
		if se.Path != "state.json" || se.Msg == "" {
			t.Fatalf("syntax error without path or message: %+v", se)
		}
	case errors.As(err, &fe):
		if fe.Path != "state.json" || fe.Field == "" || fe.Msg == "" {
			t.Fatalf("field error without path, field or message: %+v", fe)
		}
	default:
		t.Fatalf("error %T %q is neither *SyntaxError nor *FieldError", err, err)
	}
}

// checkFixedPoint requires Encode to write a file that decodes to the same
// state: Encode, Decode, Encode gives the same bytes.
func checkFixedPoint(t *testing.T, s *state.State) {
	t.Helper()
	enc := s.Encode()
	if !json.Valid(enc) {
		t.Fatalf("Encode wrote invalid JSON:\n%s", enc)
	}
	back, err := state.Decode("state.json", enc)
	if err != nil {
		t.Fatalf("Encode wrote a file Decode rejects: %v\n%s", err, enc)
	}
	if enc2 := back.Encode(); !bytes.Equal(enc, enc2) {
		t.Fatalf("Encode is not a fixed point:\nfirst:\n%s\nsecond:\n%s", enc, enc2)
	}
	if d := state.DiffOf(s, back); !d.Empty() {
		t.Fatalf("a decoded state differs from the one encoded: %+v", d)
	}
}

// FuzzStateApply builds an event delta from fuzzed JSON and applies it to
// a fresh state, as replaying an event log does: the result must encode to
// a file that decodes back to it, and replaying its full delta must
// rebuild the file exactly.
func FuzzStateApply(f *testing.F) {
	for _, s := range []string{
		`{"set":{"phase":"code-review","phase_iteration":1,"current_task":"2"}}`,
		`{"set":{"enabled":false,"session_id":"s1","x-extra":[1,{"b":null}]},"unset":["worktree"]}`,
		`{"set":{"max_reviews":"3","tdd":"TRUE"},"unset":["enabled","x-extra","phase"]}`,
		`{"set":{"max_reviews":-2}}`,
		`{"set":{"phase_iteration":1.5}}`,
		`{"set":{"enabled":"yes"}}`,
		`{"unset":["session_id","base_sha","nope"]}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d state.Delta
		if json.Unmarshal(data, &d) != nil {
			return
		}
		s, err := state.Apply(nil, d)
		if err != nil {
			var fe *state.FieldError
			if !errors.As(err, &fe) || fe.Path != "event" || fe.Msg == "" {
				t.Fatalf("Apply error is not a *FieldError naming the event: %T %v", err, err)
			}
			if _, ok := d.Set[fe.Field]; !ok {
				t.Fatalf("Apply error names field %q, which the delta does not set", fe.Field)
			}
			return
		}
		checkFixedPoint(t, s)
		replay, err := state.Apply(nil, state.Full(s))
		if err != nil {
			t.Fatalf("replaying the full delta of an applied state: %v", err)
		}
		if a, b := s.Encode(), replay.Encode(); !bytes.Equal(a, b) {
			t.Fatalf("replay does not rebuild the file:\napplied:\n%s\nreplayed:\n%s", a, b)
		}
		// Applying the delta again changes nothing more.
		twice, err := state.Apply(s, d)
		if err != nil {
			t.Fatalf("applying the delta a second time: %v", err)
		}
		if diff := state.DiffOf(s, twice); !diff.Empty() {
			t.Fatalf("the delta is not idempotent: %+v", diff)
		}
	})
}
