package planchoice

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"
)

// AgentMentions returns the known plan ids the agent's own recent words
// name, in order of their last occurrence (the last element is the most
// recent): its messages and tool calls in the
// transcript's tail, then lastMessage (the hook input's
// last_assistant_message, which the transcript may not hold yet). A plan is
// named by `plans/<id>/`, `--plan <id>`, `--plan=<id>` or `plan new <id>`
// (boolean flags such as --auto may come between `new` and the id); an id
// is taken whole: "--plan auth-v2" names auth-v2, never auth.
//
// Only the agent's lines of the transcript count (Claude Code's
// "assistant" lines; a Codex rollout's assistant messages and tool calls):
// taskie's own words — a block, a systemMessage, SessionStart's context,
// the output of a `taskie status` the agent ran — reach the transcript as
// other lines, and naming a plan there (e.g. "run `taskie status --plan
// p`") must not make the session take the plan over.
func AgentMentions(transcript, lastMessage []byte, known func(id string) bool) []string {
	last := map[string]int{}
	lines := &agentLines{b: transcript, start: -1, end: -1}
	scan(transcript, 0, known, last, lines.accept)
	scan(lastMessage, len(transcript)+1, known, last, nil)
	return byPosition(last)
}

// scan records in last (id → end of its last mention, -1: unknown id) the
// mentions in b that accept takes (nil: all), at positions offset by base.
func scan(b []byte, base int, known func(id string) bool, last map[string]int, accept func(at int) bool) {
	for p := 0; ; {
		i := bytes.Index(b[p:], plan)
		if i < 0 {
			return
		}
		at := p + i
		id, end := mentionAt(b, at)
		p = at + len(plan)
		if id == nil || (accept != nil && !accept(at)) {
			continue
		}
		if pos, seen := last[string(id)]; !seen {
			s := string(id)
			last[s] = -1
			if known(s) {
				last[s] = base + end
			}
		} else if pos >= 0 {
			last[string(id)] = base + end
		}
	}
}

// agentLines tells whether a position of a transcript is on a line the
// agent wrote; the line last looked at is remembered, so each line is
// decoded at most once and only when it holds a mention.
type agentLines struct {
	b          []byte
	start, end int
	ok         bool
}

func (l *agentLines) accept(at int) bool {
	if at < l.start || at >= l.end {
		l.start = bytes.LastIndexByte(l.b[:at], '\n') + 1
		l.end = len(l.b)
		if i := bytes.IndexByte(l.b[at:], '\n'); i >= 0 {
			l.end = at + i
		}
		l.ok = agentLine(l.b[l.start:l.end])
	}
	return l.ok
}

// agentLine reports whether a transcript line (a JSON object) is the
// agent's own: a Claude Code "assistant" line (its text and tool calls),
// or in a Codex rollout an assistant message, a tool call or the agent's
// message event. Anything else — user prompts, tool results, hook
// feedback, system lines, a line cut by the tail — is not.
func agentLine(line []byte) bool {
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
			Role string `json:"role"`
		} `json:"payload"`
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(line, &l); err != nil && !errors.As(err, &typeErr) {
		return false
	}
	switch l.Type {
	case "assistant":
		return true
	case "response_item":
		switch l.Payload.Type {
		case "message":
			return l.Payload.Role == "assistant"
		case "function_call", "custom_tool_call", "local_shell_call":
			return true
		}
	case "event_msg":
		return l.Payload.Type == "agent_message"
	}
	return false
}

var (
	plan    = []byte("plan")
	plansID = []byte("s/")
	newID   = []byte(" new ")
)

// mentionAt returns the id named by a pattern whose "plan" starts at at, and
// where the id ends, or nil.
func mentionAt(b []byte, at int) ([]byte, int) {
	rest := at + len(plan)
	switch {
	case bytes.HasPrefix(b[rest:], plansID):
		id, end := idAt(b, rest+len(plansID))
		if end < len(b) && b[end] == '/' {
			return id, end
		}
	case at >= 2 && b[at-2] == '-' && b[at-1] == '-' && rest < len(b) && (b[rest] == ' ' || b[rest] == '='):
		return idAt(b, rest+1)
	case bytes.HasPrefix(b[rest:], newID):
		return idAt(b, skipFlags(b, rest+len(newID)))
	}
	return nil, 0
}

// idAt returns the whole id starting at i, or nil.
func idAt(b []byte, i int) ([]byte, int) {
	end := i
	for end < len(b) && isIDByte(b[end]) {
		end++
	}
	if end == i {
		return nil, 0
	}
	return b[i:end], end
}

// skipFlags skips the words starting with '-' at i, each followed by a
// space, as in `plan new --auto --tdd api`.
func skipFlags(b []byte, i int) int {
	for i < len(b) && b[i] == '-' {
		j := i
		for j < len(b) && isIDByte(b[j]) {
			j++
		}
		if j >= len(b) || b[j] != ' ' {
			return i
		}
		i = j + 1
	}
	return i
}

func byPosition(last map[string]int) []string {
	var ids []string
	for id, pos := range last {
		if pos >= 0 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(last[a], last[b]) })
	return ids
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isID reports whether s matches ^[A-Za-z0-9_-]+$.
func isID(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIDByte(s[i]) {
			return false
		}
	}
	return s != ""
}
