package parallel

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
)

func parseTable(t *testing.T, rows ...string) *plan.Tasks {
	t.Helper()
	ts, ps := plan.ParseTasks([]byte(strings.Join(rows, "\n") + "\n"))
	if ps != nil {
		t.Fatalf("fixture has problems: %v", ps)
	}
	return ts
}

func TestFromTable(t *testing.T) {
	ts := parseTable(t,
		"| Id | Status | Priority | Depends on | Files |",
		"|----|--------|----------|------------|-------|",
		"| 1 | Done | high | - | `go.mod`, internal/a.go |",
		"| 2 | pending | **Low** | 1 | ./internal/b.go internal/a.go |",
		"| 3 | pending | P0 | #1, #2 | none |",
		"| 4 | in-progress | 5 | 3 5 |  |",
		"| 5 | pending |  | none | internal/x/*.go |",
		"| 6 | pending | asap | 1 | internal/y/ |",
	)
	files := map[domain.TaskID][]byte{
		3: []byte("Touch `internal/ignored.go`: the Files cell wins."),
		4: []byte("Edit `internal/c.go` and README.md."),
	}
	got, problems := FromTable(ts, files)
	want := []Task{
		{ID: 1, Status: "done", Priority: PriorityHigh, Files: []string{"go.mod", "internal/a.go"}},
		{ID: 2, Status: "pending", Priority: PriorityLow, Deps: ids(1), Files: []string{"internal/b.go", "internal/a.go"}},
		{ID: 3, Status: "pending", Priority: PriorityHighest, Deps: ids(1, 2)},
		{ID: 4, Status: "in-progress", Priority: 5, Deps: ids(3, 5), Files: []string{"internal/c.go", "README.md"}},
		{ID: 5, Status: "pending", Priority: PriorityMedium, Files: []string{"internal/x/"}},
		{ID: 6, Status: "pending", Priority: PriorityMedium, Deps: ids(1), Files: []string{"internal/y/"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	wantProblems := []string{`task 6: unknown priority "asap" (use high, medium, low or a number, 1 first); taken as medium`}
	if d := cmp.Diff(wantProblems, messages(problems)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

func TestFromTableWithoutFilesColumn(t *testing.T) {
	ts := parseTable(t,
		"| Id | Status | Dependencies |",
		"|----|--------|--------------|",
		"| 1 | pending | |",
		"| 2 | pending | 1 |",
		"| 3 | pending | |",
	)
	files := map[domain.TaskID][]byte{
		1: []byte("# Task 1\n\nChange `internal/plan/tasks.go` and internal/plan/tasks_test.go.\n"),
		2: []byte("Update README.md, e.g. the usage section."),
	}
	got, problems := FromTable(ts, files)
	want := []Task{
		{ID: 1, Status: "pending", Priority: PriorityMedium, Files: []string{"internal/plan/tasks.go", "internal/plan/tasks_test.go"}},
		{ID: 2, Status: "pending", Priority: PriorityMedium, Deps: ids(1), Files: []string{"README.md"}},
		{ID: 3, Status: "pending", Priority: PriorityMedium},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	if problems != nil {
		t.Errorf("problems: %v", problems)
	}
}

func TestFromTableProblems(t *testing.T) {
	ts, _ := plan.ParseTasks([]byte(strings.Join([]string{
		"| Id | Status | Depends on |",
		"|----|--------|------------|",
		"| 1 | pending | 3 |",
		"| 2 | pending | 7 |",
		"| 3 | pending | 1 |",
		"| 3 | pending | 2 |", // plan reports the duplicate
	}, "\n")))
	got, problems := FromTable(ts, nil)
	if len(got) != 3 {
		t.Errorf("got %d tasks, want 3 (the repeated row is skipped)", len(got))
	}
	want := []string{
		"task 2: depends on unknown task 7 (known: 1–3)",
		"dependency cycle: 1 → 3 → 1",
	}
	if d := cmp.Diff(want, messages(problems)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if problems[1].Kind != DependencyCycle || !cmp.Equal(problems[1].Cycle, ids(1, 3, 1)) {
		t.Errorf("cycle problem = %+v", problems[1])
	}
	if got, ps := FromTable(nil, nil); got != nil || ps != nil {
		t.Errorf("FromTable(nil) = %v, %v", got, ps)
	}
}

func messages(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestParsePriority(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"high", PriorityHigh, true},
		{" HIGH ", PriorityHigh, true},
		{"**Medium**", PriorityMedium, true},
		{"low", PriorityLow, true},
		{"critical", PriorityHighest, true},
		{"", PriorityMedium, true},
		{"1", 1, true},
		{"P2", 2, true},
		{"7", 7, true},
		{"-1", PriorityMedium, false},
		{"soon", PriorityMedium, false},
	}
	for _, tc := range tests {
		got, ok := ParsePriority(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParsePriority(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if got := PriorityName(7); got != "priority 7" {
		t.Errorf("PriorityName(7) = %q", got)
	}
}

func TestFilesIn(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"backticked paths", "Edit `internal/x/y.go` and `cmd/taskie/` and `Makefile`.", []string{"internal/x/y.go", "cmd/taskie/", "Makefile"}},
		{"backticked package is a directory", "All of `internal/parallel` and `./internal/plan/...`.", []string{"internal/parallel/", "internal/plan/"}},
		{"bare words need a known extension", "Update README.md, internal/a.go: and docs/guide.md.", []string{"README.md", "internal/a.go", "docs/guide.md"}},
		{"line suffixes and links", "See [the parser](internal/plan/tasks.go) and internal/b.go:42 or c.go#L7.", []string{"internal/plan/tasks.go", "internal/b.go", "c.go"}},
		{"emphasis", "**config.json** is read.", []string{"config.json"}},
		{"dot directories", "Add .github/workflows/ci.yml.", []string{".github/workflows/ci.yml"}},
		{"globs stand for their directory", "Tests in `internal/x/*_test.go`.", []string{"internal/x/"}},
		{"repeats once", "a.go, a.go and ./a.go", []string{"a.go"}},
		{"prose is not a file", "e.g. v1.2, i.e. and/or Node.js, plan.Tasks and `domain.TaskID`, 3.5 times.", nil},
		{"not repository paths", "https://example.com/a.go /etc/hosts.conf ~/x.md ../up.go `--flag` user@host.md `golang.org/x/tools` $HOME/x.go", nil},
		{"spans with spaces are commands", "Run `go test ./internal/parallel/`.", nil},
		{"fenced code: bare-word rule", "```sh\ngo test ./internal/x/ # touches x.go\n```\n", []string{"x.go"}},
		{"line and column", "Fix internal/a.go:12:5 and `b.go:3`.", []string{"internal/a.go", "b.go"}},
		{"plan files are documents, not work", "See plan.md, design.md, task-2.md, `tasks.md` and .taskie/plans/p/notes.md; edit docs/plan.md.",
			[]string{"docs/plan.md"}},
		{"a glob needs a directory", "Files matching `*.md` and `docs/*.md`.", []string{"docs/"}},
		{"an unclosed backtick", "Edit `internal/a.go and b.go", []string{"internal/a.go", "b.go"}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, FilesIn([]byte(tc.in))); d != "" {
				t.Errorf("FilesIn (-want +got):\n%s", d)
			}
		})
	}
}

func TestNormPath(t *testing.T) {
	tests := map[string]string{
		"./a/b.go":      "a/b.go",
		"a//b/../c.go":  "a/c.go",
		"internal/x/":   "internal/x/",
		"internal/x/**": "internal/x/",
		"./...":         "./",
		"*.go":          "./",
		"`a.go`":        "a.go",
		"-":             "",
		"None":          "",
		" ":             "",
	}
	for in, want := range tests {
		if got := NormPath(in); got != want {
			t.Errorf("NormPath(%q) = %q, want %q", in, got, want)
		}
	}
}
