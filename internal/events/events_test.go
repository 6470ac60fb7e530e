package events

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scanFile streams the log of the plan directory dir, as the store does.
func scanFile(dir string, fn func(Event), warn func(string)) error {
	f, err := os.Open(Path(dir))
	if err != nil {
		return err
	}
	defer f.Close()
	return ScanReader(f, Path(dir), fn, warn)
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	good := `{"ts":"2026-01-01T00:00:00Z","plan":"p","event":"PHASE_CHANGE","from":"new-plan","to":"create-tasks"}` + "\n"
	torn := `{"ts":"2026-01-01T00:00:01Z","plan":"p","event":"REVI`
	if err := os.WriteFile(Path(dir), []byte(good+good+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []Event
	var warns []string
	err := scanFile(dir, func(e Event) { got = append(got, e) }, func(w string) { warns = append(warns, w) })
	if err != nil {
		t.Fatalf("ScanReader: %v", err)
	}
	if len(got) != 2 || got[1].To != "create-tasks" {
		t.Errorf("events = %+v, want the 2 complete lines", got)
	}
	wantWarn := Path(dir) + ":3: skipped unreadable event line (torn write?)"
	if len(warns) != 1 || !strings.HasPrefix(warns[0], wantWarn) {
		t.Fatalf("warnings = %q, want one starting %q", warns, wantWarn)
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
	err := scanFile(dir, func(e Event) { kinds = append(kinds, e.Event) }, func(w string) { warns = append(warns, w) })
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
