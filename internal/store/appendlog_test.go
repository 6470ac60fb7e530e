package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/events/eventstest"
	"github.com/taskie-dev/taskie/internal/fsafe"
)

// logRoot is a repository root holding an event log at "log/events.jsonl".
func logRoot(t *testing.T) (*fsafe.Root, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := fsafe.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, filepath.Join(dir, "log")
}

func TestAppendLogRoundTrip(t *testing.T) {
	r, dir := logRoot(t)
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []events.Event{
		{TS: at, Plan: "p", Task: "3", Event: events.PhaseChange, From: "next-task", To: "code-review", Actor: "hook", Reason: "review due",
			Meta: map[string]any{"next_phase": "post-code-review", "phase_iteration": 1.0, "nothing": nil}},
		{TS: at, Plan: "p", Event: events.FieldSet, Actor: "cli", Meta: map[string]any{"field": "max_reviews", "value": "12"}},
		{TS: at, Plan: "p", Event: events.ReviewFinished},
	}
	if err := appendLog(r, "log/"+events.FileName, evs[:1], true); err != nil {
		t.Fatal(err)
	}
	if err := appendLog(r, "log/"+events.FileName, evs[1:], false); err != nil {
		t.Fatal(err)
	}
	got, warns, err := eventstest.Read(dir)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Read: %v, warnings %q", err, warns)
	}
	if diff := cmp.Diff(evs, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(events.Path(dir))
	lines := strings.Split(string(data), "\n")
	if len(lines) != 4 || lines[3] != "" {
		t.Fatalf("file is not 3 newline-terminated lines:\n%s", data)
	}
	wantLine := `{"ts":"2025-01-02T03:04:05Z","plan":"p","event":"FIELD_SET","actor":"cli","meta":{"field":"max_reviews","value":"12"}}`
	if lines[1] != wantLine {
		t.Errorf("line 2 = %s\nwant     %s", lines[1], wantLine)
	}
}

// Appending after a torn last line (a writer killed mid-append) keeps
// every new event readable.
func TestAppendLogAfterTornLine(t *testing.T) {
	r, dir := logRoot(t)
	good := `{"ts":"2026-01-01T00:00:00Z","plan":"p","event":"PHASE_CHANGE","from":"new-plan","to":"create-tasks"}` + "\n"
	torn := `{"ts":"2026-01-01T00:00:01Z","plan":"p","event":"REVI`
	if err := os.WriteFile(events.Path(dir), []byte(good+good+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	wantWarn := events.Path(dir) + ":3: skipped unreadable event line (torn write?)"
	rel := "log/" + events.FileName
	if err := appendLog(r, rel, []events.Event{{Plan: "p", Event: events.ReviewStarted}, {Plan: "p", Event: events.ReviewFailed}}, true); err != nil {
		t.Fatal(err)
	}
	got, warns, err := eventstest.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Event)
	}
	if diff := cmp.Diff([]string{events.PhaseChange, events.PhaseChange, events.ReviewStarted, events.ReviewFailed}, kinds); diff != "" {
		t.Errorf("events after the append (-want +got):\n%s", diff)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], wantWarn) {
		t.Errorf("warnings after the append = %q, want only the torn line 3", warns)
	}
	data, _ := os.ReadFile(events.Path(dir))
	if !strings.HasPrefix(string(data), good+good+torn+"\n{") || !strings.HasSuffix(string(data), "}\n") {
		t.Errorf("file after the append:\n%s", data)
	}

	// A later append does not add blank lines or new warnings.
	if err := appendLog(r, rel, []events.Event{{Plan: "p", Event: events.Progress}}, true); err != nil {
		t.Fatal(err)
	}
	got, warns, _ = eventstest.Read(dir)
	if len(got) != 5 || len(warns) != 1 {
		t.Errorf("after a second append: %d events, warnings %q", len(got), warns)
	}
}
