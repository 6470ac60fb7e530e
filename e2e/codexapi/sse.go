package codexapi

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// chunk is how many bytes of text or of a call's arguments go in one delta
// event; small, so every reply arrives in several pieces the way the real
// API streams them.
const chunk = 24

// stream writes Responses API server-sent events: each is
// "event: <type>\ndata: <json>\n\n", with a growing sequence_number.
type stream struct {
	w   io.Writer
	seq int
	err error
}

func (s *stream) event(typ string, fields map[string]any) {
	if s.err != nil {
		return
	}
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	b, err := json.Marshal(fields)
	if err != nil {
		s.err = err
		return
	}
	_, s.err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", typ, b)
	if f, ok := s.w.(interface{ Flush() }); ok {
		f.Flush()
	}
}

// response is the response object of response.created / .completed.
func response(id, model, status string, output []any, completed bool) map[string]any {
	r := map[string]any{
		"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status,
		"model": model, "output": output, "parallel_tool_calls": true, "tool_choice": "auto",
		"error": nil, "incomplete_details": nil, "usage": nil,
	}
	if completed {
		r["usage"] = map[string]any{
			"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 120,
		}
	}
	return r
}

// WriteSSE streams one reply as the Responses API does: response.created,
// response.in_progress, the output item (added, its deltas, done) and
// response.completed with the usage.
func WriteSSE(w io.Writer, id, model string, r Reply) error {
	s := &stream{w: w}
	s.event("response.created", map[string]any{"response": response(id, model, "in_progress", []any{}, false)})
	s.event("response.in_progress", map[string]any{"response": response(id, model, "in_progress", []any{}, false)})
	var item map[string]any
	if r.Call != nil {
		item = s.functionCall(id, r.Call)
	} else {
		item = s.message(id, r.Text)
	}
	s.event("response.completed", map[string]any{"response": response(id, model, "completed", []any{item}, true)})
	return s.err
}

func (s *stream) message(id, text string) map[string]any {
	itemID := "msg_" + id
	s.event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
		"id": itemID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
	part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
	s.event("response.content_part.added", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "part": part})
	for _, d := range pieces(text) {
		s.event("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "delta": d})
	}
	s.event("response.output_text.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "text": text})
	part = map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	s.event("response.content_part.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "part": part})
	item := map[string]any{"id": itemID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
	s.event("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	return item
}

func (s *stream) functionCall(id string, c *Call) map[string]any {
	args, err := json.Marshal(c.Args)
	if err != nil {
		s.err = err
		return nil
	}
	itemID, callID := "fc_"+id, "call_"+id
	s.event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
		"id": itemID, "type": "function_call", "status": "in_progress", "call_id": callID, "name": c.Name, "arguments": ""}})
	for _, d := range pieces(string(args)) {
		s.event("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": 0, "delta": d})
	}
	s.event("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": 0, "arguments": string(args)})
	item := map[string]any{"id": itemID, "type": "function_call", "status": "completed", "call_id": callID, "name": c.Name, "arguments": string(args)}
	s.event("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	return item
}

// pieces cuts s into deltas of at most chunk bytes, never inside a rune.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(chunk, len(s))
		for n < len(s) && s[n]&0xC0 == 0x80 {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
