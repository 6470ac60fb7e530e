package events

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var fixed = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func fixClock(t *testing.T) {
	old := Now
	Now = func() time.Time { return fixed }
	t.Cleanup(func() { Now = old })
}

func TestAppendReadRoundTrip(t *testing.T) {
	fixClock(t)
	dir := t.TempDir()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []Event{
		{Plan: "p", Task: "3", Event: PhaseChange, From: "next-task", To: "code-review", Actor: "hook", Reason: "review due",
			Meta: map[string]any{"next_phase": "post-code-review", "phase_iteration": 1.0, "nothing": nil}},
		{TS: at, Plan: "p", Event: FieldSet, Actor: "cli", Meta: map[string]any{"field": "max_reviews", "value": "12"}},
	}
	if err := Append(dir, evs[0]); err != nil {
		t.Fatal(err)
	}
	if err := Append(dir, evs[1], Event{Plan: "p", Event: ReviewFinished}); err != nil {
		t.Fatal(err)
	}
	got, warns, err := Read(dir)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Read: %v, warnings %q", err, warns)
	}
	want := []Event{evs[0], evs[1], {Plan: "p", Event: ReviewFinished}}
	want[0].TS, want[2].TS = fixed, fixed
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(Path(dir))
	lines := strings.Split(string(data), "\n")
	if len(lines) != 4 || lines[3] != "" {
		t.Fatalf("file is not 3 newline-terminated lines:\n%s", data)
	}
	wantLine := `{"ts":"2025-01-02T03:04:05Z","plan":"p","event":"FIELD_SET","actor":"cli","meta":{"field":"max_reviews","value":"12"}}`
	if lines[1] != wantLine {
		t.Errorf("line 2 = %s\nwant     %s", lines[1], wantLine)
	}
}

func TestAppendNothing(t *testing.T) {
	dir := t.TempDir()
	if err := Append(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Path(dir)); !os.IsNotExist(err) {
		t.Errorf("Append() without events created the log: %v", err)
	}
	got, warns, err := Read(dir)
	if got != nil || warns != nil || err != nil {
		t.Errorf("Read of a missing log = %v, %v, %v", got, warns, err)
	}
}

func TestTornLastLine(t *testing.T) {
	fixClock(t)
	dir := t.TempDir()
	good := `{"ts":"2026-01-01T00:00:00Z","plan":"p","event":"PHASE_CHANGE","from":"new-plan","to":"create-tasks"}` + "\n"
	torn := `{"ts":"2026-01-01T00:00:01Z","plan":"p","event":"REVI`
	if err := os.WriteFile(Path(dir), []byte(good+good+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	got, warns, err := Read(dir)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(got) != 2 || got[1].To != "create-tasks" {
		t.Errorf("events = %+v, want the 2 complete lines", got)
	}
	wantWarn := Path(dir) + ":3: skipped unreadable event line (torn write?)"
	if len(warns) != 1 || !strings.HasPrefix(warns[0], wantWarn) {
		t.Fatalf("warnings = %q, want one starting %q", warns, wantWarn)
	}

	// Appending after the torn line keeps every new event readable.
	if err := Append(dir, Event{Plan: "p", Event: ReviewStarted}, Event{Plan: "p", Event: ReviewFailed}); err != nil {
		t.Fatal(err)
	}
	got, warns, err = Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Event)
	}
	if diff := cmp.Diff([]string{PhaseChange, PhaseChange, ReviewStarted, ReviewFailed}, kinds); diff != "" {
		t.Errorf("events after the append (-want +got):\n%s", diff)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], wantWarn) {
		t.Errorf("warnings after the append = %q, want only the torn line 3", warns)
	}
	data, _ := os.ReadFile(Path(dir))
	if !strings.HasPrefix(string(data), good+good+torn+"\n{") || !strings.HasSuffix(string(data), "}\n") {
		t.Errorf("file after the append:\n%s", data)
	}

	// A later append does not add blank lines or new warnings.
	if err := Append(dir, Event{Plan: "p", Event: Progress}); err != nil {
		t.Fatal(err)
	}
	got, warns, _ = Read(dir)
	if len(got) != 5 || len(warns) != 1 {
		t.Errorf("after a second append: %d events, warnings %q", len(got), warns)
	}
}

func TestScanSkipsBadLinesAndBlankLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 200<<10) // longer than bufio's default token
	content := fmt.Sprintf("%s\n\n   \nnot json\n%s\n",
		`{"ts":"2026-01-01T00:00:00Z","plan":"p","event":"A"}`,
		`{"ts":"2026-01-01T00:00:00Z","plan":"p","event":"B","reason":"`+long+`"}`)
	if err := os.WriteFile(Path(dir), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var kinds, warns []string
	err := Scan(dir, func(e Event) { kinds = append(kinds, e.Event) }, func(w string) { warns = append(warns, w) })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A", "B"}, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], Path(dir)+":4: ") {
		t.Errorf("warnings = %q, want one for line 4", warns)
	}
}

func TestNowIsUTCSeconds(t *testing.T) {
	n := Now()
	if n.Location() != time.UTC || n.Nanosecond() != 0 {
		t.Errorf("Now() = %v, want UTC truncated to the second", n)
	}
}
