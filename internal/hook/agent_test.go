package hook

import "testing"

func TestDetectAgent(t *testing.T) {
	tests := []struct {
		name, input string
		want        Agent
	}{
		{"Codex Stop (0.169.0)", `{"session_id":"01a2","turn_id":"01a2-71dc","transcript_path":"/h/.codex/sessions/2026/11/26/rollout-2026-11-26T06-28-21-01a2.jsonl","cwd":"/p","hook_event_name":"Stop","model":"gpt-5.5","permission_mode":"bypassPermissions","stop_hook_active":false,"last_assistant_message":"Done."}`, Codex},
		{"Codex SessionStart (0.169.0)", `{"session_id":"01a2","transcript_path":"/h/.codex/sessions/2026/11/26/rollout-2026-11-26T06-28-21-01a2.jsonl","cwd":"/p","hook_event_name":"SessionStart","model":"gpt-5.5","permission_mode":"bypassPermissions","source":"startup"}`, Codex},
		{"Codex Stop without a transcript", `{"session_id":"a","turn_id":"t","transcript_path":null,"hook_event_name":"Stop"}`, Codex},
		{"Claude Code Stop (2.1.197)", `{"session_id":"5c1e","transcript_path":"/root/.claude/projects/-p/5c1e.jsonl","cwd":"/p","prompt_id":"x","permission_mode":"dontAsk","effort":{"level":"high"},"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Task 1 is implemented."}`, Claude},
		{"Claude Code SessionStart", `{"session_id":"5c1e","transcript_path":"/root/.claude/projects/-p/5c1e.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"startup","model":"claude-opus-4-8"}`, Claude},
		{"a test's minimal input", `{"session_id":"s1","cwd":"/p","stop_hook_active":false,"hook_event_name":"Stop"}`, Claude},
		{"empty turn_id", `{"turn_id":""}`, Claude},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Decode([]byte(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if in.Agent != tc.want {
				t.Errorf("agent = %s, want %s", in.Agent, tc.want)
			}
		})
	}
}

func TestActionWording(t *testing.T) {
	tests := []struct {
		agent     Agent
		ref, verb string
	}{
		{Claude, "/taskie:continue-plan", "Run /taskie:continue-plan"},
		{Codex, "$taskie-continue-plan", "Use the taskie-continue-plan skill ($taskie-continue-plan)"},
	}
	for _, tc := range tests {
		if got := ActionRef(tc.agent, "continue-plan"); got != tc.ref {
			t.Errorf("ActionRef(%s) = %q, want %q", tc.agent, got, tc.ref)
		}
		if got := RunAction(tc.agent, "continue-plan"); got != tc.verb {
			t.Errorf("RunAction(%s) = %q, want %q", tc.agent, got, tc.verb)
		}
	}
}
