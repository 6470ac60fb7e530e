package codexapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// events parses an SSE stream back into its events.
func events(t *testing.T, data string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(data))
	var typ string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var ev map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				t.Fatal(err)
			}
			if ev["type"] != typ {
				t.Errorf("event %q carries type %v", typ, ev["type"])
			}
			out = append(out, ev)
		}
	}
	return out
}

func TestWriteSSEFunctionCall(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSSE(&b, "resp_1", "gpt-5.5", Exec("taskie start 1 --auto")); err != nil {
		t.Fatal(err)
	}
	evs := events(t, b.String())
	var types []string
	var args strings.Builder
	for i, ev := range evs {
		types = append(types, ev["type"].(string))
		if ev["sequence_number"].(float64) != float64(i) {
			t.Errorf("event %d: sequence_number %v", i, ev["sequence_number"])
		}
		if ev["type"] == "response.function_call_arguments.delta" {
			args.WriteString(ev["delta"].(string))
		}
	}
	want := "response.created response.in_progress response.output_item.added"
	if got := strings.Join(types[:3], " "); got != want {
		t.Errorf("starts with %s, want %s", got, want)
	}
	if types[len(types)-1] != "response.completed" || types[len(types)-2] != "response.output_item.done" {
		t.Errorf("ends with %v", types[len(types)-2:])
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(args.String()), &a); err != nil || a["cmd"] != "taskie start 1 --auto" {
		t.Errorf("the argument deltas join to %q (%v)", args.String(), err)
	}
	done := evs[len(evs)-2]["item"].(map[string]any)
	if done["type"] != "function_call" || done["name"] != "exec_command" || done["call_id"] == "" {
		t.Errorf("output_item.done item = %v", done)
	}
}

func TestWriteSSEMessage(t *testing.T) {
	var b bytes.Buffer
	text := `{"verdict":"PASS","review":"# Review — no findings, déjà vu"}`
	if err := WriteSSE(&b, "resp_2", "gpt-5.5", Text(text)); err != nil {
		t.Fatal(err)
	}
	var deltas strings.Builder
	for _, ev := range events(t, b.String()) {
		if ev["type"] == "response.output_text.delta" {
			deltas.WriteString(ev["delta"].(string))
		}
	}
	if deltas.String() != text {
		t.Errorf("deltas join to %q", deltas.String())
	}
}

func TestScriptFollowsTheTurn(t *testing.T) {
	s := Script{FirstTurn: []Reply{Exec("taskie start 1 --auto"), Text("Done.")}}
	req := &Request{Input: []Item{{Type: "message", Role: "user", Content: []Content{{Type: "input_text", Text: "Implement task 1."}}}}}
	if r, fb := s.AgentReply(req); r.Summary() != "exec_command taskie start 1 --auto" || fb != "" {
		t.Errorf("first reply %q (feedback %q)", r.Summary(), fb)
	}
	req.Input = append(req.Input, Item{Type: "function_call", Name: "exec_command"}, Item{Type: "function_call_output", Output: "ok"})
	if r, _ := s.AgentReply(req); r.Summary() != "text: Done." {
		t.Errorf("second reply %q", r.Summary())
	}
	block := "taskie: code review 1 of task 1 is in: FAIL\n  .taskie/plans/p/task-1-review-1.md\n3. Write .taskie/plans/p/task-1-post-review-1.md\n4. Record it: `taskie done post-code-review`"
	req.Input = append(req.Input, Item{Type: "message", Role: "assistant", Content: []Content{{Type: "output_text", Text: "Done."}}},
		Item{Type: "message", Role: "user", Content: []Content{{Type: "input_text", Text: `<hook_prompt hook_run_id="stop:1:/h/hooks.json">` + block + `</hook_prompt>`}}})
	r, fb := s.AgentReply(req)
	if fb != block || r.Summary() != "exec_command cat .taskie/plans/p/task-1-review-1.md" {
		t.Errorf("after a block: reply %q, feedback %q", r.Summary(), fb)
	}
}

func TestDetect(t *testing.T) {
	var reviewer Request
	if err := json.Unmarshal([]byte(`{"text":{"format":{"type":"json_schema","name":"codex_output_schema"}},"tools":[{"type":"function","name":"exec_command"}]}`), &reviewer); err != nil {
		t.Fatal(err)
	}
	agent := Request{Tools: []Tool{{Type: "function", Name: "exec_command"}}}
	if Detect(&reviewer) != Reviewer || Detect(&agent) != Agent || Detect(&Request{}) != Side {
		t.Errorf("Detect: %s %s %s", Detect(&reviewer), Detect(&agent), Detect(&Request{}))
	}
}

// The reviewer answers with the scripted findings where the script has
// them, and without "findings" elsewhere.
func TestReviewerReplyFindings(t *testing.T) {
	s := Script{Verdicts: []string{"FAIL", "PASS"},
		Findings: []string{`[{"id":"","severity":"major","title":"t","file":"hello.go","line":4,"status":"open"}]`}}
	ask := func(n int) map[string]any {
		req := &Request{Input: []Item{{Type: "message", Role: "user", Content: []Content{{Type: "input_text",
			Text: "Write .taskie/plans/p/task-1-review-" + string(rune('0'+n)) + ".md"}}}}}
		var got map[string]any
		if err := json.Unmarshal([]byte(s.ReviewerReply(req).Text), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := ask(1)
	fs, ok := first["findings"].([]any)
	if first["verdict"] != "FAIL" || !ok || len(fs) != 1 || fs[0].(map[string]any)["file"] != "hello.go" {
		t.Errorf("review 1: %v", first)
	}
	if second := ask(2); second["verdict"] != "PASS" || second["findings"] != nil {
		t.Errorf("review 2: %v, want PASS without findings", second)
	}
}
