package claudeapi

import (
	"encoding/json"
	"fmt"
	"io"
)

// chunk is how many bytes of a tool's JSON input go in one
// input_json_delta; small, so every tool call arrives in several pieces
// the way the real API streams them.
const chunk = 16

// message is the non-streaming response body (and the message of
// message_start, with empty content and no stop reason).
type message struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []any   `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        usage   `json:"usage"`
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// stopReason is "tool_use" when the reply calls a tool, else "end_turn".
func (r Reply) stopReason() string {
	if r.Tool != nil {
		return "tool_use"
	}
	return "end_turn"
}

// toolInput encodes the tool call's input ({} when it has none).
func (r Reply) toolInput() []byte {
	if r.Tool == nil || r.Tool.Input == nil {
		return []byte("{}")
	}
	b, err := json.Marshal(r.Tool.Input)
	if err != nil {
		panic(fmt.Sprintf("claudeapi: tool input of %s: %v", r.Tool.Name, err))
	}
	return b
}

// content lists the reply's blocks: its text (if any), then its tool call.
func (r Reply) content(toolID string) []any {
	blocks := []any{}
	if r.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": r.Text})
	}
	if r.Tool != nil {
		blocks = append(blocks, map[string]any{
			"type": "tool_use", "id": toolID, "name": r.Tool.Name,
			"input": json.RawMessage(r.toolInput()),
		})
	}
	return blocks
}

// WriteJSON writes the reply as a non-streaming Messages API response.
func WriteJSON(w io.Writer, id, model, toolID string, r Reply) error {
	stop := r.stopReason()
	return json.NewEncoder(w).Encode(message{
		ID: id, Type: "message", Role: "assistant", Model: model,
		Content: r.content(toolID), StopReason: &stop,
		Usage: usage{InputTokens: 10, OutputTokens: 10},
	})
}

// WriteSSE streams the reply as Messages API server-sent events:
// message_start, for each block content_block_start / _delta… / _stop,
// message_delta with the stop reason, message_stop.
func WriteSSE(w io.Writer, id, model, toolID string, r Reply) error {
	e := &sseWriter{w: w}
	e.event("message_start", map[string]any{
		"type": "message_start",
		"message": message{ID: id, Type: "message", Role: "assistant", Model: model,
			Content: []any{}, Usage: usage{InputTokens: 10, OutputTokens: 1}},
	})
	index := 0
	if r.Text != "" {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "text_delta", "text": r.Text}})
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if r.Tool != nil {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": toolID, "name": r.Tool.Name, "input": map[string]any{}}})
		for _, part := range split(string(r.toolInput()), chunk) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
	return e.err
}

// sseWriter writes `event:`/`data:` frames and keeps the first error.
type sseWriter struct {
	w   io.Writer
	err error
}

func (e *sseWriter) event(name string, data any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		e.err = err
		return
	}
	_, e.err = fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
}

// split cuts s into pieces of at most n bytes, on rune boundaries: each
// partial_json piece is itself a JSON string value and must be valid UTF-8.
func split(s string, n int) []string {
	var parts []string
	for len(s) > n {
		cut := n
		for cut > 0 && !runeStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		parts = append(parts, s[:cut])
		s = s[cut:]
	}
	return append(parts, s)
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
