package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookStopFastPathClock runs the built binary's `taskie hook stop`,
// which main runs without the command tree, and checks that it takes its
// clock from TASKIE_NOW like every other command (the events it writes
// carry that time), and that a TASKIE_NOW that does not parse is a warning
// that lets the stop through.
func TestHookStopFastPathClock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "taskie")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name, now, wantTS, wantErr string
	}{
		{"clock set", "2026-03-01T09:10:00Z", "2026-03-01T09:10:00Z", ""},
		{"bad clock", "yesterday", "", `TASKIE_NOW="yesterday" is not an RFC 3339 time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := plan(t)
			cmd := exec.Command(bin, "hook", "stop")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TASKIE_NOW="+tc.now, "TASKIE_HOOK_SKIP=", "CLAUDECODE=")
			cmd.Stdin = strings.NewReader(`{"session_id":"s1","cwd":` + quote(dir) + `,"stop_hook_active":false,"hook_event_name":"Stop"}`)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("hook stop: %v\n%s", err, stderr.String())
			}
			if tc.wantErr != "" && !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr = %q, want a warning containing %q", stderr.String(), tc.wantErr)
			}
			data, err := os.ReadFile(filepath.Join(dir, ".taskie", "plans", "p", "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
				var e struct{ TS, Actor string }
				if err := json.Unmarshal(line, &e); err != nil {
					t.Fatalf("event %s: %v", line, err)
				}
				if e.Actor != "hook" {
					continue
				}
				n++
				if tc.wantTS != "" && e.TS != tc.wantTS {
					t.Errorf("hook event at %s, want TASKIE_NOW %s: %s", e.TS, tc.wantTS, line)
				}
			}
			if n == 0 {
				t.Fatalf("the hook wrote no event; log:\n%s", data)
			}
		})
	}
}

// plan writes a project whose plan skips its code review (max_reviews 0),
// so that the stop commits a phase change.
func plan(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"plan.md":   "# Plan\n",
		"tasks.md":  "| Id | Status | Title |\n|----|--------|-------|\n| 1 | in-progress | one |\n",
		"task-1.md": "# Task 1\n",
		"state.json": `{"max_reviews": 0, "current_task": "1", "phase": "next-task", "phase_iteration": 0,
 "next_phase": "code-review", "review_model": "opus", "consecutive_clean": 0, "tdd": false}`,
	}
	pd := filepath.Join(dir, ".taskie", "plans", "p")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(pd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
