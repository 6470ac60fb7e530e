//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/claudeapi"
)

// TestRealClientInstalledPlugin installs taskie the way a user does —
// `taskie install claude --scope user` with `claude` on PATH, which writes
// the user's ~/.claude/settings.json and runs `claude plugin marketplace
// add` and `claude plugin install` — and then runs `claude -p` in a
// project with no --plugin-dir and no project settings: the Stop and
// SessionStart hooks can only come from the installed plugin. taskie on
// PATH is a small wrapper that records CLAUDE_PLUGIN_ROOT and
// TASKIE_SESSION_ID of every call, so the test sees which plugin copy ran
// each hook. One code review cycle runs (PASS, PASS: one block).
// Finally `taskie uninstall claude` removes the plugin again.
func TestRealClientInstalledPlugin(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	bin := queue(t, root, 17*time.Second)
	ctx, cancel := deadline(t)
	defer cancel()

	wrapDir := t.TempDir()
	calls := filepath.Join(wrapDir, "calls.tsv")
	writeFile(t, filepath.Join(wrapDir, "taskie"), fmt.Sprintf(
		"#!/bin/sh\nprintf '%%s\\t%%s\\t%%s\\n' \"${CLAUDE_PLUGIN_ROOT:-}\" \"${TASKIE_SESSION_ID:-}\" \"$*\" >> '%s'\nexec '%s' \"$@\"\n",
		calls, filepath.Join(bin, "taskie")))
	if err := os.Chmod(filepath.Join(wrapDir, "taskie"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRig(ctx, t, claude, root, wrapDir, false, claudeapi.Script{Verdicts: []string{"PASS", "PASS"}})

	// Install, as the user would, from the project directory.
	out, code := r.taskie("install", "claude", "--scope", "user")
	t.Logf("taskie install claude --scope user (exit %d):\n%s", code, lastLines(out, 6))
	if code != 0 {
		t.Fatalf("taskie install claude --scope user: exit %d", code)
	}
	for _, want := range []string{"claude plugin marketplace add", "claude plugin install"} {
		if !strings.Contains(out, want) {
			t.Errorf("taskie install did not run `%s`:\n%s", want, out)
		}
	}
	var settings map[string]any
	readJSON(t, filepath.Join(r.home, ".claude", "settings.json"), &settings)
	if enabled, _ := settings["enabledPlugins"].(map[string]any); enabled["taskie@taskie"] != true {
		t.Errorf("~/.claude/settings.json does not enable taskie@taskie: %v", settings)
	}
	if _, ok := settings["hooks"]; ok {
		t.Errorf("~/.claude/settings.json has hooks of its own; they must come from the plugin: %v", settings["hooks"])
	}
	if installed := readFile(t, filepath.Join(r.home, ".claude", "plugins", "installed_plugins.json")); !strings.Contains(installed, "taskie@taskie") {
		t.Errorf("installed_plugins.json does not list taskie@taskie:\n%s", installed)
	}
	list, stderr, err := runClaude(ctx, t, claude, r.proj, r.env, "plugin", "list")
	if err != nil || !strings.Contains(list, "taskie@taskie") {
		t.Errorf("claude plugin list: %v\n%s%s", err, list, stderr)
	}
	t.Logf("claude plugin list:\n%s", list)

	newProject(t, bin, r.proj)
	if _, err := os.Stat(filepath.Join(r.proj, ".claude")); err == nil {
		t.Fatal("the project has a .claude directory: the hooks must come from the user's plugin only")
	}
	writeFile(t, calls, "") // the calls of the Claude Code session only
	tr := r.turn("installed plugin", "Implement task 1 of the taskie plan p.",
		claudeapi.Call("Bash", map[string]any{"command": "taskie start 1 --auto", "description": "Start task 1"}),
		claudeapi.Call("Write", map[string]any{"file_path": filepath.Join(r.proj, "hello.go"), "content": helloGo}),
		claudeapi.Text("Task 1 is implemented in hello.go."))

	// The hooks ran from the installed plugin, for this session: the copy
	// in taskie's local marketplace (a directory marketplace's plugin runs
	// in place with 2.1.197) or Claude Code's cache of it — never the
	// repository's plugin/.
	installed := []string{
		filepath.Join(r.home, ".taskie", "claude-marketplace", "plugin"),
		filepath.Join(r.home, ".claude", "plugins", "cache", "taskie", "taskie"),
	}
	var hooks []string
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, calls)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			continue
		}
		pluginRoot, sid, args := f[0], f[1], f[2]
		if strings.HasPrefix(args, "hook ") {
			hooks = append(hooks, args)
			if pluginRoot == "" || !(within(pluginRoot, installed[0]) || within(pluginRoot, installed[1])) {
				t.Errorf("`taskie %s` ran with CLAUDE_PLUGIN_ROOT %q, not from the installed plugin (%q)", args, pluginRoot, installed)
			}
		}
		if args == "start 1 --auto" && sid != tr.SessionID {
			t.Errorf("`taskie start 1 --auto` ran with TASKIE_SESSION_ID %q, want the session %s (SessionStart exports it)", sid, tr.SessionID)
		}
	}
	if got := strings.Join(hooks, ", "); got != "hook session-start, hook stop, hook stop" {
		t.Errorf("hook calls %q; want session-start, then stop twice", got)
	}
	t.Logf("taskie calls (CLAUDE_PLUGIN_ROOT, TASKIE_SESSION_ID, args):\n%s", readFile(t, calls))

	ds := stopDecisions(t, filepath.Join(r.proj, ".taskie", "logs", "p.log"))
	if got := summary(ds); got != "block (code-review 1: PASS), allow (code-review 2: PASS)" {
		t.Errorf("taskie's Stop decisions %s; want block (code-review 1: PASS), allow (code-review 2: PASS)", got)
	}
	for _, d := range ds {
		if d.Session != tr.SessionID {
			t.Errorf("a Stop decision for session %s, want %s", d.Session, tr.SessionID)
		}
	}
	calls0 := sessionCalls(r.srv, tr.SessionID)
	if len(calls0) == 0 || !strings.Contains(calls0[0].SessionStartContext, "taskie") {
		t.Errorf("no taskie SessionStart context reached the model")
	}
	if fb := feedbacks(r.srv, tr.SessionID); len(fb) != 1 || !strings.HasPrefix(fb[0], "Stop hook feedback:\n[taskie hook stop]: taskie: code review 1 of task 1") {
		t.Errorf("the agent saw Stop hook blocks %q; want one code review 1 block", fb)
	}
	if n := len(firstPerSession(r.srv.Calls(claudeapi.Reviewer))); n != 2 {
		t.Errorf("%d reviewer sessions, want 2", n)
	}
	dir := r.planDir("p")
	wantFiles(t, dir, []string{"task-1-review-1.md", "task-1-review-2.md", "task-1-post-review-1.md"}, []string{"task-1-review-3.md"})
	wantAwaitingCommit(t, dir)
	noToolErrors(t, r.srv)

	// Uninstall: the plugin is gone from Claude Code and from the settings.
	out, code = r.taskie("uninstall", "claude", "--scope", "user")
	t.Logf("taskie uninstall claude --scope user (exit %d):\n%s", code, out)
	if code != 0 {
		t.Errorf("taskie uninstall claude --scope user: exit %d", code)
	}
	settings = nil
	// install created the settings file; uninstall leaves nothing empty behind
	if _, err := os.Stat(filepath.Join(r.home, ".claude", "settings.json")); err == nil {
		readJSON(t, filepath.Join(r.home, ".claude", "settings.json"), &settings)
	}
	if enabled, _ := settings["enabledPlugins"].(map[string]any); enabled["taskie@taskie"] != nil {
		t.Errorf("after uninstall, ~/.claude/settings.json still enables taskie@taskie: %v", settings)
	}
	if list, _, _ := runClaude(ctx, t, claude, r.proj, r.env, "plugin", "list"); strings.Contains(list, "taskie@taskie") {
		t.Errorf("after uninstall, claude plugin list still shows taskie@taskie:\n%s", list)
	}
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
