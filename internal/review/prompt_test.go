package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
)

func TestPrompt(t *testing.T) {
	root := t.TempDir()
	planDir := filepath.Join(root, ".taskie", "plans", "p1")
	if err := os.MkdirAll(planDir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := Request{
		PlanID: "p1", Iteration: 2, Model: "model-x", Root: root, PlanDir: planDir,
		TaskFiles: []string{"task-1.md", "task-7.md"},
	}
	tests := []struct {
		kind    domain.Phase
		task    domain.TaskID
		file    string
		want    []string
		notWant []string
	}{
		{kind: domain.PlanReview, file: "plan-review-2.md", want: []string{"plan.md", "Feasibility"}, notWant: []string{"task-1.md"}},
		{kind: domain.TasksReview, file: "tasks-review-2.md", want: []string{"tasks.md", filepath.Join(planDir, "task-1.md"), filepath.Join(planDir, "task-7.md"), "Acceptance criteria"}},
		{kind: domain.CodeReview, task: 3, file: "task-3-review-2.md", want: []string{filepath.Join(planDir, "task-3.md"), "git diff", "git log"}, notWant: []string{"task-7.md"}},
		{kind: domain.AllCodeReview, file: "all-code-review-2.md", want: []string{filepath.Join(planDir, "task-1.md"), filepath.Join(planDir, "task-7.md"), "TODO"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			req := base
			req.Kind, req.Task = tc.kind, tc.task
			req.ReviewFile = filepath.Join(planDir, tc.file)
			p, err := Prompt(req)
			if err != nil {
				t.Fatal(err)
			}
			common := []string{"`" + req.ReviewFile + "`", "independent", "very critical", "iteration 2", "model-x",
				"Do not modify", `"PASS"`, "`review`", "Summary", "Findings"}
			for _, w := range append(common, tc.want...) {
				if !strings.Contains(p, w) {
					t.Errorf("prompt lacks %q", w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(p, w) {
					t.Errorf("prompt unexpectedly contains %q", w)
				}
			}
			if strings.Contains(p, "design.md") {
				t.Error("prompt names design.md, which does not exist")
			}
			if strings.Contains(p, "<no value>") {
				t.Error("prompt has an unfilled template field")
			}
		})
	}
}

func TestPromptDesign(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "design.md"), []byte("d"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Prompt(Request{Kind: domain.PlanReview, PlanDir: dir, ReviewFile: filepath.Join(dir, "plan-review-1.md")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p, filepath.Join(dir, "design.md")) {
		t.Error("prompt does not name the existing design.md")
	}
}

func TestPromptErrors(t *testing.T) {
	for name, req := range map[string]Request{
		"unknown kind":      {Kind: "nope", PlanDir: "/p", ReviewFile: "/p/r-review-1.md"},
		"code without task": {Kind: domain.CodeReview, PlanDir: "/p", ReviewFile: "/p/r-review-1.md"},
		"no review file":    {Kind: domain.PlanReview, PlanDir: "/p"},
	} {
		if _, err := Prompt(req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestNew(t *testing.T) {
	for _, name := range []string{"", "claude", "codex"} {
		if r, err := New(name); err != nil || r == nil {
			t.Errorf("New(%q) = %v, %v", name, r, err)
		}
	}
	_, err := New("gpt")
	if err == nil || !strings.Contains(err.Error(), "claude, codex") {
		t.Errorf("New(gpt) error = %v, want one listing the valid names", err)
	}
}

func TestReviewerEnv(t *testing.T) {
	got := reviewerEnv([]string{"PATH=/bin", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "TASKIE_HOOK_SKIP=0", "HOME=/h"})
	want := []string{"PATH=/bin", "HOME=/h", "TASKIE_HOOK_SKIP=1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("reviewerEnv = %q, want %q", got, want)
	}
}

// The findings on record of the cycle go to the reviewer, with the
// instruction to re-check each by id; without them the prompt asks for new
// findings only. Every prompt asks for the findings field.
func TestPromptFindings(t *testing.T) {
	dir := t.TempDir()
	req := Request{Kind: domain.CodeReview, Task: 2, PlanDir: dir, ReviewFile: filepath.Join(dir, "task-2-review-3.md")}
	p, err := Prompt(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"`findings`", "`blocker`", "An empty list when there are no findings."} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt without findings lacks %q", w)
		}
	}
	if strings.Contains(p, "on record") {
		t.Error("prompt without findings mentions findings on record")
	}
	req.Findings = "## Findings on record\n\nRe-check each one.\n\nOpen:\n- F3 (major) a.go:12 — error ignored\n"
	p, err = Prompt(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Findings on record", "- F3 (major) a.go:12 — error ignored", "Report every finding on record,\n  fixed or open.",
		"the finding's id for one on record"} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt with findings lacks %q", w)
		}
	}
	if strings.Index(p, "## Findings on record") > strings.Index(p, "## Review file") {
		t.Error("findings on record come after the review file instructions")
	}
}
