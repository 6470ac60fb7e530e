package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// lines joins its arguments with "\n" and a final newline, for fixtures.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// brief is the part of a Task most cases assert on.
type brief struct {
	ID     int
	Status string
	Line   int
}

func briefs(ts *Tasks) []brief {
	var out []brief
	for _, t := range ts.Tasks {
		out = append(out, brief{t.ID, t.Status, t.Line})
	}
	return out
}

func TestParseTasksGoodTable(t *testing.T) {
	in := lines(
		"",
		"| Id | Status | Title | Depends on | Files |",
		"|----|:------:|-------|------------|-------|",
		"| 1 | done | Setup | - | `go.mod`, main.go |",
		"| 2 | Pending | Parser \\| lexer | 1 | a.go b.go |",
		"| 3 | IN-PROGRESS | Render | #1 #2 | none |",
		"",
	)
	ts, problems := ParseTasks([]byte(in))
	if problems != nil {
		t.Fatalf("unexpected problems: %v", problems)
	}
	want := []Task{
		{ID: 1, Status: "done", Line: 4, Files: []string{"go.mod", "main.go"}},
		{ID: 2, Status: "Pending", Line: 5, DependsOn: []int{1}, Files: []string{"a.go", "b.go"}},
		{ID: 3, Status: "IN-PROGRESS", Line: 6, DependsOn: []int{1, 2}},
	}
	if d := cmp.Diff(want, ts.Tasks, cmpopts.IgnoreUnexported(Task{})); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	wantCells := []map[string]string{
		{"Id": "1", "Status": "done", "Title": "Setup", "Depends on": "-", "Files": "`go.mod`, main.go"},
		{"Id": "2", "Status": "Pending", "Title": "Parser | lexer", "Depends on": "1", "Files": "a.go b.go"},
		{"Id": "3", "Status": "IN-PROGRESS", "Title": "Render", "Depends on": "#1 #2", "Files": "none"},
	}
	for i, tk := range ts.Tasks {
		if d := cmp.Diff(wantCells[i], tk.CellMap()); d != "" {
			t.Errorf("task %d cells (-want +got):\n%s", tk.ID, d)
		}
		for h, v := range wantCells[i] {
			if got := tk.Cell(h); got != v {
				t.Errorf("task %d Cell(%q) = %q, want %q", tk.ID, h, got, v)
			}
		}
	}
	if d := cmp.Diff([]string{"Id", "Status", "Title", "Depends on", "Files"}, ts.Header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	if got := ts.Tasks[1].Title(); got != "Parser | lexer" {
		t.Errorf("Title() = %q", got)
	}
	if got := ts.Tasks[2].StatusNorm(); got != StatusInProgress {
		t.Errorf("StatusNorm() = %q", got)
	}
	if string(ts.Bytes()) != in {
		t.Errorf("Bytes() changed an unedited file:\n%s", ts.Bytes())
	}
}

func TestParseTasksProblems(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		tasks    []brief
		problems []Problem
	}{
		{
			name:  "no outer pipes and CRLF",
			in:    "Id | Status\r\n---|---\r\n1 | done\r\n",
			tasks: []brief{{1, "done", 3}},
		},
		{
			name: "prose before, between and after rows, blank inside",
			in: lines("# Tasks", "", "| Id | Status |", "|---|---|", "| 1 | done |",
				"Some note", "| 2 | pending |", "", "| 3 | blocked |", "", "Trailing prose"),
			tasks: []brief{{1, "done", 5}, {2, "pending", 7}, {3, "blocked", 9}},
			problems: []Problem{
				{6, `text outside the table: "Some note"`},
				{8, "blank line inside the table"},
				{11, `text outside the table: "Trailing prose"`},
			},
		},
		{
			name: "heading and prose above the table",
			in: lines("# Tasks", "", "The work of the plan, in order.", "Read `a | b` as one step.", "",
				"| Id | Status |", "|---|---|", "| 1 | done |"),
			tasks: []brief{{1, "done", 8}},
		},
		{
			name:  "heading right above the table",
			in:    lines("# Tasks", "| Id | Status |", "|---|---|", "| 1 | done |"),
			tasks: []brief{{1, "done", 4}},
		},
		{
			name:  "a table line running into the header",
			in:    lines("# Tasks", "| x | y |", "| Id | Status |", "|---|---|", "| 1 | done |"),
			tasks: []brief{{1, "done", 5}},
			problems: []Problem{
				{2, `text outside the table: "| x | y |"`},
			},
		},
		{
			name:  "prose above and below",
			in:    lines("# Tasks", "", "| Id | Status |", "|---|---|", "| 1 | done |", "", "Notes below"),
			tasks: []brief{{1, "done", 5}},
			problems: []Problem{
				{7, `text outside the table: "Notes below"`},
			},
		},
		{
			name:  "duplicate ids keep both rows",
			in:    lines("| Id | Status |", "|---|---|", "| 1 | done |", "| 1 | pending |"),
			tasks: []brief{{1, "done", 3}, {1, "pending", 4}},
			problems: []Problem{
				{4, "duplicate task id 1 (first at line 3)"},
			},
		},
		{
			name:  "non-integer ids",
			in:    lines("| Id | Status |", "|---|---|", "| abc | done |", "| 0 | done |", "| 1.5 | done |", "| 2 | done |"),
			tasks: []brief{{2, "done", 6}},
			problems: []Problem{
				{3, `task id "abc" is not a positive integer`},
				{4, `task id "0" is not a positive integer`},
				{5, `task id "1.5" is not a positive integer`},
			},
		},
		{
			name:  "missing separator",
			in:    lines("| Id | Status |", "| 1 | done |"),
			tasks: []brief{{1, "done", 2}},
			problems: []Problem{
				{2, "missing separator line (like |---|---|) after the header"},
			},
		},
		{
			name:     "empty file",
			in:       "",
			problems: []Problem{{0, "tasks.md is empty: expected a markdown table with Id and Status columns"}},
		},
		{
			name:     "blank lines only",
			in:       "\n  \n\n",
			problems: []Problem{{0, "tasks.md is empty: expected a markdown table with Id and Status columns"}},
		},
		{
			name: "prose only",
			in:   lines("Just some text", "and more"),
			problems: []Problem{
				{0, "no markdown table with a header row found"},
				{1, `text outside the table: "Just some text"`},
				{2, `text outside the table: "and more"`},
			},
		},
		{
			name:  "status before id",
			in:    lines("| Status | Id |", "|---|---|", "| done | 4 |"),
			tasks: []brief{{4, "done", 3}},
			problems: []Problem{
				{1, `first column is "Status", but it must be Id (found Id in column 2)`},
			},
		},
		{
			name:  "no status column",
			in:    lines("| Id | Title |", "|---|---|", "| 1 | x |"),
			tasks: []brief{{1, "", 3}},
			problems: []Problem{
				{1, "no Status column"},
			},
		},
		{
			name: "no id column",
			in:   lines("| Title | Status |", "|---|---|", "| x | done |"),
			problems: []Problem{
				{1, "no Id column: the first column must be Id"},
			},
		},
		{
			name:  "case-insensitive statuses",
			in:    lines("| ID | STATUS |", "|---|---|", "| 1 | Done |", "| 2 | PENDING |", "| 3 | In-Progress |", "| 4 | cancelled |", "| 5 | Postponed |", "| 6 | blocked |"),
			tasks: []brief{{1, "Done", 3}, {2, "PENDING", 4}, {3, "In-Progress", 5}, {4, "cancelled", 6}, {5, "Postponed", 7}, {6, "blocked", 8}},
		},
		{
			name:  "unknown and empty status reported, rows kept",
			in:    lines("| Id | Status |", "|---|---|", "| 1 | wip |", "| 2 |  |"),
			tasks: []brief{{1, "wip", 3}, {2, "", 4}},
			problems: []Problem{
				{3, `task 1 has unknown status "wip" (known: pending, in-progress, done, cancelled, postponed, blocked)`},
				{4, "task 2 has an empty status"},
			},
		},
		{
			name:  "cell count mismatch",
			in:    lines("| Id | Status | Title |", "|---|---|---|", "| 1 | done |", "| 2 | done | x | extra |"),
			tasks: []brief{{1, "done", 3}, {2, "done", 4}},
			problems: []Problem{
				{3, "row has 2 cells, header has 3"},
				{4, "row has 4 cells, header has 3"},
			},
		},
		{
			name:     "header and separator but no rows",
			in:       lines("| Id | Status |", "|---|---|"),
			problems: []Problem{{1, "table has no task rows"}},
		},
		{
			name:  "second separator",
			in:    lines("| Id | Status |", "|---|---|", "| 1 | done |", "|---|---|"),
			tasks: []brief{{1, "done", 3}},
			problems: []Problem{
				{4, "unexpected separator line"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, problems := ParseTasks([]byte(tc.in))
			if d := cmp.Diff(tc.tasks, briefs(ts)); d != "" {
				t.Errorf("tasks (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.problems, problems); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
			if string(ts.Bytes()) != tc.in {
				t.Errorf("Bytes() is not the input:\n%q", ts.Bytes())
			}
		})
	}
}

func TestTasksEdit(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		edit   func(*Tasks) error
		want   string
		reread string // Title of task 1 after re-parsing the output, if set
	}{
		{
			name: "escaped pipe survives SetStatus",
			in:   lines("| Id | Status | Title |", "|---|---|---|", "| 1 | pending | a \\| b |", "| 2 | pending | c |"),
			edit: func(ts *Tasks) error { return ts.SetStatus(1, "done") },
			want: lines("| Id | Status | Title |", "|---|---|---|", "| 1 | done | a \\| b |", "| 2 | pending | c |"),
		},
		{
			name: "extra columns in their order, prose untouched",
			in:   lines("Intro", "| Id | Prio | Status | Notes | Files |", "|--|--|--|--|--|", "|1|high|pending|x|`a.go`|", "Outro"),
			edit: func(ts *Tasks) error { return ts.SetStatus(1, StatusInProgress) },
			want: lines("Intro", "| Id | Prio | Status | Notes | Files |", "|--|--|--|--|--|", "|1|high|in-progress|x|`a.go`|", "Outro"),
		},
		{
			name: "aligned column keeps its width",
			in:   lines("| Id | Status      |", "|----|-------------|", "| 1  | in-progress |"),
			edit: func(ts *Tasks) error { return ts.SetStatus(1, "done") },
			want: lines("| Id | Status      |", "|----|-------------|", "| 1  | done        |"),
		},
		{
			name:   "SetCell escapes pipes",
			in:     lines("| Id | Status | Title |", "|---|---|---|", "| 1 | done | old |"),
			edit:   func(ts *Tasks) error { return ts.SetCell(1, "title", "x | y") },
			want:   lines("| Id | Status | Title |", "|---|---|---|", "| 1 | done | x \\| y |"),
			reread: "x | y",
		},
		{
			name: "SetCell fills a short row",
			in:   lines("| Id | Status | Title |", "|---|---|---|", "| 1 | done |"),
			edit: func(ts *Tasks) error { return ts.SetCell(1, "Title", "t") },
			want: lines("| Id | Status | Title |", "|---|---|---|", "| 1 | done | t |"),
		},
		{
			name: "CRLF kept on the edited row",
			in:   "| Id | Status |\r\n|---|---|\r\n| 1 | pending |\r\n",
			edit: func(ts *Tasks) error { return ts.SetStatus(1, "blocked") },
			want: "| Id | Status |\r\n|---|---|\r\n| 1 | blocked |\r\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, _ := ParseTasks([]byte(tc.in))
			if err := tc.edit(ts); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(ts.Bytes())); d != "" {
				t.Errorf("Bytes (-want +got):\n%s", d)
			}
			if tc.reread != "" {
				again, _ := ParseTasks(ts.Bytes())
				if got := again.Tasks[0].Title(); got != tc.reread {
					t.Errorf("re-read title = %q, want %q", got, tc.reread)
				}
			}
		})
	}
}

