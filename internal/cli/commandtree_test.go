package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCommandsFor checks which commands a process builds for its
// arguments: the one it runs, none for --version, every one when the
// arguments name none (help, completion, a typo to correct).
func TestCommandsFor(t *testing.T) {
	all := make([]string, len(commands))
	for i, c := range commands {
		all[i] = c.name
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a command", []string{"status", "--json"}, []string{"status"}},
		{"a subcommand", []string{"hook", "stop"}, []string{"hook"}},
		{"after -C and its value", []string{"-C", "status", "ready"}, []string{"ready"}},
		{"after --plan and its value", []string{"--plan", "claim", "status"}, []string{"status"}},
		{"after --dir=value", []string{"--dir=x", "log"}, []string{"log"}},
		{"version flag", []string{"--version"}, nil},
		{"version shorthand", []string{"-v"}, nil},
		{"version command", []string{"version", "--json"}, []string{"version"}},
		{"no arguments", nil, all},
		{"help flag", []string{"--help"}, all},
		{"help command", []string{"help", "status"}, all},
		{"completion", []string{"__complete", "st"}, all},
		{"a typo", []string{"stauts"}, all},
		{"after --", []string{"--", "status"}, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range commandsFor(tc.args) {
				got = append(got, c.name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("commandsFor(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestCommandsNamed checks that every command is registered under the name
// it answers to (a wrong name would send that command to the full tree,
// or another command's arguments to it), once.
func TestCommandsNamed(t *testing.T) {
	s := Streams{}
	g := &globals{s: &s}
	seen := map[string]bool{}
	for _, c := range commands {
		cmd := c.build(&s, g)
		if cmd.Name() != c.name {
			t.Errorf("command registered as %q is named %q", c.name, cmd.Name())
		}
		if len(cmd.Aliases) > 0 {
			t.Errorf("command %q has aliases %q: commandsFor does not know them", c.name, cmd.Aliases)
		}
		if seen[c.name] {
			t.Errorf("command %q registered twice", c.name)
		}
		seen[c.name] = true
	}
}

// TestRunBuildsOneCommand runs commands through Run with a partial tree:
// --version, a command's help and a typo still say what they said.
func TestRunBuildsOneCommand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"version", []string{"--version"}, ExitOK, "taskie ", ""},
		{"help of a command", []string{"status", "--help"}, ExitOK, "taskie status", ""},
		{"typo", []string{"stauts"}, ExitUsage, "", "did you mean `taskie status`?"},
		{"root help lists commands", []string{"--help"}, ExitOK, "worktree ", ""},
		{"-v", []string{"-v"}, ExitOK, "taskie ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(tc.args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Errorf("stdout %q, stderr %q; want them to contain %q and %q", out.String(), errb.String(), tc.out, tc.err)
			}
		})
	}
}
