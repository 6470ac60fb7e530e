package install

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Runner runs the claude CLI in dir; nil when claude is not installed.
type Runner func(dir string, args ...string) (string, error)

// ClaudeCLI completes the registration through the claude CLI itself, so the
// plugin is installed in Claude Code's plugin cache now rather than at the
// next interactive start, and refreshed when its files changed. The CLI may
// rewrite the marketplace entry of settings.json in its own way (an
// absolute path): taskie's entry is put back afterwards.
func ClaudeCLI(t Target, run Runner, filesChanged bool) ([]Change, error) {
	if run == nil {
		// Said, not hidden: until the CLI installs the plugin, Claude Code
		// has no record of it (`claude plugin list` shows none) and runs
		// none of its hooks.
		scope := ""
		if t.Scope == ScopeProject {
			scope = " --scope project"
		}
		return []Change{{Path: "claude plugin install", Action: "skipped",
			What: "the claude CLI is not on PATH, so the plugin is enabled in settings but not installed in Claude Code and its hooks do not run yet; install Claude Code (npm install -g @anthropic-ai/claude-code), then run `taskie install claude" + scope + "` again"}}, nil
	}
	mp, err := t.marketplaceSource()
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
	settings, err := t.ClaudeSettings()
	if err != nil {
		return out, err
	}
	c, err := claudeSettings(t, settings)
	if c.Action != "unchanged" {
		c.What = "taskie's marketplace entry put back after the claude CLI"
		out = append(out, c)
	}
	return out, err
}

// UninstallClaudeCLI removes the plugin and marketplace from Claude Code's
// own records: through the claude CLI when it is installed (failures are
// reported, not fatal: they may not be there), and then, whether or not it
// is, from the files the CLI keeps them in, so that an uninstall without
// the CLI leaves nothing registered either.
func UninstallClaudeCLI(t Target, run Runner) []Change {
	scope := t.Scope
	if scope == "" {
		scope = ScopeUser
	}
	var out []Change
	if run != nil {
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
	}
	return append(out, unregisterClaude(t, scope)...)
}

// The records of Claude Code's plugin system, under ~/.claude/plugins.
func (t Target) claudePlugins() string { return filepath.Join(t.Home, ".claude", "plugins") }

// unregisterClaude removes taskie's entries of this scope from
// installed_plugins.json; when no entry of the taskie marketplace is left,
// also the marketplace from known_marketplaces.json and the plugin's cache.
func unregisterClaude(t Target, scope string) []Change {
	dir := t.claudePlugins()
	var out []Change
	installed := filepath.Join(dir, "installed_plugins.json")
	left := false
	c, err := editJSON("", installed, func(o *object) error {
		left = dropInstalled(o, t, scope)
		return nil
	})
	if err == nil && c.Action != "unchanged" {
		c.What = "plugin " + PluginID + " (" + scope + ") unregistered"
		out = append(out, c)
	}
	if left {
		return out
	}
	known := filepath.Join(dir, "known_marketplaces.json")
	c, err = editJSON("", known, func(o *object) error {
		o.del(Marketplace)
		return nil
	})
	if err == nil && c.Action != "unchanged" {
		c.What = "marketplace " + Marketplace + " unregistered"
		out = append(out, c)
	}
	cache := filepath.Join(dir, "cache", Marketplace)
	if exists("", cache) && removeTree("", cache) == nil {
		out = append(out, Change{Path: cache, Action: "removed", What: "Claude Code's copy of the plugin"})
		removeIfEmpty("", filepath.Dir(cache))
	}
	return out
}

// dropInstalled removes the entries of taskie@taskie for this scope (and,
// for a project scope, this project) from installed_plugins.json, which
// lists them under "plugins" either as one object per plugin or as a list
// of installs per plugin. It reports whether taskie entries are left.
func dropInstalled(o *object, t Target, scope string) bool {
	plugins, err := o.child("plugins")
	if err != nil {
		return true // not a form we know: leave it, and the marketplace, alone
	}
	raw, ok := plugins.vals[PluginID]
	if !ok {
		return otherTaskie(plugins)
	}
	var installs []map[string]any
	if json.Unmarshal(raw, &installs) != nil {
		var one map[string]any
		if json.Unmarshal(raw, &one) != nil {
			return true
		}
		installs = []map[string]any{one}
	}
	var keep []map[string]any
	for _, in := range installs {
		if !sameInstall(in, t, scope) {
			keep = append(keep, in)
		}
	}
	if len(keep) == 0 {
		plugins.del(PluginID)
	} else {
		b, _ := json.Marshal(keep)
		plugins.set(PluginID, b)
	}
	o.setChild("plugins", plugins)
	return len(keep) > 0 || otherTaskie(plugins)
}

// sameInstall reports whether an install record is the one of this scope:
// a user install, or a project install of this project. A record without
// a scope is the old form, which is per user.
func sameInstall(in map[string]any, t Target, scope string) bool {
	s, _ := in["scope"].(string)
	if s == "" {
		return scope == ScopeUser
	}
	if s != scope {
		return false
	}
	if scope == ScopeUser {
		return true
	}
	p, _ := in["projectPath"].(string)
	return p == "" || sameDir(p, t.Root)
}

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// otherTaskie reports whether another plugin of the taskie marketplace is
// installed.
func otherTaskie(plugins *object) bool {
	for _, k := range plugins.keys {
		if strings.HasSuffix(k, "@"+Marketplace) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
