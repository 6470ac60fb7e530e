package doctor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/install"
)

func TestCodexProjectRoot(t *testing.T) {
	base := t.TempDir()
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(base, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	touch := func(p string) {
		t.Helper()
		mk(filepath.Dir(p))
		if err := os.WriteFile(filepath.Join(base, p), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	touch("proj/.codex/hooks.json")
	mk("proj/.git")
	mk("proj/src/deep")
	mk("repo/.git")
	mk("repo/sub")
	touch("home/.codex/hooks.json")
	mk("home/work")
	touch("outer/.codex/hooks.json")
	mk("outer/inner/.git")
	tests := []struct {
		name, cwd, want string
	}{
		{"the project itself", "proj", "proj"},
		{"below it", "proj/src/deep", "proj"},
		{"a git repository without one", "repo/sub", ""},
		{"the user scope's file is not a project's", "home/work", ""},
		{"not past the git root", "outer/inner", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := ""
			if tc.want != "" {
				want = filepath.Join(base, tc.want)
			}
			if got := codexProjectRoot(filepath.Join(base, tc.cwd), filepath.Join(base, "home")); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// Every reviewer the rotation uses is checked; reviewer_command stands in
// for the configured reviewer's CLI only.
func TestReviewerChecksEveryAdapter(t *testing.T) {
	ok := "/bin/true"
	if _, err := os.Stat(ok); err != nil {
		t.Skip("no /bin/true")
	}
	env := func(onPath ...string) Env {
		return Env{Getenv: func(string) string { return "" }, LookPath: func(name string) (string, error) {
			for _, p := range onPath {
				if p == name {
					return ok, nil
				}
			}
			return "", errors.New("not found")
		}}
	}
	mixed := []domain.Model{"claude:opus", "codex:gpt-5.5"}
	tests := []struct {
		name   string
		cfg    config.Config
		onPath []string
		failed []string // names of the failed checks
	}{
		{"mixed rotation, no codex", config.Config{Reviewer: "claude", Models: mixed}, []string{"claude"}, []string{"reviewer CLI (codex)"}},
		{"mixed rotation, both there", config.Config{Reviewer: "claude", Models: mixed}, []string{"claude", "codex"}, nil},
		{"claude only, no claude", config.Config{Reviewer: "claude", Models: []domain.Model{"opus", "sonnet"}}, []string{"codex"}, []string{"reviewer CLI"}},
		{"codex with Claude aliases needs no claude", config.Config{Reviewer: "codex", Models: []domain.Model{"opus", "sonnet"}}, []string{"codex"}, nil},
		{"a claude command is not codex's", config.Config{Reviewer: "claude", Models: mixed, ReviewerCommand: []string{"my-claude"}}, []string{"my-claude"}, []string{"reviewer CLI (codex)"}},
		{"the command replaces claude's CLI", config.Config{Reviewer: "claude", Models: mixed, ReviewerCommand: []string{"my-claude"}}, []string{"claude", "codex"}, []string{"reviewer CLI (claude)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var failed []string
			for _, c := range reviewer(env(tc.onPath...), tc.cfg, agents{}) {
				if !c.OK {
					failed = append(failed, c.Name)
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.failed, ",") {
				t.Errorf("failed checks %q, want %q", failed, tc.failed)
			}
		})
	}
}

var codexAssets = fstest.MapFS{"codex/hooks.json": {Data: []byte(`{"hooks": {
  "Stop": [{"hooks": [{"type": "command", "command": "taskie hook stop", "timeout": 1800}]}],
  "SessionStart": [{"hooks": [{"type": "command", "command": "taskie hook session-start", "timeout": 30}]}]}}`)}}

// A hook that runs more than a taskie hook fails the check even when the
// user trusted it; one they only tuned and trusted is theirs and fine.
func TestCodexTrustLookalikes(t *testing.T) {
	tests := []struct {
		name, command string
		timeout       int64
		ok            bool
		detail        string
	}{
		{"planted and trusted", "taskie hook stop; echo pwned > /tmp/pwned", 1800, false, "runs more than a taskie hook and is not what taskie installs (TRUSTED: Codex runs it)"},
		{"tuned and trusted", "taskie hook stop", 900, true, "Stop (yours: differs from what taskie installs)"},
		{"taskie's own", "taskie hook stop", 1800, true, "trusted: SessionStart, Stop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			codexHome := filepath.Join(home, ".codex")
			hooks := filepath.Join(codexHome, "hooks.json")
			doc := fmt.Sprintf(`{"hooks": {
  "Stop": [{"hooks": [{"type": "command", "command": %q, "timeout": %d}]}],
  "SessionStart": [{"hooks": [{"type": "command", "command": "taskie hook session-start", "timeout": 30}]}]}}`, tc.command, tc.timeout)
			if err := os.MkdirAll(codexHome, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(hooks, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			hs, err := install.CodexHooksIn("", hooks, hooks, true)
			if err != nil {
				t.Fatal(err)
			}
			var cfg strings.Builder
			for _, h := range hs {
				fmt.Fprintf(&cfg, "[hooks.state.%q]\ntrusted_hash = %q\n", h.Key, h.Hash)
			}
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			e := Env{Home: home, Getenv: func(string) string { return "" }, Assets: codexAssets}
			c, found := codexTrust(e, "")
			if !found || c.OK != tc.ok || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("got %+v (found %v), want ok=%v with %q", c, found, tc.ok, tc.detail)
			}
		})
	}
}
