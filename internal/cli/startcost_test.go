package cli

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
)

// countingFS counts the files and directories opened in the embedded docs.
type countingFS struct {
	fs.FS
	opened *int
}

func (c countingFS) Open(name string) (fs.File, error) {
	*c.opened++
	return c.FS.Open(name)
}

// TestHelpTopicsReadOnlyForHelp: the built-in documents are read when help
// is shown, never by a command that only runs (every claim, every hook
// paid for reading all of them to list the topics in a help text it never
// printed).
func TestHelpTopicsReadOnlyForHelp(t *testing.T) {
	saved := docs
	t.Cleanup(func() { docs = saved })
	for _, tc := range []struct {
		name  string
		args  []string
		reads bool   // the documents are read
		out   string // stdout contains
	}{
		{"a command", []string{"version", "--json"}, false, `"version"`},
		{"a hook", []string{"hook", "stop"}, false, ""},
		{"a command's help", []string{"version", "--help"}, false, "taskie version"},
		{"root help lists the topics", []string{"--help"}, true, "Help topics (taskie help <topic>): "},
		{"help lists the topics", []string{"help"}, true, "Help topics (taskie help <topic>): "},
		{"help's help lists topics and aliases", []string{"help", "--help"}, true, "Topics: "},
		{"a topic", []string{"help", "config"}, true, "# Configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opened := 0
			docs = countingFS{saved, &opened}
			var out, errb bytes.Buffer
			code := Run(tc.args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code != ExitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
			}
			if (opened > 0) != tc.reads {
				t.Errorf("opened %d embedded files; want reads=%v", opened, tc.reads)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.out)
			}
		})
	}
}

// TestOneCommandCompletesNothing: a process that runs one command builds
// no completion (cobra's completion command, the value completers of every
// argument and flag): only a completion request, which builds every
// command, uses them.
func TestOneCommandCompletesNothing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		complete bool
	}{
		{"a command", []string{"status", "--help"}, false},
		{"a completion request", []string{"__complete", "status", ""}, true},
		{"the completion script", []string{"completion", "bash"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			s := Streams{In: strings.NewReader(""), Out: &out, Err: &errb}
			root := newRootCmdFor(&s, tc.args)
			root.SetArgs(tc.args)
			root.SetOut(&out)
			root.SetErr(&errb)
			if _, err := root.ExecuteC(); err != nil {
				t.Fatalf("%v\nstderr: %s", err, errb.String())
			}
			completion, _, err := root.Find([]string{"completion"})
			hasCompletion := err == nil && completion != root
			status, _, _ := root.Find([]string{"status"})
			hasFuncs := status != nil && status != root && status.ValidArgsFunction != nil
			if hasCompletion != tc.complete || hasFuncs != tc.complete {
				t.Errorf("completion command %v, status completes its arguments %v; want %v", hasCompletion, hasFuncs, tc.complete)
			}
		})
	}
}
