package install

import (
	"fmt"
	"strings"
)

// Runner runs the claude CLI in dir; nil when claude is not installed.
type Runner func(dir string, args ...string) (string, error)

// ClaudeCLI completes the registration through the claude CLI itself, so the
// plugin is installed in Claude Code's plugin cache now rather than at the
// next interactive start, and refreshed when its files changed.
func ClaudeCLI(t Target, run Runner, filesChanged bool) ([]Change, error) {
	if run == nil {
		return []Change{{Path: "claude", Action: "unchanged", What: "claude CLI not on PATH: Claude Code installs the plugin from settings at its next start"}}, nil
	}
	mp, err := t.ClaudeMarketplace()
	if err != nil {
		return nil, err
	}
	dir := t.Root
	scope := t.Scope
	if scope == "" {
		scope = ScopeUser
	}
	steps := [][]string{
		{"plugin", "marketplace", "add", mp, "--scope", scope},
		{"plugin", "install", PluginID, "--scope", scope},
	}
	if filesChanged {
		steps = append(steps, []string{"plugin", "update", PluginID, "--scope", scope})
	}
	var out []Change
	for _, args := range steps {
		msg, err := run(dir, args...)
		if err != nil {
			return out, fmt.Errorf("claude %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(msg))
		}
		action := "updated"
		if strings.Contains(msg, "already") {
			action = "unchanged"
		}
		out = append(out, Change{Path: "claude " + strings.Join(args[:3], " "), Action: action, What: lastLine(msg)})
	}
	return out, nil
}

// UninstallClaudeCLI removes the plugin and marketplace from Claude Code's
// own records; failures are reported, not fatal (they may not be there).
func UninstallClaudeCLI(t Target, run Runner) []Change {
	if run == nil {
		return nil
	}
	scope := t.Scope
	if scope == "" {
		scope = ScopeUser
	}
	var out []Change
	for _, args := range [][]string{
		{"plugin", "uninstall", PluginID, "--scope", scope},
		{"plugin", "marketplace", "remove", Marketplace},
	} {
		msg, err := run(t.Root, args...)
		action := "removed"
		if err != nil {
			action = "unchanged"
		}
		out = append(out, Change{Path: "claude " + strings.Join(args[:3], " "), Action: action, What: lastLine(msg)})
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
