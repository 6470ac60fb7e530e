package hook

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The names a subagent's claims may carry: its agent_id, then every name
// its transcript passes to taskie, JSON-escaped or not.
func TestSubagentNames(t *testing.T) {
	transcript := strings.Join([]string{
		`{"type":"user","message":{"content":"You are p-task-3. Run taskie claim 3 --as p-task-3 -C /repo"}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"command":"taskie claim 3 --as \"quoted-1\""}}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"command":"TASKIE_AGENT=env-2 taskie claim --next"}}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"command":"taskie heartbeat 3 --as=p-task-3"}}]}}`,
		`{"type":"assistant","message":{"content":"git commit --as nobody"}}`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "agent.jsonl")
	if err := os.WriteFile(path, []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	got := subagentNames(subagentInput{AgentID: "a1b2", AgentTranscriptPath: path})
	if diff := cmp.Diff([]string{"a1b2", "p-task-3", "quoted-1", "env-2"}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if got := subagentNames(subagentInput{AgentTranscriptPath: filepath.Join(t.TempDir(), "missing")}); len(got) != 0 {
		t.Errorf("names without a transcript = %v", got)
	}
}

// The subagent fields come from the same stdin as the rest of the input.
func TestReadSubagentInput(t *testing.T) {
	e := Env{Stdin: strings.NewReader(`{"session_id":"s","cwd":"/p","agent_id":"x1","agent_type":"general-purpose","agent_transcript_path":"/t.jsonl","stop_hook_active":true}`),
		InputDeadline: time.Second}
	in, sub, err := readSubagentInput(e)
	if err != nil {
		t.Fatal(err)
	}
	want := subagentInput{AgentID: "x1", AgentType: "general-purpose", AgentTranscriptPath: "/t.jsonl"}
	if sub != want || in.Cwd != "/p" || !in.StopHookActive {
		t.Errorf("input %+v, subagent %+v", in, sub)
	}
}

// No input, or no project: allowed, nothing on stdout, exit 0.
func TestSubagentStopAllows(t *testing.T) {
	for name, stdin := range map[string]string{
		"garbage":    "not json",
		"no project": `{"cwd":"` + t.TempDir() + `","agent_id":"a"}`,
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
				InputDeadline: time.Second}
			if code := SubagentStop(e); code != 0 || strings.Contains(out.String(), "block") {
				t.Errorf("exit %d, stdout %q", code, out.String())
			}
		})
	}
}
