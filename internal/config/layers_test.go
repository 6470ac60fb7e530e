package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/trust"
)

// trustFile records path's current content in the test's trust store.
func trustFile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrustPinned(path, data, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestUserPath(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, tc := range []struct{ xdg, want string }{
		{"/xdg", "/xdg/taskie/config.json"},
		{"", "/home/u/.config/taskie/config.json"},
		{"relative/dir", "/home/u/.config/taskie/config.json"}, // the XDG spec says to ignore it
	} {
		t.Setenv("XDG_CONFIG_HOME", tc.xdg)
		if got := UserPath(); got != tc.want {
			t.Errorf("XDG_CONFIG_HOME=%q: UserPath = %q, want %q", tc.xdg, got, tc.want)
		}
	}
}

func TestLayers(t *testing.T) {
	type effective struct {
		Reviewer        string
		ReviewerCommand []string
		Models          []domain.Model
		OutputFormat    string
		Untrusted       []string
		Source          map[string]string // only the keys listed
	}
	tests := []struct {
		name       string
		user, repo string // "" = no file
		trustRepo  bool   // trust the repository file before loading
		changeRepo string // then replace its content with this
		want       effective
	}{
		{
			name: "defaults",
			want: effective{Reviewer: "claude", Models: []domain.Model{"opus", "sonnet"}, OutputFormat: "exit2",
				Source: map[string]string{"reviewer": "default", "models": "default"}},
		},
		{
			name: "user file over the defaults",
			user: `{"reviewer": "codex", "output_format": "json"}`,
			want: effective{Reviewer: "codex", Models: []domain.Model{"opus", "sonnet"}, OutputFormat: "json",
				Source: map[string]string{"reviewer": "user", "output_format": "user", "models": "default"}},
		},
		{
			name: "repository file over the user file",
			user: `{"reviewer": "codex", "models": ["gpt-a"], "output_format": "json"}`,
			repo: `{"models": ["claude:opus", "codex:gpt-5.5", "sonnet"]}`,
			want: effective{Reviewer: "codex", Models: []domain.Model{"claude:opus", "codex:gpt-5.5", "sonnet"}, OutputFormat: "json",
				Source: map[string]string{"reviewer": "user", "models": "repo", "output_format": "user"}},
		},
		{
			name: "reviewer_command in the user file needs no trust",
			user: `{"reviewer_command": ["my-reviewer", "--strict"], "models": ["cmd:other-reviewer -q", "opus"]}`,
			want: effective{Reviewer: "claude", ReviewerCommand: []string{"my-reviewer", "--strict"},
				Models: []domain.Model{"cmd:other-reviewer -q", "opus"}, OutputFormat: "exit2",
				Source: map[string]string{"reviewer_command": "user", "models": "user"}},
		},
		{
			name: "untrusted reviewer_command is ignored and reported",
			repo: `{"reviewer_command": ["./evil.sh"], "output_format": "json"}`,
			want: effective{Reviewer: "claude", Models: []domain.Model{"opus", "sonnet"}, OutputFormat: "json",
				Untrusted: []string{"reviewer_command"},
				Source:    map[string]string{"reviewer_command": "default", "output_format": "repo"}},
		},
		{
			name:      "trusted reviewer_command is honoured",
			repo:      `{"reviewer_command": ["./reviewer.sh"]}`,
			trustRepo: true,
			want: effective{Reviewer: "claude", ReviewerCommand: []string{"./reviewer.sh"}, Models: []domain.Model{"opus", "sonnet"},
				OutputFormat: "exit2", Source: map[string]string{"reviewer_command": "repo"}},
		},
		{
			name:       "a change after trust revokes it",
			repo:       `{"reviewer_command": ["./reviewer.sh"]}`,
			trustRepo:  true,
			changeRepo: `{"reviewer_command": ["./reviewer.sh", "--and-more"]}`,
			want: effective{Reviewer: "claude", Models: []domain.Model{"opus", "sonnet"}, OutputFormat: "exit2",
				Untrusted: []string{"reviewer_command"}, Source: map[string]string{"reviewer_command": "default"}},
		},
		{
			name:       "a whitespace change revokes it too",
			repo:       `{"reviewer_command": ["./reviewer.sh"]}`,
			trustRepo:  true,
			changeRepo: `{"reviewer_command": ["./reviewer.sh"]} `,
			want: effective{Reviewer: "claude", Models: []domain.Model{"opus", "sonnet"}, OutputFormat: "exit2",
				Untrusted: []string{"reviewer_command"}, Source: map[string]string{"reviewer_command": "default"}},
		},
		{
			name: "untrusted repository keeps the user's command",
			user: `{"reviewer_command": ["mine"]}`,
			repo: `{"reviewer_command": ["theirs"]}`,
			want: effective{Reviewer: "claude", ReviewerCommand: []string{"mine"}, Models: []domain.Model{"opus", "sonnet"},
				OutputFormat: "exit2", Untrusted: []string{"reviewer_command"}, Source: map[string]string{"reviewer_command": "user"}},
		},
		{
			name: "untrusted command entry: the whole rotation is ignored",
			user: `{"models": ["opus"]}`,
			repo: `{"models": ["sonnet", "cmd:./review --fast"]}`,
			want: effective{Reviewer: "claude", Models: []domain.Model{"opus"}, OutputFormat: "exit2",
				Untrusted: []string{"models"}, Source: map[string]string{"models": "user"}},
		},
		{
			name:      "trusted command entry",
			repo:      `{"models": ["sonnet", "cmd:./review --fast"]}`,
			trustRepo: true,
			want: effective{Reviewer: "claude", Models: []domain.Model{"sonnet", "cmd:./review --fast"}, OutputFormat: "exit2",
				Source: map[string]string{"models": "repo"}},
		},
		{
			name: "both program settings untrusted",
			repo: `{"models": ["cmd:a"], "reviewer_command": ["b"], "reviewer": "codex"}`,
			want: effective{Reviewer: "codex", Models: []domain.Model{"opus", "sonnet"}, OutputFormat: "exit2",
				Untrusted: []string{"reviewer_command", "models"}, Source: map[string]string{"reviewer": "repo", "models": "default"}},
		},
		{
			name: "an empty reviewer_command runs nothing and needs no trust",
			user: `{"reviewer_command": ["mine"]}`,
			repo: `{"reviewer_command": []}`,
			want: effective{Reviewer: "claude", ReviewerCommand: []string{}, Models: []domain.Model{"opus", "sonnet"}, OutputFormat: "exit2",
				Source: map[string]string{"reviewer_command": "repo"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			configHome, _ := isolate(t)
			userFile := filepath.Join(configHome, "taskie", "config.json")
			dir := t.TempDir()
			if tc.user != "" {
				write(t, userFile, tc.user)
			}
			if tc.repo != "" {
				write(t, Path(dir), tc.repo)
			}
			if tc.trustRepo {
				trustFile(t, Path(dir))
			}
			if tc.changeRepo != "" {
				write(t, Path(dir), tc.changeRepo)
			}
			c, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]string{"default": "default", userFile: "user", Path(dir): "repo"}
			got := effective{Reviewer: c.Reviewer, ReviewerCommand: c.ReviewerCommand, Models: c.Models,
				OutputFormat: c.OutputFormat, Untrusted: c.Untrusted, Source: map[string]string{}}
			for k := range tc.want.Source {
				got.Source[k] = names[c.Source[k]]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("effective (-want +got):\n%s", diff)
			}
			if len(tc.want.Untrusted) == 0 {
				if c.UntrustedFile != "" || c.TrustMessage() != "" {
					t.Errorf("UntrustedFile = %q, TrustMessage = %q; want neither", c.UntrustedFile, c.TrustMessage())
				}
				return
			}
			if want, _ := trust.Key(Path(dir)); c.UntrustedFile != want {
				t.Errorf("UntrustedFile = %q, want %q", c.UntrustedFile, want)
			}
			if m := c.TrustMessage(); !strings.Contains(m, "`taskie trust`") || !strings.Contains(m, tc.want.Untrusted[0]) {
				t.Errorf("TrustMessage = %q", m)
			}
		})
	}
}

// TestTrustIsPerFile: trusting one repository's file says nothing about
// another's with the same content.
func TestTrustIsPerFile(t *testing.T) {
	isolate(t)
	content := `{"reviewer_command": ["./reviewer.sh"]}`
	a, b := t.TempDir(), t.TempDir()
	write(t, Path(a), content)
	write(t, Path(b), content)
	trustFile(t, Path(a))
	ca, errA := Load(a)
	cb, errB := Load(b)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if len(ca.Untrusted) != 0 || len(cb.Untrusted) != 1 {
		t.Errorf("Untrusted = %v and %v; want only the second", ca.Untrusted, cb.Untrusted)
	}
}

func TestUnreadableTrustStore(t *testing.T) {
	_, stateHome := isolate(t)
	dir := t.TempDir()
	write(t, Path(dir), `{"reviewer_command": ["x"]}`)
	write(t, filepath.Join(stateHome, "taskie", "trust.json"), "{nope")
	if err := os.Chmod(filepath.Join(stateHome, "taskie", "trust.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "malformed trust store") {
		t.Errorf("Load = %v, want the trust store's error", err)
	}
	if c.ReviewerCommand != nil || len(c.Untrusted) != 1 {
		t.Errorf("ReviewerCommand = %v, Untrusted = %v with an unreadable trust store", c.ReviewerCommand, c.Untrusted)
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct{ key, msg string }{
		{"modles", `"modles": unknown setting; did you mean "models"?`},
		{"max_review", `"max_review": unknown setting; did you mean "max_reviews"?`},
		{"Reviewer", `"Reviewer": unknown setting; did you mean "reviewer"?`},
		{"reviewer-command", `"reviewer-command": unknown setting; did you mean "reviewer_command"?`},
		{"colour", `"colour": unknown setting; settings are ` + strings.Join(allKeys, ", ")},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			dir, path := withConfig(t, `{"reviewer": "claude", "`+tc.key+`": 3}`)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("unknown key accepted")
			}
			if want := path + ": " + tc.msg; err.Error() != want {
				t.Errorf("error = %q\nwant      %q", err, want)
			}
		})
	}
}

