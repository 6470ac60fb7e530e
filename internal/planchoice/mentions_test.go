package planchoice

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMentions(t *testing.T) {
	known := map[string]bool{"auth": true, "auth-v2": true, "api": true, "web": true, "x": true}
	for _, tc := range []struct {
		name string
		tail string
		want []string
	}{
		{name: "plan directory path", tail: `{"file_path":"/repo/.taskie/plans/api/task-1.md"}`, want: []string{"api"}},
		{name: "--plan ID", tail: `{"command":"taskie status --plan api"}`, want: []string{"api"}},
		{name: "--plan=ID", tail: `taskie continue --plan=web --json`, want: []string{"web"}},
		{name: "plan new ID", tail: `taskie plan new auth`, want: []string{"auth"}},
		{name: "plan new with boolean flags first", tail: `taskie plan new --auto --tdd web`, want: []string{"web"}},
		{name: "an id is taken whole", tail: `--plan auth-v2 then plans/auth-v2/plan.md`, want: []string{"auth-v2"}},
		{name: "a prefix of a longer id is no mention", tail: `taskie plan new authx; --plan=auth_y`, want: nil},
		{name: "overlapping prefixes, both named", tail: `plans/auth-v2/ and later --plan auth`, want: []string{"auth-v2", "auth"}},
		{name: "an id at the very end", tail: `taskie status --plan auth`, want: []string{"auth"}},
		{name: "a plan directory without its slash is no mention", tail: `ls .taskie/plans/api`, want: nil},
		{name: "ordered by last occurrence", tail: `plans/api/ --plan web plans/api/x --plan=auth --plan web`, want: []string{"api", "auth", "web"}},
		{name: "unknown ids are ignored", tail: `--plan nope plans/other/ --plan api plan new zzz`, want: []string{"api"}},
		{name: "plan without its dashes is no flag", tail: `the plan api is done; -plan web`, want: nil},
		{name: "prose is not a mention", tail: `the plans/ folder; a plan new to us; --plan`, want: nil},
		{name: "a mention in last_assistant_message, appended by the caller", tail: "{\"cmd\":\"--plan api\"}\nNow run the review of .taskie/plans/web/.", want: []string{"api", "web"}},
		{name: "empty", tail: ``, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Mentions([]byte(tc.tail), func(id string) bool { return known[id] })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Mentions(%q) (-want +got):\n%s", tc.tail, diff)
			}
		})
	}
}

func TestMentionsAsksOncePerID(t *testing.T) {
	asked := map[string]int{}
	Mentions([]byte(`--plan a --plan b --plan a plans/a/ --plan b`), func(id string) bool {
		asked[id]++
		return id == "a"
	})
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 1}, asked); diff != "" {
		t.Errorf("known calls (-want +got):\n%s", diff)
	}
}

// Only the agent's own lines of a transcript name a plan; taskie's words
// (tool results, hook feedback, system lines) and a line cut by the tail
// do not. last_assistant_message counts and is the most recent.
func TestAgentMentions(t *testing.T) {
	known := func(id string) bool { return id == "api" || id == "web" || id == "auth" }
	assistant := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Editing .taskie/plans/api/task-1.md"},{"type":"tool_use","name":"Bash","input":{"command":"taskie done post-code-review --plan web"}}]}}`
	for _, tc := range []struct {
		name, transcript, last string
		want                   []string
	}{
		{name: "Claude Code assistant text and tool calls", transcript: assistant, want: []string{"api", "web"}},
		{name: "a tool result is taskie's output", transcript: `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"run taskie status --plan api"}]}}`},
		{name: "hook feedback is a user line", transcript: `{"type":"user","message":{"role":"user","content":"Stop hook feedback:\n[taskie hook stop]: .taskie/plans/api/plan-review-1.md"}}`},
		{name: "a system line", transcript: `{"type":"system","content":"taskie: run taskie status --plan api"}`},
		{name: "an attachment (SessionStart context)", transcript: `{"type":"attachment","attachment":{"content":"--plan api"}}`},
		{name: "a line cut by the tail", transcript: `taskie status --plan api"}}]}}` + "\n" + `{"type":"user","message":{"content":"x"}}`},
		{name: "plain text is not a transcript line", transcript: `taskie status --plan api`},
		{name: "a message that is a string still counts by its type", transcript: `{"type":"assistant","message":"--plan api"}`, want: []string{"api"}},
		{name: "Codex assistant message", transcript: `{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"plans/api/ next"}]}}`, want: []string{"api"}},
		{name: "Codex tool call", transcript: `{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"taskie status --plan web\"]}"}}`, want: []string{"web"}},
		{name: "Codex agent message event", transcript: `{"type":"event_msg","payload":{"type":"agent_message","message":"--plan=api"}}`, want: []string{"api"}},
		{name: "Codex tool output", transcript: `{"type":"response_item","payload":{"type":"function_call_output","output":"--plan api"}}`},
		{name: "Codex user and developer messages", transcript: `{"type":"response_item","payload":{"type":"message","role":"user","content":"--plan api"}}` + "\n" + `{"type":"response_item","payload":{"type":"message","role":"developer","content":"--plan web"}}`},
		{name: "last_assistant_message counts, last", transcript: assistant, last: "Now .taskie/plans/api/ again, and plan new auth", want: []string{"web", "api", "auth"}},
		{name: "last_assistant_message alone", last: "taskie status --plan web", want: []string{"web"}},
		{name: "agent lines among others, each decoded once", transcript: assistant + "\n" + `{"type":"user","message":{"content":[{"type":"tool_result","content":"--plan auth"}]}}` + "\n" + assistant,
			want: []string{"api", "web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AgentMentions([]byte(tc.transcript), []byte(tc.last), known)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AgentMentions (-want +got):\n%s", diff)
			}
		})
	}
}
