package hook

import (
	"path/filepath"
	"strings"

	"github.com/taskie-dev/taskie/internal/workflow"
)

// Agent is the coding agent on the other side of a hook or a command:
// messages name its way to run a taskie action.
type Agent = workflow.Agent

// The agents taskie talks to.
const (
	Claude = workflow.ClaudeCode // Claude Code: slash commands, /taskie:<action>
	Codex  = workflow.Codex      // Codex: skills, $taskie-<action>
)

// agentOf tells which agent wrote a hook input, from its turn_id and
// transcript_path. Codex's inputs carry what Claude Code's never do
// (checked with @openai/codex 0.169.0 and Claude Code 2.1.197):
//   - "turn_id" on every turn-scoped event (Stop, UserPromptSubmit, the
//     tool events); Claude Code has no turn id;
//   - a transcript that is a Codex rollout,
//     $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl, on
//     every event that has one (SessionStart has no turn_id); Claude
//     Code's are ~/.claude/projects/<dir>/<session>.jsonl.
//
// Anything else is Claude Code, the agent taskie served first.
func agentOf(turnID any, transcript string) Agent {
	if id, ok := turnID.(string); ok && id != "" {
		return Codex
	}
	if strings.HasPrefix(filepath.Base(transcript), "rollout-") {
		return Codex
	}
	return Claude
}

// ActionRef is how a user or an agent invokes a taskie action:
// /taskie:continue-plan in Claude Code, $taskie-continue-plan in Codex
// (a skill mention; Codex has no custom slash commands since 0.117.0).
func ActionRef(a Agent, action string) string { return a.Ref(action) }

// RunAction is the instruction to perform an action, to start a sentence
// of a message to the agent: "Run /taskie:continue-plan" for Claude Code;
// for Codex, the skill by name and mention, since "run $taskie-…" could be
// read as a shell command.
func RunAction(a Agent, action string) string {
	if a == Codex {
		return "Use the taskie-" + action + " skill (" + ActionRef(a, action) + ")"
	}
	return "Run " + ActionRef(a, action)
}