// TestEveryProblemAtOnce: one Load reports every problem of both files,
// each line naming its file, and keeps the valid values.
func TestEveryProblemAtOnce(t *testing.T) {
	configHome, _ := isolate(t)
	userFile := filepath.Join(configHome, "taskie", "config.json")
	write(t, userFile, `{"output_format": "json", "blok_cap": 3}`)
	dir := t.TempDir()
	write(t, Path(dir), `{"modles": ["opus"], "reviewer": "claud", "group_size": 0, "output_format": "xml", "autopilot": true}`)
	c, err := Load(dir)
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		userFile + `: "blok_cap": unknown setting; did you mean "block_cap"?`,
		Path(dir) + `: group_size must be ≥ 1 (got 0)`,
		Path(dir) + `: "modles": unknown setting; did you mean "models"?`,
		Path(dir) + `: output_format must be "exit2" or "json" (got "xml")`,
		Path(dir) + `: reviewer must be "claude" or "codex" (got "claud"); did you mean "claude"?`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("error lines (-want +got):\n%s", diff)
	}
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != len(want) || ce.Problems[1].Setting != "group_size" {
		t.Errorf("error %#v is not an *Error with %d problems", err, len(want))
	}
	// A bad value keeps the value underneath; good values still apply.
	if c.OutputFormat != "json" || c.GroupSize != 5 || c.Reviewer != "claude" || !c.Autopilot {
		t.Errorf("values after errors: output_format %q, group_size %d, reviewer %q, autopilot %v", c.OutputFormat, c.GroupSize, c.Reviewer, c.Autopilot)
	}
}

