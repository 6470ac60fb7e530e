package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/events"
)

// TestAlignedRows: on a terminal, history's columns have fixed widths, so
// every line is aligned without buffering the output; a longer value
// pushes the rest of its line only. A from → to that did not change is "-".
func TestAlignedRows(t *testing.T) {
	lines := []string{
		`{"ts":"2026-03-01T09:00:00Z","plan":"p","task":"3","event":"FAILURE","from":"quality_review","to":"quality_review","actor":"hook","meta":{"failures":1}}`,
		`{"ts":"2026-03-01T09:01:00Z","plan":"p","event":"PLAN_CREATED","meta":{"auto":true}}`,
		`{"ts":"2026-03-01T09:02:00Z","plan":"p","task":"12345","event":"PHASE_CHANGE","from":"post-all-code-review","to":"all-code-review","reason":"r"}`,
	}
	var out []string
	for _, line := range lines {
		var l events.Lean
		if err := events.ParseLean([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(alignedRows{}.line(nil, &l)))
	}
	want := []string{
		"2026-03-01T09:00:00Z  FAILURE            3     hook        -                                 failures=1\n",
		"2026-03-01T09:01:00Z  PLAN_CREATED       -     -           -                                 auto=true\n",
		"2026-03-01T09:02:00Z  PHASE_CHANGE       12345  -           post-all-code-review → all-code-review  r\n",
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("line %d:\n%q\nwant\n%q", i, out[i], want[i])
		}
	}
}

// TestAppendJSONString: log --json escapes like encoding/json reads back.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"plain", `quo"te \ back`, "tab\tnew\nline\r\x01", "é ✓ \u2028", "bad \xff utf8", ""} {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if got != want {
			t.Errorf("round trip of %q = %q", s, got)
		}
	}
}

func TestHasTaskRow(t *testing.T) {
	table := "| Id | Status |\n|----|--------|\n| 1 | done |\n|  12  | pending \\| x |\n"
	for id, want := range map[string]bool{"1": true, "12": true, "2": false, "Status": false} {
		if got := hasTaskRow([]byte(table), id); got != want {
			t.Errorf("hasTaskRow(%s) = %v", id, got)
		}
	}
	if hasTaskRow([]byte("| Title | Id |\n|---|---|\n| 1 | 7 |\n"), "1") {
		t.Error("a table whose first column is not Id is not looked up")
	}
}
