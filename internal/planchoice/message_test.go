package planchoice

import (
	"testing"
	"time"
)

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		choice Choice
		want   string
	}{
		{
			name:   "another session mid-turn",
			choice: Choice{Reason: MidTurnElsewhere, Candidates: []string{"api"}, Awaits: map[string]string{"api": "code-review"}, Blocker: "abc123", BlockedAgo: 2*time.Minute + 10*time.Second},
			want:   "taskie: plan \"api\" awaits a code review but session abc123 is mid-turn on it (blocked 2m ago); to drive it from this session, run `taskie status --plan api` (naming the plan takes it over) and stop again.",
		},
		{
			name:   "other sessions mid-turn on several plans",
			choice: Choice{Reason: MidTurnElsewhere, Candidates: []string{"api", "web"}, Awaits: map[string]string{"api": "plan-review", "web": "plan-review"}, Blocker: "abc123", BlockedAgo: 40 * time.Second},
			want:   "taskie: plans \"api\" and \"web\" await a plan review but other sessions are mid-turn on them (session abc123 blocked on \"api\" 40s ago); to drive one from this session, run `taskie status --plan ID` (naming the plan takes it over) and stop again.",
		},
		{
			name:   "several pending",
			choice: Choice{Reason: SeveralPending, Candidates: []string{"b", "a", "c"}, Awaits: map[string]string{"b": "create-tasks", "a": "code-review", "c": "post-code-review"}},
			want:   "taskie: plans \"b\" (task creation), \"a\" (a code review) and \"c\" (the fixes of its last review) await the hook and this session has named none of them, so none was driven; name the one to drive with `taskie status --plan ID` (e.g. `taskie status --plan b`) and stop again.",
		},
		{
			name:   "the session works on another plan",
			choice: Choice{Plan: "x", Reason: Mentioned, Candidates: []string{"y"}, Awaits: map[string]string{"y": "create-tasks"}},
			want:   "taskie: plan \"y\" awaits task creation but this session is working on plan \"x\", so it was not driven; to drive it from this session, run `taskie status --plan y` and stop again.",
		},
		{
			name:   "a session id from the hook input is quoted when odd",
			choice: Choice{Reason: MidTurnElsewhere, Candidates: []string{"api"}, Blocker: "a b\n", BlockedAgo: 90 * time.Minute},
			want:   "taskie: plan \"api\" awaits the hook but session \"a b\\n\" is mid-turn on it (blocked 1h30m ago); to drive it from this session, run `taskie status --plan api` (naming the plan takes it over) and stop again.",
		},
		{name: "acting on a pending plan says nothing", choice: Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A"}},
		{name: "a mention with nothing else pending says nothing", choice: Choice{Plan: "api", Reason: Mentioned}},
		{name: "validation only says nothing", choice: Choice{Plan: "api", Reason: NewestForValidation}},
		{name: "no plans says nothing", choice: Choice{Reason: NoPlans}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Message(tc.choice); got != tc.want {
				t.Errorf("Message:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
