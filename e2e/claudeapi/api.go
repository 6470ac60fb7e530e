// Package claudeapi is a small scripted stand-in for the Anthropic Messages
// API, for end-to-end tests that run the real Claude Code CLI against it
// (ANTHROPIC_BASE_URL). It plays two parts from a script: the main coding
// agent, which drives taskie and reacts to the Stop hook's blocks, and the
// nested reviewer that taskie's Stop hook starts with `claude -p`. Every
// request is recorded so a test can check who was asked what.
package claudeapi

import (
	"encoding/json"
	"strings"
)

// Request is the part of a Messages API request the fake model reads.
type Request struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"` // a string or a list of text blocks
	Messages []Message       `json:"messages"`
	Tools    []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// Message is one conversation turn. The CLI sends role "user",
// "assistant" and, mid-conversation, "system".
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

// Block is one content block, of any type.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // tool_result: a string or blocks
	IsError   bool            `json:"is_error,omitempty"`
}

// Blocks returns the message content as blocks; a plain string becomes one
// text block.
func (m Message) Blocks() []Block {
	return blocksOf(m.Content)
}

// Text joins the message's text, including text inside tool results.
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Blocks() {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			for _, inner := range blocksOf(b.Content) {
				parts = append(parts, inner.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

func blocksOf(raw json.RawMessage) []Block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var bs []Block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// SystemText joins the system prompt, whichever form it came in.
func (r *Request) SystemText() string {
	return Message{Content: r.System}.Text()
}

// ToolNames lists the tools offered to the model.
func (r *Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// HasTool says whether the request offers the named tool.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// IsCTO says whether the request is a CTO review's: taskie runs it with
// the CTO's answer schema (a decision, guided_retry among its values), so
// the StructuredOutput tool takes that schema.
func (r *Request) IsCTO() bool {
	for _, t := range r.Tools {
		if t.Name == "StructuredOutput" {
			return strings.Contains(string(t.InputSchema), "guided_retry")
		}
	}
	return false
}

// Reply is one assistant message of the fake model: some text, and at
// most one tool call (the scripts act one step at a time).
type Reply struct {
	Text string
	Tool *ToolCall
}

// ToolCall is a tool_use block the model emits.
type ToolCall struct {
	Name  string
	Input map[string]any
}

// Text makes a text-only reply.
func Text(s string) Reply { return Reply{Text: s} }

// Call makes a reply that calls one tool.
func Call(name string, input map[string]any) Reply {
	return Reply{Tool: &ToolCall{Name: name, Input: input}}
}

// Summary is a one-line description of a reply, for records and logs.
func (r Reply) Summary() string {
	if r.Tool == nil {
		return "text: " + firstLine(r.Text)
	}
	switch {
	case r.Tool.Input["file_path"] != nil:
		return r.Tool.Name + " " + toString(r.Tool.Input["file_path"])
	case r.Tool.Input["command"] != nil:
		return r.Tool.Name + " " + toString(r.Tool.Input["command"])
	case r.Tool.Input["decision"] != nil:
		return r.Tool.Name + " " + toString(r.Tool.Input["decision"])
	case r.Tool.Input["verdict"] != nil:
		return r.Tool.Name + " " + toString(r.Tool.Input["verdict"])
	}
	return r.Tool.Name
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
