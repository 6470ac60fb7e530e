package events_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/events"
)

// FuzzEventsScan feeds arbitrary events.jsonl content to ScanReader
// (docs/reliability.md#bad-input: a torn or garbled line is skipped with a warning, never fatal).
// Seeds: f.Add below and testdata/fuzz/FuzzEventsScan.
func FuzzEventsScan(f *testing.F) {
	for _, s := range []string{
		`{"ts":"2025-06-01T10:00:00Z","plan":"p1","event":"PHASE_CHANGE","from":"new-plan","to":"plan-review","actor":"hook"}` + "\n" +
			`{"ts":"2025-06-01T10:01:00Z","plan":"p1","event":"STATE_TRANSITION","set":{"phase":"plan-review","phase_iteration":1},"unset":["worktree"],"sha":"ab12","prev":"cd34"}` + "\n",
		`{"ts":"2025-06-01T10:00:00Z","plan":"p1","event":"TASK_STATUS","task":"2","tasks":{"2":"done"},"meta":{"n":1.5,"x":[null,true]}}` + "\n" + `{"ts":"2025-06-01T10:0`,
		"\n\n  \r\n{}\r\n",
		`{"ts":"yesterday","plan":1}` + "\n" + `[1,2]` + "\n" + `null`,
		`{"event":"REVIEWS_ARCHIVED","archive":{"dir":".taskie/archive","files":["plan-review-1.md"]}}`,
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var evs []events.Event
		var warns []string
		err := events.ScanReader(bytes.NewReader(data), "events.jsonl",
			func(e events.Event) { evs = append(evs, e) },
			func(w string) { warns = append(warns, w) })
		if err != nil {
			t.Fatalf("ScanReader failed on %d bytes: %v", len(data), err)
		}
		// Every line with content is one event or one warning; blank
		// lines are neither.
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if got := len(evs) + len(warns); got != lines {
			t.Fatalf("%d events + %d warnings for %d non-blank lines", len(evs), len(warns), lines)
		}
		for _, w := range warns {
			if !strings.HasPrefix(w, "events.jsonl:") || !strings.Contains(w, "skipped") {
				t.Errorf("warning %q does not name the file, line and what was done", w)
			}
		}
		// An event read back can be written again (recovery and replay
		// append events they read), and reads back the same.
		for _, e := range evs {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("an event read from the log cannot be written back: %v (%+v)", err, e)
			}
			if bytes.ContainsAny(line, "\n\r") {
				t.Fatalf("an event encodes over several lines: %q", line)
			}
			var back []events.Event
			if err := events.ScanReader(bytes.NewReader(line), "again", func(e events.Event) { back = append(back, e) },
				func(w string) { t.Errorf("rewritten event unreadable: %s", w) }); err != nil {
				t.Fatal(err)
			}
			if len(back) != 1 {
				t.Fatalf("rewritten event %q read as %d events", line, len(back))
			}
			again, _ := json.Marshal(back[0])
			if !bytes.Equal(line, again) {
				t.Fatalf("event changed when written and read again:\n%s\n%s", line, again)
			}
		}
	})
}