// TestUntrustedIsStillChecked: an ignored setting's mistakes are reported.
func TestUntrustedIsStillChecked(t *testing.T) {
	dir, path := withConfig(t, `{"models": ["cmd:"]}`)
	c, err := Load(dir)
	if err == nil || err.Error() != path+`: models[0]: "cmd:" names no program after "cmd:"` {
		t.Errorf("Load = %v", err)
	}
	if diff := cmp.Diff([]string{"models"}, c.Untrusted); diff != "" {
		t.Errorf("Untrusted (-want +got):\n%s", diff)
	}
}

func TestLifecycleTimeoutsMerge(t *testing.T) {
	configHome, _ := isolate(t)
	write(t, filepath.Join(configHome, "taskie", "config.json"), `{"lifecycle_timeouts": {"pending": "2h"}}`)
	dir := t.TempDir()
	write(t, Path(dir), `{"lifecycle_timeouts": {"testing": "1h"}}`)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Default().LifecycleTimeouts
	want["pending"], want["testing"] = "2h", "1h"
	if diff := cmp.Diff(want, c.LifecycleTimeouts); diff != "" {
		t.Errorf("lifecycle_timeouts (-want +got):\n%s", diff)
	}
	if d := Default().LifecycleTimeouts; d["pending"] != "1h" {
		t.Errorf("Default changed: %v", d)
	}
}

