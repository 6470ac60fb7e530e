package install

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

var assets = fstest.MapFS{
	"plugin/.claude-plugin/plugin.json": {Data: []byte(`{"name":"taskie"}`)},
	"plugin/hooks/hooks.json":           {Data: []byte(`{"hooks":{}}`)},
	"plugin/commands/new-plan.md":       {Data: []byte("---\ndescription: x\n---\n")},
	"codex/prompts/new-plan.md":         {Data: []byte("prompt")},
}

const populated = `{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "my-linter --check"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
  },
  "enabledPlugins": {"other@market": true},
  "permissions": {"allow": ["Bash(ls:*)"]}
}
`

func actions(cs []Change) map[string]string {
	m := map[string]string{}
	for _, c := range cs {
		m[filepath.Base(c.Path)] = c.Action
	}
	return m
}

func readJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return m
}

func TestClaudeInstallFreshThenNoop(t *testing.T) {
	tg := Target{Scope: ScopeUser, Home: t.TempDir()}
	cs, err := Claude(tg, assets)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs)["settings.json"]; got != "created" {
		t.Errorf("settings.json: %s, want created", got)
	}
	settings, _ := tg.ClaudeSettings()
	mp, _ := tg.ClaudeMarketplace()
	want := map[string]any{
		"extraKnownMarketplaces": map[string]any{"taskie": map[string]any{"source": map[string]any{"source": "directory", "path": mp}}},
		"enabledPlugins":         map[string]any{"taskie@taskie": true},
	}
	if diff := cmp.Diff(want, readJSON(t, settings)); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(mp, "plugin", "commands", "new-plan.md")); err != nil {
		t.Error(err)
	}
	again, err := Claude(tg, assets)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if c.Action != "unchanged" {
			t.Errorf("re-run changed %s (%s)", c.Path, c.Action)
		}
	}
}

func TestClaudeKeepsOtherSettings(t *testing.T) {
	root := t.TempDir()
	tg := Target{Scope: ScopeProject, Home: t.TempDir(), Root: root}
	settings, _ := tg.ClaudeSettings()
	if err := writeFile(settings, []byte(populated)); err != nil {
		t.Fatal(err)
	}
	if _, err := Claude(tg, assets); err != nil {
		t.Fatal(err)
	}
	got := readJSON(t, settings)
	if got["model"] != "opus" || got["permissions"] == nil || got["hooks"] == nil {
		t.Errorf("other settings lost: %v", got)
	}
	if diff := cmp.Diff(map[string]any{"other@market": true, "taskie@taskie": true}, got["enabledPlugins"]); diff != "" {
		t.Errorf("enabledPlugins (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(settings)
	if i, j := bytes.Index(data, []byte(`"model"`)), bytes.Index(data, []byte(`"permissions"`)); i < 0 || j < i {
		t.Errorf("key order changed:\n%s", data)
	}
	if _, err := UninstallClaude(tg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	_ = json.Unmarshal([]byte(populated), &want)
	if diff := cmp.Diff(want, readJSON(t, settings)); diff != "" {
		t.Errorf("uninstall should restore the user's settings (-want +got):\n%s", diff)
	}
	mp, _ := tg.ClaudeMarketplace()
	if _, err := os.Stat(mp); !os.IsNotExist(err) {
		t.Errorf("marketplace dir left behind: %v", err)
	}
}

func TestCodexInstallKeepsOtherHooks(t *testing.T) {
	home := t.TempDir()
	tg := Target{Scope: ScopeUser, Home: home}
	hooks, _ := tg.CodexHooks()
	if err := writeFile(hooks, []byte(populated)); err != nil {
		t.Fatal(err)
	}
	if _, err := Codex(tg, assets); err != nil {
		t.Fatal(err)
	}
	again, err := Codex(tg, assets)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if c.Action != "unchanged" {
			t.Errorf("re-run changed %s (%s)", c.Path, c.Action)
		}
	}
	got := readJSON(t, hooks)
	stop := got["hooks"].(map[string]any)["Stop"].([]any)
	if len(stop) != 2 {
		t.Fatalf("Stop hooks = %v, want the user's and taskie's", stop)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "prompts", "taskie-new-plan.md")); err != nil {
		t.Error(err)
	}
	if _, err := UninstallCodex(tg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	_ = json.Unmarshal([]byte(populated), &want)
	if diff := cmp.Diff(want, readJSON(t, hooks)); diff != "" {
		t.Errorf("uninstall (-want +got):\n%s", diff)
	}
	if m, _ := filepath.Glob(filepath.Join(home, ".codex", "prompts", "taskie-*")); len(m) != 0 {
		t.Errorf("prompts left: %v", m)
	}
}

func TestBadSettingsFileIsNotOverwritten(t *testing.T) {
	tg := Target{Scope: ScopeUser, Home: t.TempDir()}
	settings, _ := tg.ClaudeSettings()
	if err := writeFile(settings, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := Claude(tg, assets); err == nil {
		t.Fatal("want an error for a malformed settings.json")
	}
	if data, _ := os.ReadFile(settings); string(data) != "{not json" {
		t.Errorf("malformed settings.json was rewritten: %q", data)
	}
}
