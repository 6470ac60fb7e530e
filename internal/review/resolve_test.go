package review

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name       string
		configured string
		rotation   []domain.Model
		index      int
		want       Pick
	}{
		{name: "bare model, default reviewer", rotation: []domain.Model{"opus", "sonnet"}, index: 0, want: Pick{Reviewer: "claude", Model: "opus"}},
		{name: "bare model, second", configured: "claude", rotation: []domain.Model{"opus", "sonnet"}, index: 1, want: Pick{Reviewer: "claude", Model: "sonnet"}},
		{name: "index wraps", configured: "claude", rotation: []domain.Model{"opus", "sonnet"}, index: 2, want: Pick{Reviewer: "claude", Model: "opus"}},
		{name: "negative index", configured: "claude", rotation: []domain.Model{"opus", "sonnet"}, index: -3, want: Pick{Reviewer: "claude", Model: "opus"}},
		{name: "claude entry", configured: "codex", rotation: []domain.Model{"claude:opus"}, want: Pick{Reviewer: "claude", Model: "opus"}},
		{name: "codex entry", configured: "claude", rotation: []domain.Model{"claude:opus", "codex:gpt-5.5"}, index: 1, want: Pick{Reviewer: "codex", Model: "gpt-5.5"}},
		{name: "codex with real bare model", configured: "codex", rotation: []domain.Model{"gpt-5.5"}, want: Pick{Reviewer: "codex", Model: "gpt-5.5"}},
		{name: "codex with alias, even", configured: "codex", rotation: []domain.Model{"opus", "sonnet"}, index: 0, want: Pick{Reviewer: "codex", Effort: "high"}},
		{name: "codex with alias, odd", configured: "codex", rotation: []domain.Model{"opus", "sonnet"}, index: 1, want: Pick{Reviewer: "codex", Effort: "medium"}},
		{name: "codex with alias, even again", configured: "codex", rotation: []domain.Model{"opus", "sonnet"}, index: 4, want: Pick{Reviewer: "codex", Effort: "high"}},
		{name: "codex with full claude name", configured: "claude", rotation: []domain.Model{"codex:claude-opus-4-1"}, index: 3, want: Pick{Reviewer: "codex", Effort: "medium"}},
		{name: "codex with haiku", configured: "claude", rotation: []domain.Model{"codex:haiku"}, want: Pick{Reviewer: "codex", Effort: "high"}},
		{name: "codex, empty model", configured: "claude", rotation: []domain.Model{"codex:"}, index: 1, want: Pick{Reviewer: "codex", Effort: "medium"}},
		{name: "bare reviewer name", configured: "claude", rotation: []domain.Model{"claude:opus", "codex"}, index: 1, want: Pick{Reviewer: "codex", Effort: "medium"}},
		{name: "bare claude", configured: "codex", rotation: []domain.Model{"claude"}, want: Pick{Reviewer: "claude"}},
		{name: "empty rotation, claude", configured: "claude", want: Pick{Reviewer: "claude"}},
		{name: "empty rotation, codex", configured: "codex", index: 1, want: Pick{Reviewer: "codex", Effort: "medium"}},
		{name: "model with a colon", configured: "codex", rotation: []domain.Model{"gpt-oss:20b"}, want: Pick{Reviewer: "codex", Model: "gpt-oss:20b"}},
		{name: "reviewer and model with a colon", configured: "claude", rotation: []domain.Model{"codex:gpt-oss:20b"}, want: Pick{Reviewer: "codex", Model: "gpt-oss:20b"}},
		{name: "spaces and case", configured: "claude", rotation: []domain.Model{"  Codex: gpt-5.5 "}, want: Pick{Reviewer: "codex", Model: "gpt-5.5"}},
		{name: "command entry", configured: "codex", rotation: []domain.Model{"opus", " CMD:my-reviewer --strict "}, index: 1, want: Pick{Reviewer: "codex", Command: []string{"my-reviewer", "--strict"}}},
		{name: "claude entry keeps a non-claude model", configured: "codex", rotation: []domain.Model{"claude:claude-sonnet-4-5"}, want: Pick{Reviewer: "claude", Model: "claude-sonnet-4-5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve(tc.configured, tc.rotation, tc.index)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve(%q, %q, %d) mismatch (-want +got):\n%s", tc.configured, tc.rotation, tc.index, diff)
			}
		})
	}
}

