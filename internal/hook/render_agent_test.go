package hook

import (
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
)

// Messages to a Codex agent name its skills, never Claude Code's slash
// commands (Codex has none for taskie).
func TestMessagesNameTheAgentsWayToRunAnAction(t *testing.T) {
	next := domain.CompleteTask
	s := &state.State{Phase: domain.CodeReview, NextPhase: &next}
	for _, tc := range []struct {
		agent     Agent
		want, not string
	}{
		{Claude, "/taskie:continue-plan", "$taskie-"},
		{Codex, "$taskie-continue-plan", "/taskie:"},
	} {
		for name, msg := range map[string]string{
			"advance": advanced(view{agent: tc.agent}, domain.CodeReview, domain.CompleteTask, false).Message,
			"pending": pendingMessage(s, tc.agent),
		} {
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
				t.Errorf("%s, %s: %q, want %q and no %q", tc.agent, name, msg, tc.want, tc.not)
			}
		}
	}
}