func TestTasksEditUpdatesTask(t *testing.T) {
	ts, _ := ParseTasks([]byte(lines("| Id | Status | Deps |", "|---|---|---|", "| 1 | pending | - |", "| 2 | pending | - |")))
	if err := ts.SetStatus(1, "Done"); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetCell(2, "deps", "1"); err != nil {
		t.Fatal(err)
	}
	t1, _ := ts.Find(1)
	t2, _ := ts.Find(2)
	if t1.Status != "Done" || t1.Cell("Status") != "Done" || t1.CellMap()["Status"] != "Done" {
		t.Errorf("task 1 after SetStatus = %+v", *t1)
	}
	if d := cmp.Diff([]int{1}, t2.DependsOn); d != "" {
		t.Errorf("DependsOn (-want +got):\n%s", d)
	}
}

func TestTasksEditErrors(t *testing.T) {
	ts, _ := ParseTasks([]byte(lines("| Id | Status |", "|---|---|", "| 1 | done |", "| 4 | done |")))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"unknown id", ts.SetStatus(7, "done"), "unknown task 7 (known ids: 1, 4)"},
		{"unknown status", ts.SetStatus(1, "wip"), `unknown status "wip" (known: pending, in-progress, done, cancelled, postponed, blocked)`},
		{"unknown column", ts.SetCell(1, "Owner", "me"), `tasks.md has no "Owner" column (columns: Id, Status)`},
		{"id column", ts.SetCell(1, "Id", "9"), "the Id column of task 1 cannot be changed"},
		{"line break", ts.SetCell(1, "Status", "a\nb"), `value for column "Status" of task 1 contains a line break`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil || tc.err.Error() != tc.want {
				t.Errorf("error = %v, want %q", tc.err, tc.want)
			}
		})
	}
	if got := string(ts.Bytes()); got != lines("| Id | Status |", "|---|---|", "| 1 | done |", "| 4 | done |") {
		t.Errorf("failed edits changed the file:\n%s", got)
	}
	empty, _ := ParseTasks(nil)
	if err := empty.SetCell(1, "Status", "done"); err == nil || err.Error() != "unknown task 1: tasks.md has no tasks" {
		t.Errorf("empty table error = %v", err)
	}
}

