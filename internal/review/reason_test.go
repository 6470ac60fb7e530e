package review

import (
	"context"
	"strings"
	"testing"
)

// notLoggedIn is what claude 2.1.x prints, with exit code 1, when it has no
// credentials.
const notLoggedIn = `{"type":"result","subtype":"success","is_error":true,"duration_ms":48,"num_turns":1,"result":"Not logged in · Please run /login","session_id":"6b0a8a2e-1c1f-4d5e-9d43-0c2a1f0e7d11","total_cost_usd":0}`

func TestClaudeReason(t *testing.T) {
	tests := []struct {
		name, stdout, stderr, want string
	}{
		{name: "not logged in", stdout: notLoggedIn + "\n", want: "Not logged in · Please run /login"},
		{name: "is_error beats stderr", stdout: notLoggedIn, stderr: "some warning\n", want: "Not logged in · Please run /login"},
		{name: "multi-line result on one line",
			stdout: `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 401\n{\"error\":\"invalid x-api-key\"}"}`,
			want:   `API Error: 401 {"error":"invalid x-api-key"}`},
		{name: "error subtype without result, stderr wins", stdout: `{"type":"result","subtype":"error_during_execution","is_error":true}`,
			stderr: "Error: connection reset\n", want: "Error: connection reset"},
		{name: "error subtype without result or stderr", stdout: `{"type":"result","subtype":"error_max_turns","is_error":true}`,
			want: `reported an error (subtype "error_max_turns")`},
		{name: "plain stderr", stderr: "Error: Claude Code cannot be launched inside another Claude Code session.\n\n",
			want: "Error: Claude Code cannot be launched inside another Claude Code session."},
		{name: "last stderr line", stdout: "partial output\n", stderr: "loading\nfatal: boom\n  \n", want: "fatal: boom"},
		{name: "stdout when stderr is blank", stdout: "first\nlast words\n\n", stderr: " \n", want: "last words"},
		{name: "success answer is no reason", stdout: `{"type":"result","subtype":"success","is_error":false,"result":"done"}`,
			stderr: "killed\n", want: "killed"},
		{name: "nothing", want: "(no output)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := claudeReason(output{stdout: []byte(tc.stdout), stderr: []byte(tc.stderr)})
			if got != tc.want {
				t.Errorf("claudeReason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCodexReason(t *testing.T) {
	const header = "OpenAI Codex v0.169.0 (research preview)\n--------\nworkdir: /p\nmodel: gpt-5.5\n--------\n"
	tests := []struct {
		name, stdout, stderr, want string
	}{
		{name: "ERROR line", stderr: header + "ERROR: unexpected status 401 Unauthorized: Missing bearer authentication\n",
			want: "ERROR: unexpected status 401 Unauthorized: Missing bearer authentication"},
		{name: "ERROR line before a warning", stderr: header + "ERROR: stream disconnected before completion\nWarning: no last agent message; wrote empty content to /tmp/last.json\n",
			want: "ERROR: stream disconnected before completion"},
		{name: "error event", stdout: `{"type":"thread.started","thread_id":"t1"}` + "\n" + `{"type":"error","message":"Reconnecting... 1/5"}` + "\n",
			stderr: "ERROR: later text\n", want: "Reconnecting... 1/5"},
		{name: "turn.failed event is the last", stdout: `{"type":"error","message":"Reconnecting... 1/5"}` + "\n" +
			`{"type":"turn.failed","error":{"message":"unexpected status 400 Bad Request: model not found"}}` + "\n",
			want: "unexpected status 400 Bad Request: model not found"},
		{name: "last stderr line", stderr: header + "error: unexpected argument '--ephemeral' found\n\nFor more information, try '--help'.\n",
			want: "For more information, try '--help'."},
		{name: "stdout when stderr is blank", stdout: "something\n", want: "something"},
		{name: "nothing", want: "(no output)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := codexReason(output{stdout: []byte(tc.stdout), stderr: []byte(tc.stderr)})
			if got != tc.want {
				t.Errorf("codexReason = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReviewFailureFirstLine checks the first line of the message, the one
// the hook shows, names the reviewer's own reason (docs/hook.md).
func TestReviewFailureFirstLine(t *testing.T) {
	tests := []struct {
		adapter, step, want string
	}{
		{"claude", "NOTLOGGEDIN", "claude reviewer: exited with code 1: Not logged in · Please run /login"},
		{"claude", "CRASH", "claude reviewer: exited with code 3: fake claude: crashed on purpose"},
		{"claude", "ERROR", `claude reviewer: reported an error (subtype "error_max_turns")`},
		{"codex", "CRASH", "codex reviewer: exited with code 3: fake codex: crashed on purpose"},
		{"codex", "ERROR", "codex reviewer: exited with code 1: ERROR: unexpected status 400 Bad Request: fake turn failure"},
		{"codex", "NOMESSAGE", "codex reviewer: exited with code 1: ERROR: stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses)"},
	}
	for _, tc := range tests {
		t.Run(tc.adapter+"/"+tc.step, func(t *testing.T) {
			f := newFixture(t, tc.step)
			_, err := mustNew(t, tc.adapter).Review(context.Background(), f.request(1))
			if err == nil {
				t.Fatal("review succeeded")
			}
			if first, _, _ := strings.Cut(err.Error(), "\n"); first != tc.want {
				t.Errorf("first line = %q, want %q", first, tc.want)
			}
		})
	}
}
