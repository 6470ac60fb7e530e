package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const goodTasks = "| Id | Status | Title |\n|---|---|---|\n| 1 | done | a |\n| 2 | pending | b |\n"

// goodPlan is a complete, valid plan directory.
func goodPlan() map[string]string {
	return map[string]string{
		"plan.md":                 "# Plan\n",
		"design.md":               "# Design\n",
		"tasks.md":                goodTasks,
		"task-1.md":               "# Task 1\n",
		"task-2.md":               "# Task 2\n",
		"plan-review-1.md":        "x",
		"plan-post-review-1.md":   "x",
		"plan-review-2.md":        "x",
		"task-1-code-review-1.md": "legacy",
		"task-1-post-review-1.md": "current post for a legacy review",
		"task-1-review-2.md":      "x",
		"all-code-review-1.md":    "x",
		"state.json":              "{}",
		"events.jsonl":            "",
		".lock":                   "",
		".state.json.tmp12345":    "",
	}
}

// writePlan creates files (paths "/" separated) in a fresh directory; the
// content "\x00dir" makes a directory instead.
func writePlan(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if content == "\x00dir" {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// with returns the good plan changed by edits; the content del removes a
// file.
func with(edits map[string]string) map[string]string {
	files := goodPlan()
	for k, v := range edits {
		if v == "\x00del" {
			delete(files, k)
			continue
		}
		files[k] = v
	}
	return files
}

const del = "\x00del"

var ignoreMsg = cmpopts.IgnoreFields(Violation{}, "Msg")

func TestValidateRules(t *testing.T) {
	e := SeverityError
	tests := []struct {
		name  string
		files map[string]string
		state []string // what checkState reports
		want  []Violation
	}{
		{name: "good plan", files: goodPlan()},
		{name: "1 plan.md missing", files: with(map[string]string{"plan.md": del, "plan-review-1.md": del, "plan-post-review-1.md": del, "plan-review-2.md": del}),
			want: []Violation{{Rule: 1, File: "plan.md", Severity: e}}},
		{name: "2 bad name", files: with(map[string]string{"notes.md": "x"}),
			want: []Violation{{Rule: 2, File: "notes.md", Severity: e}}},
		{name: "3 nested md", files: with(map[string]string{"sub/deeper/x.md": "x"}),
			want: []Violation{{Rule: 3, File: "sub/deeper/x.md", Severity: e}}},
		{name: "4 review without base", files: with(map[string]string{"design.md": del, "design-review-1.md": "x"}),
			want: []Violation{{Rule: 4, File: "design-review-1.md", Severity: e}}},
		{name: "4 legacy review without task file", files: with(map[string]string{"task-3-code-review-1.md": "x"}),
			want: []Violation{{Rule: 4, File: "task-3-code-review-1.md", Severity: e}}},
		{name: "5 post-review without review", files: with(map[string]string{"tasks-post-review-1.md": "x"}),
			want: []Violation{{Rule: 5, File: "tasks-post-review-1.md", Severity: e}}},
		{name: "5 older review without post-review", files: with(map[string]string{"plan-post-review-1.md": del}),
			want: []Violation{{Rule: 5, File: "plan-review-1.md", Severity: e}}},
		{name: "6 task files without tasks.md", files: with(map[string]string{"tasks.md": del, "all-code-review-1.md": del}),
			want: []Violation{{Rule: 6, File: "tasks.md", Severity: e}}},
		{name: "7 duplicate id", files: with(map[string]string{"tasks.md": goodTasks + "| 2 | done | c |\n"}),
			want: []Violation{{Rule: 7, File: "tasks.md", Line: 5, Severity: e}}},
		{name: "8 state warning", files: goodPlan(), state: []string{"phase \"x\" is unknown"},
			want: []Violation{{Rule: 8, File: "state.json", Severity: SeverityWarning}}},
		{name: "9 hidden file", files: with(map[string]string{".DS_Store": "x"}),
			want: []Violation{{Rule: 9, File: ".DS_Store", Severity: e}}},
		{name: "9 taskie's temp files and review lock are allowed", files: with(map[string]string{
			".review.lock": "", ".tasks.md.tmp1": "", ".task-3.md.tmp2718281828": "",
			".plan-review-1.md.tmp9": "", ".state.json.tmp": "", ".x.json.tmp42": ""})},
		{name: "9 hidden files that only look like temp files", files: with(map[string]string{
			".md.tmp1": "", "..json.tmp1": "", ".tasks.md.bak": "", "tasks.md.tmp1": "",
			".notes.txt.tmp1": "", ".review.lock.old": "", ".events.jsonl": ""}),
			want: []Violation{
				{Rule: 9, File: "..json.tmp1", Severity: e},
				{Rule: 9, File: ".events.jsonl", Severity: e},
				{Rule: 9, File: ".md.tmp1", Severity: e},
				{Rule: 9, File: ".notes.txt.tmp1", Severity: e},
				{Rule: 9, File: ".review.lock.old", Severity: e},
				{Rule: 9, File: ".tasks.md.bak", Severity: e},
				{Rule: 9, File: "tasks.md.tmp1", Severity: e},
			}},
		{name: "9 temp files in a subdirectory are not taskie's", files: with(map[string]string{"sub/.tasks.md.tmp1": ""}),
			want: []Violation{{Rule: 9, File: "sub/.tasks.md.tmp1", Severity: e}}},
		{name: "9 nested non-md file", files: with(map[string]string{"sub/data.bin": "x"}),
			want: []Violation{{Rule: 9, File: "sub/data.bin", Severity: e}}},
		{name: "empty subdirectory is fine", files: with(map[string]string{"empty": "\x00dir"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writePlan(t, tc.files)
			var gotState string
			check := func(data []byte) []string {
				gotState = string(data)
				return tc.state
			}
			got := Validate(dir, check)
			if d := cmp.Diff(tc.want, got, ignoreMsg); d != "" {
				t.Errorf("violations (-want +got):\n%s", d)
			}
			if gotState != "{}" {
				t.Errorf("checkState got %q, want state.json's content", gotState)
			}
		})
	}
}

func TestValidateManyAtOnce(t *testing.T) {
	dir := writePlan(t, map[string]string{
		"tasks.md":           "Intro\n| Id | Status |\n|---|---|\n| 1 | wip |\n| x | done |\nOutro\n",
		"task-1.md":          "x",
		"task-2-review-1.md": "x",
		"notes.md":           "x",
		".DS_Store":          "x",
		"sub/x.md":           "x",
		"state.json":         "{",
	})
	got := Validate(dir, func([]byte) []string { return []string{"bad json"} })
	e := SeverityError
	want := []Violation{
		{Rule: 9, File: ".DS_Store", Severity: e, Msg: "unexpected file .DS_Store: a plan directory holds only .md files, state.json, events.jsonl and .lock"},
		{Rule: 2, File: "notes.md", Severity: e, Msg: "notes.md is not a plan file name; expected plan.md, design.md, tasks.md, task-T.md or a review file such as task-T-review-N.md"},
		{Rule: 1, File: "plan.md", Severity: e, Msg: "plan.md is missing"},
		{Rule: 8, File: "state.json", Severity: SeverityWarning, Msg: "bad json"},
		{Rule: 3, File: "sub/x.md", Severity: e, Msg: "sub/x.md is in a subdirectory; .md files must be directly in the plan directory"},
		{Rule: 4, File: "task-2-review-1.md", Severity: e, Msg: "task-2-review-1.md reviews task-2.md, which is missing"},
		{Rule: 7, File: "tasks.md", Line: 4, Severity: e, Msg: `task 1 has unknown status "wip" (known: pending, in-progress, done, cancelled, postponed, blocked)`},
		{Rule: 7, File: "tasks.md", Line: 5, Severity: e, Msg: `task id "x" is not a positive integer`},
		{Rule: 7, File: "tasks.md", Line: 6, Severity: e, Msg: `text outside the table: "Outro"`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("violations (-want +got):\n%s", d)
	}
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"rule 5 both directions", with(map[string]string{"plan-post-review-1.md": del, "plan-post-review-3.md": "x"}), []string{
			"plan-post-review-3.md: plan-post-review-3.md has no review plan-review-3.md (rule 5)",
			"plan-review-1.md: plan-review-1.md is followed by review 2 but has no post-review plan-post-review-1.md (rule 5)",
		}},
		{"rule 6 counts task files", with(map[string]string{"tasks.md": del, "all-code-review-1.md": del}), []string{
			"tasks.md: tasks.md is missing, but task-1-code-review-1.md and 4 other task files exist (rule 6)",
		}},
		{"rule 7 with line", with(map[string]string{"tasks.md": goodTasks + "| 1 | done | c |\n"}), []string{
			"tasks.md:5: duplicate task id 1 (first at line 3) (rule 7)",
		}},
		{"all-code review needs tasks.md", with(map[string]string{"tasks.md": del, "task-1.md": del, "task-2.md": del,
			"task-1-code-review-1.md": del, "task-1-post-review-1.md": del, "task-1-review-2.md": del}), []string{
			"all-code-review-1.md: all-code-review-1.md reviews tasks.md, which is missing (rule 4)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range Validate(writePlan(t, tc.files), nil) {
				got = append(got, v.String())
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
		})
	}
}

func TestValidateSymlinkedDirNotFollowed(t *testing.T) {
	dir := writePlan(t, goodPlan())
	outside := writePlan(t, map[string]string{"x.md": "x", "y.bin": "y"})
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	got := Validate(dir, nil)
	want := []Violation{{Rule: 9, File: "linked", Severity: SeverityError}}
	if d := cmp.Diff(want, got, ignoreMsg); d != "" {
		t.Errorf("violations (-want +got):\n%s", d)
	}
}

func TestViolationString(t *testing.T) {
	tests := []struct {
		v    Violation
		want string
	}{
		{Violation{Rule: 7, File: "tasks.md", Line: 4, Severity: SeverityError, Msg: "duplicate task id 3"}, "tasks.md:4: duplicate task id 3 (rule 7)"},
		{Violation{Rule: 1, File: "plan.md", Severity: SeverityError, Msg: "plan.md is missing"}, "plan.md: plan.md is missing (rule 1)"},
		{Violation{Rule: 8, File: "state.json", Severity: SeverityWarning, Msg: "bad"}, "state.json: warning: bad (rule 8)"},
	}
	for _, tc := range tests {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// TestValidateDependencies: a dependency on an unknown id and a
// dependency cycle are rule-7 errors, each on the row that shows it and
// naming the tasks and the fix, whether tasks.md was parsed by the caller
// or not.
func TestValidateDependencies(t *testing.T) {
	tasks := "| Id | Status | Depends on | Title |\n|---|---|---|---|\n" +
		"| 1 | pending | 3 | a |\n" + // line 3: 1 → 3 → 2 → 1
		"| 2 | pending | 1 | b |\n" +
		"| 3 | pending | 2, 9 | c |\n" + // line 5: unknown 9
		"| 4 | pending | 4 | d |\n" + // line 6: itself
		"| 5 | done | 1 | e |\n"
	want := []Violation{
		{Rule: 7, File: "tasks.md", Line: 3, Severity: SeverityError,
			Msg: `dependency cycle: 1 → 3 → 2 → 1 (read "depends on"): none of these tasks can ever start; remove one of these dependencies from the Depends on column`},
		{Rule: 7, File: "tasks.md", Line: 5, Severity: SeverityError,
			Msg: "task 3 depends on unknown task 9 (the tasks are 1–5): fix its Depends on cell"},
		{Rule: 7, File: "tasks.md", Line: 6, Severity: SeverityError,
			Msg: `dependency cycle: 4 → 4 (read "depends on"): none of these tasks can ever start; remove one of these dependencies from the Depends on column`},
	}
	dir := writePlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasks})
	if d := cmp.Diff(want, Validate(dir, nil)); d != "" {
		t.Errorf("Validate (-want +got):\n%s", d)
	}
	ts, ps := ParseTasks([]byte(tasks))
	in := Listing{Dir: dir, Entries: []ListEntry{{Name: "plan.md"}, {Name: "tasks.md"}}, Tasks: []byte(tasks), HasTasks: true,
		TaskProblems: ps, TasksParsed: true, Table: ts}
	if d := cmp.Diff(want, ValidateListing(in, nil)); d != "" {
		t.Errorf("ValidateListing, parsed (-want +got):\n%s", d)
	}
	// A plan whose dependencies are sound has none.
	ok := "| Id | Status | Depends on |\n|---|---|---|\n| 1 | done | - |\n| 2 | pending | 1 |\n| 3 | pending | 1, 2 |\n"
	if vs := Validate(writePlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": ok}), nil); len(vs) != 0 {
		t.Errorf("sound dependencies: %v", vs)
	}
}
