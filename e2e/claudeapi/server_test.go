package claudeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestServerAnswersAndRecords(t *testing.T) {
	dump := t.TempDir()
	var log strings.Builder
	srv := Start(Script{FirstTurn: []Reply{Call("Bash", map[string]any{"command": "taskie status"})}},
		Options{Log: &log, DumpDir: dump})
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("server not on loopback: %s", srv.URL())
	}

	agentReq := `{"model":"claude-opus-x","stream":true,"tools":[{"name":"Bash"},{"name":"Write"}],
		"messages":[{"role":"user","content":"go"},{"role":"system","content":"SessionStart hook additional context: plan p\n\n\nOther text"}]}`
	resp, body := post(t, srv.URL()+"/v1/messages?beta=true", agentReq, map[string]string{"X-Claude-Code-Session-Id": "main-1"})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream content type %q", ct)
	}
	events := parseSSE(t, body)
	if len(events) == 0 || events[1].Data["content_block"].(map[string]any)["name"] != "Bash" {
		t.Errorf("agent reply: %s", body)
	}

	side := `{"model":"claude-haiku-x","stream":false,"messages":[{"role":"user","content":"title?"}]}`
	resp, body = post(t, srv.URL()+"/v1/messages", side, nil)
	var m struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || resp.Header.Get("Content-Type") != "application/json" || len(m.Content) != 1 {
		t.Errorf("side reply %q: %v", body, err)
	}
	_, body = post(t, srv.URL()+"/v1/messages/count_tokens", side, nil)
	if !strings.Contains(body, "input_tokens") {
		t.Errorf("count_tokens: %s", body)
	}
	if resp, _ := post(t, srv.URL()+"/v1/messages", "not json", nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON answered %d", resp.StatusCode)
	}

	recs := srv.Records()
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(recs), recs)
	}
	a := recs[0]
	if a.Role != Agent || a.Model != "claude-opus-x" || a.Session != "main-1" || a.Reply != "Bash taskie status" ||
		a.FirstUserText != "go" || a.SessionStartContext != "SessionStart hook additional context: plan p" {
		t.Errorf("agent record %+v", a)
	}
	if recs[1].Role != Side || recs[1].Stream || recs[2].Path != "/v1/messages/count_tokens" {
		t.Errorf("side records %+v %+v", recs[1], recs[2])
	}
	if got := len(srv.Calls(Agent)); got != 1 {
		t.Errorf("Calls(Agent): %d", got)
	}
	if _, err := os.Stat(filepath.Join(dump, "001-agent.json")); err != nil {
		t.Errorf("dump: %v", err)
	}
	if !strings.Contains(log.String(), "claudeapi #1 /v1/messages agent") {
		t.Errorf("log: %s", log.String())
	}
}

func TestServerRecordsToolErrors(t *testing.T) {
	srv := Start(Script{}, Options{})
	defer srv.Close()
	req := `{"model":"m","stream":true,"tools":[{"name":"Bash"},{"name":"Write"}],"messages":[
		{"role":"user","content":"go"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,
			"content":[{"type":"text","text":"Permission to use Bash has been denied."}]}]}]}`
	post(t, srv.URL()+"/v1/messages", req, nil)
	recs := srv.Records()
	if len(recs) != 1 || len(recs[0].ToolErrors) != 1 || !strings.Contains(recs[0].ToolErrors[0], "denied") {
		t.Errorf("records %+v", recs)
	}
}

func TestServerUpdateAndToolResults(t *testing.T) {
	srv := Start(Script{FirstTurn: []Reply{Text("one")}}, Options{})
	defer srv.Close()
	agent := `{"model":"m","stream":false,"tools":[{"name":"Bash"},{"name":"Write"}],"messages":[{"role":"user","content":"go"}]}`
	post(t, srv.URL()+"/v1/messages", agent, nil)
	srv.Update(func(s *Script) { s.FirstTurn = []Reply{Text("two")} })
	post(t, srv.URL()+"/v1/messages", agent, nil)
	withResult := `{"model":"m","stream":false,"tools":[{"name":"Bash"},{"name":"Write"}],"messages":[
		{"role":"user","content":"go"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"next: end-turn"}]}]}`
	post(t, srv.URL()+"/v1/messages", withResult, nil)
	recs := srv.Records()
	if len(recs) != 3 || recs[0].Reply != "text: one" || recs[1].Reply != "text: two" {
		t.Fatalf("records %+v", recs)
	}
	if len(recs[2].ToolResults) != 1 || recs[2].ToolResults[0] != "next: end-turn" || len(recs[2].ToolErrors) != 0 {
		t.Errorf("tool results %q, errors %q", recs[2].ToolResults, recs[2].ToolErrors)
	}
}

func TestServerReviewerGate(t *testing.T) {
	gate := make(chan struct{})
	srv := Start(Script{ReviewerGate: gate}, Options{})
	defer srv.Close()
	reviewer := `{"model":"m","stream":false,"tools":[{"name":"StructuredOutput"}],"messages":[{"role":"user","content":"Write .taskie/plans/p/task-1-review-1.md"}]}`
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(reviewer))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the reviewer was answered before the gate opened (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(gate)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reviewer was not answered after the gate opened")
	}
	if recs := srv.Calls(Reviewer); len(recs) != 1 {
		t.Errorf("reviewer records %+v", recs)
	}

	// The limit lets a reply go although the gate stays shut.
	srv.Update(func(s *Script) { s.ReviewerGate, s.ReviewerGateLimit = make(chan struct{}), 100*time.Millisecond })
	start := time.Now()
	post(t, srv.URL()+"/v1/messages", reviewer, nil)
	if took := time.Since(start); took < 100*time.Millisecond || took > 5*time.Second {
		t.Errorf("with the gate shut and a 100ms limit the reply took %s", took)
	}
}
