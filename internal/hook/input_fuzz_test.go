package hook_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/hook"
)

// FuzzHookInput feeds arbitrary stdin to the hook decoder (docs/reliability.md#bad-input: empty,
// not JSON or huge input must allow with a warning, never panic or hang).
// Seeds: f.Add below and testdata/fuzz/FuzzHookInput.
func FuzzHookInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"abc","cwd":"/repo","transcript_path":"/tmp/t.jsonl","hook_event_name":"Stop","stop_hook_active":false}`,
		`{"session_id":"abc","hook_event_name":"Stop","stop_hook_active":"TRUE","last_assistant_message":"done"}`,
		`{"cwd":"/repo"}` + "\n" + `{"cwd":"/other"}`,
		`{"cwd":"/repo"`,
		`null`,
		`[1,2,3]`,
		`"Stop"`,
		"",
		" \n\t",
		`{"cwd":42}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in1, err1 := hook.Decode(data)
		in2, err2 := hook.Decode(data)
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(in1, in2) {
			t.Fatalf("Decode is not deterministic: %+v, %v then %+v, %v", in1, err1, in2, err2)
		}
		if err1 != nil {
			checkInputError(t, "Decode", err1)
			if !reflect.DeepEqual(in1, hook.Input{}) {
				t.Errorf("Decode failed but returned a non-zero input %+v", in1)
			}
		}

		start := time.Now()
		got, err := hook.ReadInput(bytes.NewReader(data), time.Second)
		// A reader that ends is always read to its end at once: the
		// deadline is only for a pipe that stays open.
		if d := time.Since(start); d >= time.Second {
			t.Fatalf("ReadInput of %d bytes took %s (deadline 1s): %v", len(data), d, err)
		}
		if err != nil {
			checkInputError(t, "ReadInput", err)
		}
		// Stdin that Decode accepts as a whole is read the same way.
		// (Decode also trims Unicode spaces that are not JSON whitespace,
		// so only compare inputs padded with JSON whitespace.)
		jsonPadded := len(bytes.TrimSpace(data)) == len(bytes.Trim(data, " \t\r\n"))
		if err1 == nil && jsonPadded {
			if err != nil {
				t.Fatalf("Decode accepts the input, ReadInput does not: %v", err)
			}
			if !reflect.DeepEqual(got, in1) {
				t.Fatalf("ReadInput = %+v, Decode = %+v", got, in1)
			}
		}
		// ReadInput is deterministic too.
		again, errAgain := hook.ReadInput(bytes.NewReader(data), time.Second)
		if (err == nil) != (errAgain == nil) || !reflect.DeepEqual(got, again) {
			t.Fatalf("ReadInput is not deterministic: %+v, %v then %+v, %v", got, err, again, errAgain)
		}
	})
}

// checkInputError requires a message a user can act on: non-empty and
// naming the hook input.
func checkInputError(t *testing.T, fn string, err error) {
	t.Helper()
	msg := err.Error()
	if strings.TrimSpace(msg) == "" {
		t.Fatalf("%s: empty error message", fn)
	}
	if !strings.Contains(msg, "hook input") {
		t.Errorf("%s: error %q does not say it is about the hook input", fn, msg)
	}
}