func TestTrustMessage(t *testing.T) {
	tests := []struct {
		untrusted []string
		want      string
	}{
		{nil, ""},
		{[]string{"reviewer_command"}, ".taskie/config.json sets reviewer_command, which runs a program; it is ignored until you review the file and run `taskie trust`"},
		{[]string{"models"}, `.taskie/config.json sets models (with a "cmd:" entry), which runs a program; it is ignored until you review the file and run ` + "`taskie trust`"},
		{[]string{"reviewer_command", "models"}, `.taskie/config.json sets reviewer_command and models (with a "cmd:" entry), which run programs; they are ignored until you review the file and run ` + "`taskie trust`"},
	}
	for _, tc := range tests {
		if got := (Config{Untrusted: tc.untrusted}).TrustMessage(); got != tc.want {
			t.Errorf("TrustMessage(%v) =\n%q\nwant\n%q", tc.untrusted, got, tc.want)
		}
	}
}

// TestAwaitingTrust: what waits for `taskie trust`, programs then
// settings, in the one sentence every needs-you surface shows.
func TestAwaitingTrust(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"nothing", Config{}, ""},
		{"a program", Config{Untrusted: []string{"reviewer_command"}},
			".taskie/config.json sets reviewer_command, which runs a program; it is ignored until you review the file and run `taskie trust`"},
		{"settings", Config{Ignored: []string{"allowed_tools", "project"}},
			".taskie/config.json sets allowed_tools and project, which are ignored until you review the file and run `taskie trust`"},
		{"the store", Config{Ignored: []string{"store"}},
			".taskie/config.json sets store, which is ignored until you review the file and run `taskie trust`: this clone keeps its claims and events in its own files, out of the shared store"},
		{"both", Config{Untrusted: []string{"reviewer_command"}, Ignored: []string{"project"}},
			".taskie/config.json sets reviewer_command, which runs a program; it is ignored until you review the file and run `taskie trust`; .taskie/config.json sets project, which is ignored until you review the file and run `taskie trust`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.c.AwaitingTrust()); diff != "" {
				t.Errorf("AwaitingTrust (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandEntries(t *testing.T) {
	tests := []struct {
		entry string
		argv  []string
	}{
		{"opus", nil},
		{"claude:opus", nil},
		{"codex:gpt-5.5", nil},
		{"cmd:my-reviewer", []string{"my-reviewer"}},
		{"cmd: my-reviewer  --strict -x ", []string{"my-reviewer", "--strict", "-x"}},
		{"cmd:", []string{}},
		{" CMD:x -y", []string{"x", "-y"}},
		{"Cmd:x", []string{"x"}},
		{"cmdx", nil},
		{"cm", nil},
		{"my-cmd:x", nil},
	}
	for _, tc := range tests {
		if got := IsCommand(tc.entry); got != (tc.argv != nil) {
			t.Errorf("IsCommand(%q) = %v", tc.entry, got)
		}
		if diff := cmp.Diff(tc.argv, CommandArgv(tc.entry)); diff != "" {
			t.Errorf("CommandArgv(%q) (-want +got):\n%s", tc.entry, diff)
		}
	}
}

func TestPrograms(t *testing.T) {
	tests := []struct {
		content string
		want    []Program
	}{
		{`{}`, nil},
		{`{"reviewer": "codex", "models": ["opus", "codex:gpt-5.5"]}`, nil},
		{`{"reviewer_command": []}`, nil},
		{`{"reviewer_command": null}`, nil},
		{`{"reviewer_command": ["r", "-v"]}`, []Program{{"reviewer_command", []string{"r", "-v"}}}},
		{`{"reviewer_command": "r -v"}`, []Program{{Setting: "reviewer_command"}}},
		{`{"models": ["cmd:a 1", "opus", "cmd:b"], "reviewer_command": ["r"]}`, []Program{
			{"reviewer_command", []string{"r"}}, {"models", []string{"a", "1"}}, {"models", []string{"b"}}}},
	}
	for _, tc := range tests {
		got, err := Programs("config.json", []byte(tc.content))
		if err != nil {
			t.Fatalf("Programs(%s): %v", tc.content, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Programs(%s) (-want +got):\n%s", tc.content, diff)
		}
	}
	if _, err := Programs("config.json", []byte("{")); err == nil {
		t.Error("Programs accepted malformed JSON")
	}
}

func TestSuggest(t *testing.T) {
	words := []string{"claude", "codex"}
	tests := []struct{ in, want string }{
		{"claud", "claude"},
		{"cluade", "claude"},
		{"Claude", "claude"},
		{"codx", "codex"},
		{"gpt", ""},
		{"claude", ""}, // no suggestion for a correct word
		{"", ""},
		{"c", ""},
	}
	for _, tc := range tests {
		if got := suggest(tc.in, words); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
