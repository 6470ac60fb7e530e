package review

import (
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
)

// Pick is the reviewer, model and reasoning effort for one review.
type Pick struct {
	Reviewer string       // adapter name: "claude" or "codex"
	Model    domain.Model // model for the reviewer; "" = the reviewer's default
	Effort   string       // codex only: "high" or "medium" when no model is chosen; else ""
	// Command is the program a `cmd:` rotation entry runs in place of the
	// configured reviewer's CLI (it speaks that CLI's protocol); nil for a
	// model entry.
	Command []string
}

// Resolve picks the reviewer and model for the review at position index of
// the model rotation (docs/hook.md#the-reviewer). An entry is `reviewer:model` (`claude:opus`,
// `codex:gpt-5.5`), a bare reviewer name (`codex`: its default model) or a
// bare model (`sonnet`) for the configured reviewer ("" = claude), or a
// command (`cmd:my-reviewer --strict`) run as the configured reviewer. A model
// name may itself hold a colon (`gpt-oss:20b`): only a known reviewer name
// before the first colon is taken as one.
//
// Claude models never go to codex: codex with a Claude alias, or with no
// model, gets its own default model and alternates the reasoning effort
// instead, "high" at even positions and "medium" at odd ones. An empty
// rotation is one default-model entry for the configured reviewer, with
// the effort still alternating by index; an index past the end wraps.
func Resolve(configured string, rotation []domain.Model, index int) Pick {
	if configured == "" {
		configured = "claude"
	}
	index = max(index, 0)
	entry := ""
	if len(rotation) > 0 {
		entry = strings.TrimSpace(string(rotation[index%len(rotation)]))
	}
	p := Pick{Reviewer: configured, Model: domain.Model(entry)}
	if config.IsCommand(entry) {
		return Pick{Reviewer: configured, Command: config.CommandArgv(entry)}
	}
	if name, model, ok := strings.Cut(entry, ":"); ok && isReviewer(name) {
		p = Pick{Reviewer: strings.ToLower(name), Model: domain.Model(strings.TrimSpace(model))}
	} else if isReviewer(entry) {
		p = Pick{Reviewer: strings.ToLower(entry)}
	}
	if p.Reviewer == "codex" && (p.Model == "" || IsClaudeModel(p.Model)) {
		p.Model, p.Effort = "", "high"
		if index%2 == 1 {
			p.Effort = "medium"
		}
	}
	return p
}

// isReviewer reports whether s names a reviewer adapter.
func isReviewer(s string) bool {
	_, ok := adapters[strings.ToLower(s)]
	return ok
}

// claudeAliases are the model aliases Claude Code accepts besides full
// `claude-…` names.
var claudeAliases = map[string]bool{"opus": true, "sonnet": true, "haiku": true, "opusplan": true}

// IsClaudeModel reports whether model names a Claude model: an alias
// (`opus`, `sonnet`, `haiku`, `opusplan`, with or without a `[1m]` context
// suffix) or a full `claude-…` name. Such a model is never sent to codex.
func IsClaudeModel(model domain.Model) bool {
	m := strings.ToLower(strings.TrimSpace(string(model)))
	if base, _, ok := strings.Cut(m, "["); ok {
		m = base
	}
	return claudeAliases[m] || strings.HasPrefix(m, "claude-")
}

// CommandFor is the reviewer_command to run adapter with: the command is
// configured for the configured reviewer ("" = claude) and speaks that
// CLI's protocol, so a rotation entry that picks another adapter
// (`codex:gpt-5.5` next to a custom claude command) runs that adapter's
// own CLI. nil means the adapter's default executable.
func CommandFor(configured, adapter string, command []string) []string {
	if configured == "" {
		configured = "claude"
	}
	if len(command) == 0 || !strings.EqualFold(adapter, configured) {
		return nil
	}
	return command
}

// Program is what runs this pick's review: its own `cmd:` command, else
// the reviewer_command when it is configured for this adapter (CommandFor),
// else nil for the adapter's default executable.
func (p Pick) Program(configured string, command []string) []string {
	if len(p.Command) > 0 {
		return p.Command
	}
	return CommandFor(configured, p.Reviewer, command)
}

// Adapters lists the reviewer adapters a rotation uses, in rotation
// order, each once: the configured reviewer alone when the rotation is
// empty.
func Adapters(configured string, rotation []domain.Model) []string {
	var out []string
	for i := range max(len(rotation), 1) {
		if r := Resolve(configured, rotation, i).Reviewer; !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
