package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// On a terminal `taskie findings` prints the cycle, its trend and an
// aligned table with a header; --open keeps the open findings.
func TestFindingsTable(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	root := t.TempDir()
	dir := filepath.Join(root, ".taskie", "plans", "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var l ledger.Ledger
	evs := ledger.Record(l, 1, ledger.Answer{Verdict: domain.Fail, Findings: []ledger.ReportedFinding{
		{Severity: domain.Blocker, Title: "nil map write", File: "internal/cache/cache.go", Line: 120, Status: ledger.Open},
		{Severity: domain.Nit, Title: "typo", Status: ledger.Open}}})
	for _, e := range evs {
		l = ledger.Fold(l, e)
	}
	fix, err := ledger.Fix(l, "F2", "spelling fixed")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	finished := events.Event{Plan: "p", Task: "1", Event: events.ReviewFinished, Meta: map[string]any{"review": "code-review", "iteration": 1, "cost_usd": 0.5}}
	for _, e := range append([]events.Event{finished}, ledgerlog.ToLog(ledgerlog.Series{Review: domain.CodeReview, Task: 1}, append(evs, fix))...) {
		b, _ := json.Marshal(e)
		log.Write(append(b, '\n'))
	}
	files := map[string]string{
		"plan.md": "# Plan\n", "tasks.md": "| Id | Status | Title |\n|----|--------|-------|\n| 1 | in-progress | one |\n", "task-1.md": "# Task 1\n",
		"state.json":   `{"max_reviews": 8, "current_task": "1", "phase": "code-review", "phase_iteration": 1, "next_phase": "post-code-review", "review_model": "sonnet", "consecutive_clean": 0, "tdd": false}`,
		"events.jsonl": log.String(),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		if code := Run(append([]string{"-C", root}, args...), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, TTY: true}); code != 0 {
			t.Fatalf("taskie %v: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	want := "code-review of task 1, review 1: 2 open\n\n" +
		"ID  SEVERITY  STATUS  OPENED  LOCATION                     TITLE          NOTE\n" +
		"F1  blocker   open    1       internal/cache/cache.go:120  nil map write\n" +
		"F2  nit       fixed?  1                                    typo           spelling fixed\n"
	if got := run("findings"); got != want {
		t.Errorf("findings on a terminal:\n%s\nwant:\n%s", got, want)
	}
	if got := run("findings", "--open"); strings.Contains(got, "F2") || !strings.Contains(got, "F1  blocker") {
		t.Errorf("findings --open:\n%s", got)
	}
	if got := run("status"); !strings.Contains(got, "findings: 2 open (code-review of task 1; now 1 open, 1 fixed, 0 declined; `taskie findings`)\n") ||
		!strings.Contains(got, "spent:   $0.50 on 1 review(s)\n") {
		t.Errorf("status:\n%s", got)
	}
}
