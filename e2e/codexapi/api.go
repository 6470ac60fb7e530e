// Package codexapi is a small scripted stand-in for the OpenAI Responses
// API, for end-to-end tests that run the real Codex CLI (`codex exec`)
// against it (a model provider with wire_api = "responses" and a loopback
// base_url). It plays two parts from a script: the main coding agent,
// which drives taskie through Codex's exec_command tool and reacts to the
// Stop hook's blocks, and the reviewer that taskie's Stop hook starts with
// `codex exec --output-schema …`, which answers with the verdict JSON.
// Every request is recorded so a test can check who was asked what.
package codexapi

import (
	"encoding/json"
	"strings"
)

// Request is the part of a Responses API request the fake model reads.
type Request struct {
	Model     string `json:"model"`
	Stream    bool   `json:"stream"`
	Input     []Item `json:"input"`
	Tools     []Tool `json:"tools"`
	Reasoning *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
	Text *struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

// Tool is one tool offered to the model (function, custom, web_search, …).
type Tool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// Item is one input item: a message (role developer, user or assistant), a
// function call the model made, or the output of one.
type Item struct {
	Type      string    `json:"type"`
	Role      string    `json:"role,omitempty"`
	Content   []Content `json:"content,omitempty"`
	Name      string    `json:"name,omitempty"`
	Arguments string    `json:"arguments,omitempty"`
	CallID    string    `json:"call_id,omitempty"`
	Output    any       `json:"output,omitempty"` // a string, or content parts
}

// Content is one part of a message.
type Content struct {
	Type string `json:"type"` // input_text, output_text, …
	Text string `json:"text"`
}

// Text joins a message's text parts, or a function call output's text.
func (it Item) Text() string {
	var parts []string
	for _, c := range it.Content {
		parts = append(parts, c.Text)
	}
	switch o := it.Output.(type) {
	case string:
		parts = append(parts, o)
	case []any:
		for _, p := range o {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
	}
	return strings.Join(parts, "\n")
}

// IsModelOutput says whether the item is something the model produced
// earlier (a reply of the script): an assistant message or a tool call.
func (it Item) IsModelOutput() bool {
	return it.Type == "function_call" || it.Type == "custom_tool_call" || it.Type == "message" && it.Role == "assistant"
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

// ToolNames lists the named tools on offer.
func (r *Request) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		if t.Name != "" {
			out = append(out, t.Name)
		}
	}
	return out
}

// MessagesText joins the text of every message of one role.
func (r *Request) MessagesText(role string) string {
	var parts []string
	for _, it := range r.Input {
		if it.Type == "message" && it.Role == role {
			parts = append(parts, it.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// Reply is one answer of the fake model: a text message, or one call of a
// function tool (the scripts act one step at a time).
type Reply struct {
	Text string
	Call *Call
}

// Call is a function call the model emits.
type Call struct {
	Name string
	Args map[string]any
}

// Text makes a text-only reply.
func Text(s string) Reply { return Reply{Text: s} }

// Exec makes a reply that runs a shell command with Codex's exec_command
// tool. Codex runs it in a login shell (bash -lc) in the turn's cwd.
func Exec(cmd string) Reply {
	return Reply{Call: &Call{Name: "exec_command", Args: map[string]any{"cmd": cmd, "yield_time_ms": 30000}}}
}

// Summary is a one-line description of a reply, for records and logs.
func (r Reply) Summary() string {
	if r.Call == nil {
		return "text: " + firstLine(r.Text)
	}
	if c, ok := r.Call.Args["cmd"].(string); ok {
		return r.Call.Name + " " + firstLine(c)
	}
	return r.Call.Name
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
