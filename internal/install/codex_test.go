package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func ptr[T any](v T) *T { return &v }

// TestCodexHookHash checks the hash against the currentHash that
// `codex app-server` (hooks/list) of @openai/codex 0.169.0 reported for the
// same hooks.json entries.
func TestCodexHookHash(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		matcher *string
		h       CodexHandler
		want    string
	}{
		{"taskie Stop", "Stop", nil, CodexHandler{Type: "command", Command: "taskie hook stop", Timeout: ptr[int64](1800)},
			"sha256:c549cdda0b297f908c97e2c3925aa34175b4cd19547d2690e740705c960f74a4"},
		{"taskie SessionStart", "SessionStart", nil, CodexHandler{Type: "command", Command: "taskie hook session-start", Timeout: ptr[int64](30)},
			"sha256:db6bfdb1d5498032859d0d5fb7973b969d474c35d9e81528d5ee58ea04d23ee6"},
		{"matcher, status message, default timeout", "SessionStart", ptr("startup|resume"),
			CodexHandler{Type: "command", Command: "taskie hook session-start", StatusMessage: ptr("taskie: plan summary")},
			"sha256:37f9c7b0502f5a950447aeda1ccbaa0c9d3e8107e91e775f4cb12c320ee7a807"},
		{"Stop ignores its matcher; timeout 0 counts as 1; no HTML escapes", "Stop", ptr("ignored"),
			CodexHandler{Type: "command", Command: "/opt/t <a> & \"q\" \\ é\ttab", Timeout: ptr[int64](0)},
			"sha256:fa836025125c88e44e35d25e3a347b65810a73da6f68f74cecb191135e86824d"},
		{"second handler", "Stop", nil, CodexHandler{Type: "command", Command: "x", Timeout: ptr[int64](5)},
			"sha256:2dcb998145aaf63e44fad9377927d8882390d97b684efae713e8ea48d088717b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CodexHookHash(tc.event, tc.matcher, tc.h); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCodexHooksInKeys(t *testing.T) {
	data := []byte(`{"hooks": {"Stop": [
	  {"hooks": [{"type": "command", "command": "my-linter"}]},
	  {"hooks": [{"type": "prompt"}, {"type": "command", "command": "taskie hook stop", "timeout": 1800}]}]}}`)
	got, err := codexHooksOf(data, "/h/hooks.json", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []CodexHook{{File: "/h/hooks.json", Event: "Stop", Group: 1, Handler: 1, Command: "taskie hook stop",
		Key: "/h/hooks.json:stop:1:1", Hash: "sha256:c549cdda0b297f908c97e2c3925aa34175b4cd19547d2690e740705c960f74a4"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

const userConfig = `# my Codex settings
model = "gpt-5.5"   # the best one
model_provider = "mine"

[model_providers.mine]
name = "Mine"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
headers = { "X-Team" = "core", nested = { deep = ["[not a table]", 'it''s'] } }

instructions = """
[hooks.state."not a header"]
trusted_hash = "inside a string"
"""

[projects."/work/p"]
trust_level = "trusted"
`

func TestSetTrustAppendsAndKeepsEverything(t *testing.T) {
	out, err := setTrust(userConfig, "/c/hooks.json:stop:0:0", "sha256:aa", "taskie's Stop hook")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, userConfig) {
		t.Fatalf("the user's text changed:\n%s", out)
	}
	added := strings.TrimPrefix(out, userConfig)
	want := "\n# Added by `taskie install codex`: lets Codex run taskie's Stop hook.\n[hooks.state.\"/c/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:aa\"\n"
	if added != want {
		t.Errorf("added %q, want %q", added, want)
	}
	again, err := setTrust(out, "/c/hooks.json:stop:0:0", "sha256:aa", "")
	if err != nil || again != out {
		t.Errorf("second set changed the file (%v):\n%s", err, again)
	}
	stale, err := setTrust(out, "/c/hooks.json:stop:0:0", "sha256:bb", "")
	if err != nil || stale != strings.Replace(out, "sha256:aa", "sha256:bb", 1) {
		t.Errorf("a stale hash is not replaced in place (%v):\n%s", err, stale)
	}
	cfg := readConfigString(t, stale)
	if cfg.States["/c/hooks.json:stop:0:0"].TrustedHash != "sha256:bb" || len(cfg.States) != 1 {
		t.Errorf("states = %+v; the multi-line string must not count", cfg.States)
	}
	back, err := dropTrust(stale, "/c/hooks.json:stop:0:0")
	if err != nil || back != userConfig {
		t.Errorf("dropTrust did not restore the file (%v):\n%q", err, back)
	}
}

func readConfigString(t *testing.T, src string) CodexConfig {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadCodexConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestSetTrustExistingForms(t *testing.T) {
	const key = "/c/hooks.json:stop:0:0"
	tests := []struct{ name, src, want string }{
		{"header with other settings",
			"[hooks.state.\"/c/hooks.json:stop:0:0\"]\nenabled = true\n",
			"[hooks.state.\"/c/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:aa\"\nenabled = true\n"},
		{"dotted keys under [hooks.state]",
			"[hooks.state]\n\"/c/hooks.json:stop:0:0\".enabled = true\n",
			"[hooks.state]\n\"/c/hooks.json:stop:0:0\".enabled = true\n\"/c/hooks.json:stop:0:0\".trusted_hash = \"sha256:aa\"\n"},
		{"literal-string key, stale hash",
			"[hooks.state.'/c/hooks.json:stop:0:0']\ntrusted_hash = 'sha256:old' # mine\n",
			"[hooks.state.'/c/hooks.json:stop:0:0']\ntrusted_hash = \"sha256:aa\" # mine\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setTrust(tc.src, key, "sha256:aa", "")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if h := readConfigString(t, got).States[key].TrustedHash; h != "sha256:aa" {
				t.Errorf("read back %q", h)
			}
		})
	}
	if _, err := setTrust("hooks = { state = {} }\n", key, "sha256:aa", ""); err == nil {
		t.Error("an inline hooks table must be refused, not broken")
	}
	if _, err := setTrust("x = [1,\n", key, "sha256:aa", ""); err == nil {
		t.Error("a malformed file must be refused")
	}
}

func TestDropTrustKeepsTheUsersSettings(t *testing.T) {
	src := "[hooks.state.\"k\"]\nenabled = false\ntrusted_hash = \"sha256:aa\"\n"
	got, err := dropTrust(src, "k")
	if err != nil || got != "[hooks.state.\"k\"]\nenabled = false\n" {
		t.Errorf("got %q (%v)", got, err)
	}
}

func TestReadCodexConfigFeatures(t *testing.T) {
	cfg := readConfigString(t, "[features]\nhooks = false\n")
	if cfg.HooksOff != "[features] hooks = false" {
		t.Errorf("HooksOff = %q", cfg.HooksOff)
	}
}

// codexTarget is a user-scope target with its own CODEX_HOME.
func codexTarget(t *testing.T) Target {
	t.Helper()
	home := t.TempDir()
	return Target{Scope: ScopeUser, Home: home, Root: t.TempDir(), CodexHome: filepath.Join(home, "codex-home")}
}

func TestCodexInstallFreshThenUninstallLeavesNothing(t *testing.T) {
	tg := codexTarget(t)
	cs, err := Codex(tg, assets, CodexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hooks, _ := tg.CodexHooks()
	hs, err := CodexHooksIn("", hooks, hooks, false)
	if err != nil || len(hs) != 2 {
		t.Fatalf("taskie hooks = %+v (%v), want Stop and SessionStart", hs, err)
	}
	cfg, err := ReadCodexConfig(tg.CodexConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if got := cfg.States[h.Key].TrustedHash; got != h.Hash {
			t.Errorf("%s: trusted_hash %q, want %q", h.Key, got, h.Hash)
		}
	}
	if got := actions(cs)["config.toml"]; got != "created" {
		t.Errorf("config.toml: %s, want created", got)
	}
	if _, err := os.Stat(filepath.Join(tg.CodexSkills(), "taskie-new-plan", "SKILL.md")); err != nil {
		t.Error(err)
	}
	again, err := Codex(tg, assets, CodexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if c.Action != "unchanged" {
			t.Errorf("re-run changed %s (%s)", c.Path, c.Action)
		}
	}
	if _, err := UninstallCodex(tg, assets); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tg.CodexHome); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(tg.CodexHome)
		t.Errorf("CODEX_HOME left behind (%v): %v", err, entries)
	}
}

func TestCodexInstallKeepsTheUsersFiles(t *testing.T) {
	tg := codexTarget(t)
	hooks, _ := tg.CodexHooks()
	userHooks := `{
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "my-linter --check"}]}]
  }
}
`
	if err := writeFile(hooks, []byte(userHooks)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tg.CodexConfig(), []byte(userConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	system := filepath.Join(tg.CodexSkills(), ".system", "imagegen", "SKILL.md")
	legacy := filepath.Join(tg.CodexHome, "prompts", "taskie-new-plan.md")
	mine := filepath.Join(tg.CodexHome, "prompts", "mine.md")
	for _, f := range []string{system, legacy, mine} {
		if err := writeFile(f, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Codex(tg, assets, CodexOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := readJSON(t, hooks)["hooks"].(map[string]any)["Stop"].([]any)
	if len(stop) != 2 {
		t.Fatalf("Stop hooks = %v, want the user's and taskie's", stop)
	}
	data, _ := os.ReadFile(tg.CodexConfig())
	if !strings.HasPrefix(string(data), userConfig) {
		t.Errorf("config.toml: the user's part changed:\n%s", data)
	}
	if st, _ := os.Stat(tg.CodexConfig()); st.Mode().Perm() != 0o600 {
		t.Errorf("config.toml mode %v, want 0600 kept", st.Mode().Perm())
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("old taskie prompt not removed: %v", err)
	}
	if _, err := UninstallCodex(tg, assets); err != nil {
		t.Fatal(err)
	}
	var want, got any
	_ = json.Unmarshal([]byte(userHooks), &want)
	got = readJSON(t, hooks)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hooks.json after uninstall (-want +got):\n%s", diff)
	}
	if data, _ := os.ReadFile(tg.CodexConfig()); string(data) != userConfig {
		t.Errorf("config.toml after uninstall:\n%s", data)
	}
	for _, f := range []string{system, mine} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the user's file is gone: %v", err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(tg.CodexSkills(), "taskie-*")); len(m) != 0 {
		t.Errorf("skills left: %v", m)
	}
}

// A user's hook listed after taskie's moves up when taskie's entry goes:
// its trust entry follows it.
func TestCodexUninstallMovesTheUsersTrust(t *testing.T) {
	tg := codexTarget(t)
	if _, err := Codex(tg, assets, CodexOptions{}); err != nil {
		t.Fatal(err)
	}
	hooks, _ := tg.CodexHooks()
	if _, err := editJSON("", hooks, func(o *object) error {
		return editHookList(o, "Stop", func(es []json.RawMessage) []json.RawMessage {
			return append(es, json.RawMessage(`{"hooks":[{"type":"command","command":"mine"}]}`))
		})
	}); err != nil {
		t.Fatal(err)
	}
	old := CodexHookKey(hooks, "Stop", 1, 0)
	data, _ := os.ReadFile(tg.CodexConfig())
	cfg := string(data) + "\n[hooks.state." + domain.QuoteTOML(old) + "]\ntrusted_hash = \"sha256:mine\"\n"
	if err := os.WriteFile(tg.CodexConfig(), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := UninstallCodex(tg, assets); err != nil {
		t.Fatal(err)
	}
	got, err2 := ReadCodexConfig(tg.CodexConfig())
	if err2 != nil {
		t.Fatal(err2)
	}
	want := map[string]HookState{CodexHookKey(hooks, "Stop", 0, 0): {TrustedHash: "sha256:mine"}}
	if diff := cmp.Diff(want, got.States); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

func TestCodexNoTrust(t *testing.T) {
	tg := codexTarget(t)
	if _, err := Codex(tg, assets, CodexOptions{NoTrust: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tg.CodexConfig()); !os.IsNotExist(err) {
		t.Errorf("--no-trust wrote config.toml: %v", err)
	}
	lines, err := CodexTrustLines(tg, assets)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lines, `:stop:0:0"]`+"\ntrusted_hash = \"sha256:c549cd") {
		t.Errorf("trust lines:\n%s", lines)
	}
}

func TestCodexProjectScope(t *testing.T) {
	tg := codexTarget(t)
	real := tg.Root
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	tg.Scope, tg.Root = ScopeProject, link
	if _, err := Codex(tg, assets, CodexOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadCodexConfig(tg.CodexConfig())
	if err != nil {
		t.Fatal(err)
	}
	realRoot, _ := filepath.EvalSymlinks(real)
	for _, root := range []string{link, realRoot} {
		if cfg.States[filepath.Join(root, ".codex", "hooks.json")+":stop:0:0"].TrustedHash == "" {
			t.Errorf("no trust for the hook as seen from %s: %v", root, cfg.States)
		}
	}
	if _, err := UninstallCodex(tg, assets); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(real, ".codex")); !os.IsNotExist(err) {
		t.Errorf(".codex left in the project: %v", err)
	}
}