func TestTasksHeadingProseRoundTrip(t *testing.T) {
	head := lines("# Tasks", "", "Prose  with  odd   spacing, a | pipe and trailing space ", "")
	in := head + lines("| Id | Status | Title |", "|----|--------|-------|", "| 1 | pending | a |", "| 2 | pending | b |")
	ts, problems := ParseTasks([]byte(in))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	if err := ts.SetStatus(2, StatusDone); err != nil {
		t.Fatal(err)
	}
	if err := ts.AppendRow(3, map[string]string{"Status": "pending", "Title": "c"}); err != nil {
		t.Fatal(err)
	}
	want := head + lines("| Id | Status | Title |", "|----|--------|-------|", "| 1 | pending | a |", "| 2 | done | b |", "| 3 | pending | c |")
	if d := cmp.Diff(want, string(ts.Bytes())); d != "" {
		t.Errorf("Bytes (-want +got):\n%s", d)
	}
	if _, problems := ParseTasks(ts.Bytes()); problems != nil {
		t.Errorf("problems after the rewrite: %v", problems)
	}
}

func TestTasksAppendRow(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		id    int
		cells map[string]string
		want  string
	}{
		{
			name:  "escapes pipes, keeps other columns empty",
			in:    lines("| Id | Status | Title | Depends on | Files |", "|---|---|---|---|---|", "| 1 | done | a | - | a.go |"),
			id:    2,
			cells: map[string]string{"status": "pending", "Title": "x | y", "Depends on": "1"},
			want:  lines("| Id | Status | Title | Depends on | Files |", "|---|---|---|---|---|", "| 1 | done | a | - | a.go |", "| 2 | pending | x \\| y | 1 | |"),
		},
		{
			name:  "aligned table stays aligned",
			in:    lines("| Id | Status  | Title |", "|----|---------|-------|", "| 1  | done    | a     |"),
			id:    2,
			cells: map[string]string{"Status": "pending", "Title": "b"},
			want:  lines("| Id | Status  | Title |", "|----|---------|-------|", "| 1  | done    | a     |", "| 2  | pending | b     |"),
		},
		{
			name:  "no outer pipes, CRLF, no final newline",
			in:    "Id | Status\r\n---|---\r\n1 | done",
			id:    2,
			cells: map[string]string{"Status": "pending"},
			want:  "Id | Status\r\n---|---\r\n1 | done\r\n2 | pending",
		},
		{
			name:  "into an empty table, before prose below",
			in:    lines("# T", "| Id | Status |", "|---|---|", "", "later"),
			id:    1,
			cells: map[string]string{"Status": "pending"},
			want:  lines("# T", "| Id | Status |", "|---|---|", "| 1 | pending |", "", "later"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, _ := ParseTasks([]byte(tc.in))
			if err := ts.AppendRow(tc.id, tc.cells); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(ts.Bytes())); d != "" {
				t.Errorf("Bytes (-want +got):\n%s", d)
			}
			if _, ok := ts.Find(tc.id); !ok {
				t.Errorf("task %d not found after AppendRow", tc.id)
			}
		})
	}
}

func TestTasksAppendRowErrors(t *testing.T) {
	in := lines("| Id | Status |", "|---|---|", "| 1 | done |")
	tests := []struct {
		name  string
		id    int
		cells map[string]string
		want  string
	}{
		{"duplicate id", 1, map[string]string{"Status": "pending"}, "task 1 already exists"},
		{"unknown column", 2, map[string]string{"Status": "pending", "Owner": "x"}, `tasks.md has no "Owner" column (columns: Id, Status)`},
		{"unknown status", 2, map[string]string{"Status": "wip"}, `unknown status "wip"`},
		{"line break", 2, map[string]string{"Status": "pending\nx"}, "contains a line break"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, _ := ParseTasks([]byte(in))
			err := ts.AppendRow(tc.id, tc.cells)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if string(ts.Bytes()) != in {
				t.Errorf("the table changed: %q", ts.Bytes())
			}
		})
	}
}