func TestPickProgram(t *testing.T) {
	custom := []string{"my-claude", "--x"}
	tests := []struct {
		name       string
		pick       Pick
		configured string
		want       []string
	}{
		{"cmd entry wins", Pick{Reviewer: "claude", Command: []string{"r"}}, "claude", []string{"r"}},
		{"reviewer_command for its reviewer", Pick{Reviewer: "claude"}, "", custom},
		{"reviewer_command not for another adapter", Pick{Reviewer: "codex"}, "claude", nil},
	}
	for _, tc := range tests {
		if got := tc.pick.Program(tc.configured, custom); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: Program = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestIsClaudeModel(t *testing.T) {
	for model, want := range map[domain.Model]bool{
		"opus": true, "sonnet": true, "haiku": true, "opusplan": true, "Opus": true, "sonnet[1m]": true,
		"claude-opus-4-1": true, "claude-sonnet-4-5-20250929": true,
		"gpt-5.5": false, "gpt-5-codex": false, "o3": false, "": false, "gpt-oss:20b": false, "claude": false,
	} {
		if got := IsClaudeModel(model); got != want {
			t.Errorf("IsClaudeModel(%q) = %v, want %v", model, got, want)
		}
	}
}

func TestCodexArgs(t *testing.T) {
	tail := []string{"--output-schema", "S", "-o", "O", "-"}
	head := []string{"codex", "exec", "--skip-git-repo-check", "--ephemeral", "--disable", "hooks", "--sandbox", "read-only", "--ignore-rules",
		"-c", codexUntrusted("/r/p"), "-c", "project_doc_max_bytes=0"}
	tests := []struct {
		name    string
		req     Request
		between []string // between head and tail
	}{
		{name: "no model", req: Request{}},
		{name: "model", req: Request{Model: "gpt-5.5"}, between: []string{"-m", "gpt-5.5"}},
		{name: "claude alias dropped", req: Request{Model: "opus"}},
		{name: "claude name dropped", req: Request{Model: "claude-sonnet-4-5"}},
		{name: "effort", req: Request{Effort: "high"}, between: []string{"-c", `model_reasoning_effort="high"`}},
		{name: "alias and effort", req: Request{Model: "sonnet", Effort: "medium"}, between: []string{"-c", `model_reasoning_effort="medium"`}},
		{name: "model and effort", req: Request{Model: "gpt-5.5", Effort: "low"}, between: []string{"-m", "gpt-5.5", "-c", `model_reasoning_effort="low"`}},
		{name: "command override", req: Request{Command: []string{"/opt/codex", "--profile", "p"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Root = "/r/p"
			want := append(append(append([]string{}, head...), tc.between...), tail...)
			if tc.req.Command != nil {
				want = append(append([]string{}, tc.req.Command...), want[1:]...)
			}
			if diff := cmp.Diff(want, codexArgs(tc.req, "S", "O")); diff != "" {
				t.Errorf("codexArgs mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCodexUntrusted: the -c value that keeps codex from loading a
// repository's .codex/ names the folder, every folder above it and their
// symlink-resolved forms, each as a TOML string.
func TestCodexUntrusted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix paths")
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	var linkDirs, realDirs []string
	for p := link; ; p = filepath.Dir(p) {
		linkDirs = append(linkDirs, p)
		if p == "/" {
			break
		}
	}
	for p := real; !slices.Contains(linkDirs, p); p = filepath.Dir(p) {
		realDirs = append(realDirs, p)
	}
	entries := func(dirs ...string) string {
		var parts []string
		for _, d := range dirs {
			parts = append(parts, domain.QuoteTOML(d)+`={trust_level="untrusted"}`)
		}
		return "projects={" + strings.Join(parts, ",") + "}"
	}
	tests := []struct{ name, root, want string }{
		{name: "plain", root: "/r/p", want: `projects={"/r/p"={trust_level="untrusted"},"/r"={trust_level="untrusted"},"/"={trust_level="untrusted"}}`},
		{name: "cleaned", root: "/r//p/", want: `projects={"/r/p"={trust_level="untrusted"},"/r"={trust_level="untrusted"},"/"={trust_level="untrusted"}}`},
		{name: "quote, backslash, control", root: "/a\"b\\c\td", want: `projects={"/a\"b\\c\u0009d"={trust_level="untrusted"},"/"={trust_level="untrusted"}}`},
		{name: "non-ASCII kept", root: "/café", want: `projects={"/café"={trust_level="untrusted"},"/"={trust_level="untrusted"}}`},
		{name: "symlink: both forms", root: link, want: entries(append(linkDirs, realDirs...)...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, codexUntrusted(tc.root)); diff != "" {
				t.Errorf("codexUntrusted(%q) mismatch (-want +got):\n%s", tc.root, diff)
			}
		})
	}
}

func TestCodexRejectsNonUTF8Root(t *testing.T) {
	f := newFixture(t, "PASS")
	req := f.request(1)
	req.Root = "/tmp/bad\xff"
	res, err := mustNew(t, "codex").Review(context.Background(), req)
	wantFailure(t, res, err, FailExit, "not valid UTF-8")
	if _, statErr := os.Stat(f.log); statErr == nil {
		t.Error("codex ran with a project path it cannot name to codex")
	}
}

// TestCodexInvocation runs codex picks through the fake, which rejects
// options the real `codex exec` does not know, and checks what it saw.
func TestCodexInvocation(t *testing.T) {
	tests := []struct {
		name       string
		model      domain.Model
		effort     string
		wantModel  string
		wantEffort string
	}{
		{name: "default model, high", model: "opus", effort: "high", wantEffort: "high"},
		{name: "default model, medium", model: "", effort: "medium", wantEffort: "medium"},
		{name: "real model", model: "gpt-5.5", wantModel: "gpt-5.5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "PASS-NOFILE")
			req := f.request(1)
			req.Model, req.Effort = tc.model, tc.effort
			res, err := mustNew(t, "codex").Review(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Model != tc.model {
				t.Errorf("Result.Model = %q, want the requested %q", res.Model, tc.model)
			}
			l := f.logs(t)[0]
			if l.Model != tc.wantModel || l.Effort != tc.wantEffort {
				t.Errorf("codex saw model %q effort %q, want %q %q (args %q)", l.Model, l.Effort, tc.wantModel, tc.wantEffort, l.Args)
			}
		})
	}
}

func TestCodexRejectsBadEffort(t *testing.T) {
	f := newFixture(t, "PASS")
	req := f.request(1)
	req.Effort = `high" -c sandbox_mode="danger-full-access`
	res, err := mustNew(t, "codex").Review(context.Background(), req)
	wantFailure(t, res, err, FailExit, "invalid reasoning effort")
	if _, statErr := os.Stat(f.log); statErr == nil {
		t.Error("codex ran with an invalid effort")
	}
}

// TestFakeCodexRejectsUnknownOption shows the fake codex checks argv the
// way the real one does, so TestCodexInvocation means something.
func TestFakeCodexRejectsUnknownOption(t *testing.T) {
	newFixture(t, "PASS")
	cmd := exec.Command(filepath.Join(fakeDir, "codex"+exeSuffix()), "exec", "--skip-git-repo-check", "--no-such-option", "-")
	cmd.Env = reviewerEnv(os.Environ())
	cmd.Stdin = strings.NewReader("prompt")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "unexpected argument '--no-such-option' found") {
		t.Errorf("fake codex with an unknown option: err %v, output %q; want exit 2 and the parser's error", err, out)
	}
}

func TestCommandFor(t *testing.T) {
	mine := []string{"my-claude", "--fast"}
	tests := []struct {
		name, configured, adapter string
		command                   []string
		want                      []string
	}{
		{"the configured reviewer runs the command", "claude", "claude", mine, mine},
		{"claude is the default reviewer", "", "claude", mine, mine},
		{"another adapter runs its own CLI", "claude", "codex", mine, nil},
		{"a codex command is not run for claude", "codex", "claude", []string{"my-codex"}, nil},
		{"a codex command for codex", "codex", "codex", []string{"my-codex"}, []string{"my-codex"}},
		{"no command", "claude", "claude", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CommandFor(tc.configured, tc.adapter, tc.command)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdapters(t *testing.T) {
	tests := []struct {
		name       string
		configured string
		rotation   []domain.Model
		want       []string
	}{
		{"default", "", nil, []string{"claude"}},
		{"codex, Claude aliases", "codex", []domain.Model{"opus", "sonnet"}, []string{"codex"}},
		{"mixed, strongest first", "claude", []domain.Model{"claude:opus", "codex:gpt-5.5", "sonnet"}, []string{"claude", "codex"}},
		{"codex only through entries", "claude", []domain.Model{"codex:gpt-5.5", "codex"}, []string{"codex"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Adapters(tc.configured, tc.rotation)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
