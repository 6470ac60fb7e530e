package claudeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// sseEvent is one decoded server-sent event.
type sseEvent struct {
	Name string
	Data map[string]any
}

// parseSSE decodes a stream the way a client does: `event:` and `data:`
// lines, frames separated by a blank line; the event name must match the
// data's "type".
func parseSSE(t *testing.T, stream string) []sseEvent {
	t.Helper()
	var events []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				t.Fatalf("data is not JSON: %v: %s", err, line)
			}
		case line == "":
			if cur.Name == "" || cur.Data == nil {
				t.Fatalf("incomplete frame before blank line: %+v", cur)
			}
			if cur.Data["type"] != cur.Name {
				t.Fatalf("event %q carries data of type %v", cur.Name, cur.Data["type"])
			}
			events = append(events, cur)
			cur = sseEvent{}
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if cur.Name != "" {
		t.Fatalf("stream ends inside a frame: %+v", cur)
	}
	return events
}

func names(events []sseEvent) string {
	var n []string
	for _, e := range events {
		n = append(n, e.Name)
	}
	return strings.Join(n, ",")
}

func TestWriteSSEText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSSE(&b, "msg_1", "claude-test", "toolu_1", Text("Hello.")); err != nil {
		t.Fatal(err)
	}
	events := parseSSE(t, b.String())
	want := "message_start,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop"
	if got := names(events); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	msg := events[0].Data["message"].(map[string]any)
	if msg["model"] != "claude-test" || msg["id"] != "msg_1" || msg["role"] != "assistant" {
		t.Errorf("message_start: %v", msg)
	}
	if d := events[2].Data["delta"].(map[string]any); d["type"] != "text_delta" || d["text"] != "Hello." {
		t.Errorf("text delta: %v", d)
	}
	if d := events[4].Data["delta"].(map[string]any); d["stop_reason"] != "end_turn" {
		t.Errorf("message_delta: %v", d)
	}
}

func TestWriteSSEToolUseStreamsInputInPieces(t *testing.T) {
	input := map[string]any{"file_path": "/tmp/p/ünïcode-review-1.md", "content": strings.Repeat("line ✓\n", 20)}
	var b bytes.Buffer
	if err := WriteSSE(&b, "msg_2", "m", "toolu_9", Call("Write", input)); err != nil {
		t.Fatal(err)
	}
	events := parseSSE(t, b.String())
	start := events[1].Data["content_block"].(map[string]any)
	if start["type"] != "tool_use" || start["id"] != "toolu_9" || start["name"] != "Write" {
		t.Errorf("content_block_start: %v", start)
	}
	var joined strings.Builder
	deltas := 0
	for _, e := range events {
		if e.Name != "content_block_delta" {
			continue
		}
		d := e.Data["delta"].(map[string]any)
		if d["type"] != "input_json_delta" {
			t.Fatalf("delta of type %v in a tool_use block", d["type"])
		}
		joined.WriteString(d["partial_json"].(string))
		deltas++
	}
	if deltas < 2 {
		t.Errorf("tool input came in %d delta(s), want several", deltas)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(joined.String()), &got); err != nil {
		t.Fatalf("joined partial_json is not JSON: %v", err)
	}
	if got["file_path"] != input["file_path"] || got["content"] != input["content"] {
		t.Errorf("tool input round trip: %v", got)
	}
	last := events[len(events)-2].Data["delta"].(map[string]any)
	if last["stop_reason"] != "tool_use" {
		t.Errorf("stop_reason %v, want tool_use", last["stop_reason"])
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, "msg_3", "m", "toolu_3", Call("Bash", map[string]any{"command": "taskie status"})); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string         `json:"type"`
			ID    string         `json:"id"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"content"`
	}
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "message" || m.StopReason != "tool_use" || len(m.Content) != 1 ||
		m.Content[0].Name != "Bash" || m.Content[0].Input["command"] != "taskie status" {
		t.Errorf("non-streaming message: %+v", m)
	}
}

func TestSplitKeepsRunesWhole(t *testing.T) {
	s := strings.Repeat("aé✓", 30)
	parts := split(s, 5)
	if strings.Join(parts, "") != s {
		t.Fatal("split lost bytes")
	}
	for _, p := range parts {
		if !utf8.ValidString(p) || len(p) > 5 || p == "" {
			t.Errorf("bad piece %q", p)
		}
	}
}
