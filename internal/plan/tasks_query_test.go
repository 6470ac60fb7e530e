package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTasksQueries(t *testing.T) {
	ts, _ := ParseTasks([]byte(lines("| Id | Status | Name |", "|---|---|---|",
		"| 5 | done | e |", "| 2 | Pending | b |", "| 9 | pending | i |")))
	if d := cmp.Diff([]int{5, 2, 9}, ts.IDs()); d != "" {
		t.Errorf("IDs (-want +got):\n%s", d)
	}
	tests := []struct {
		exclude int
		want    int
		ok      bool
	}{{0, 2, true}, {2, 9, true}, {9, 2, true}}
	for _, tc := range tests {
		got, ok := ts.NextPending(tc.exclude)
		if ok != tc.ok || got.ID != tc.want {
			t.Errorf("NextPending(%d) = %d, %v; want %d, %v", tc.exclude, got.ID, ok, tc.want, tc.ok)
		}
	}
	if got, ok := ts.Find(9); !ok || got.Title() != "i" {
		t.Errorf("Find(9) = %+v, %v", got, ok)
	}
	if _, ok := ts.Find(3); ok {
		t.Error("Find(3) found a task that does not exist")
	}
	done, _ := ParseTasks([]byte(lines("| Id | Status |", "|---|---|", "| 1 | done |")))
	if got, ok := done.NextPending(0); ok {
		t.Errorf("NextPending on a finished plan = %+v", got)
	}
}

func TestKnownStatus(t *testing.T) {
	for _, s := range []string{"pending", " Done ", "IN-PROGRESS", "Cancelled", "postponed", "blocked"} {
		if !KnownStatus(s) {
			t.Errorf("KnownStatus(%q) = false", s)
		}
	}
	for _, s := range []string{"", "wip", "in progress", "completed"} {
		if KnownStatus(s) {
			t.Errorf("KnownStatus(%q) = true", s)
		}
	}
}

func TestTaskTitlePriority(t *testing.T) {
	tests := []struct {
		cells map[string]string
		want  string
	}{
		{map[string]string{"Description": "d", "name": "n"}, "n"},
		{map[string]string{"Summary": "s", "Description": "d"}, "s"},
		{map[string]string{"TITLE": "t", "Task": "k"}, "t"},
		{map[string]string{"Notes": "x"}, ""},
	}
	for _, tc := range tests {
		if got := (Task{cells: tc.cells}).Title(); got != tc.want {
			t.Errorf("Title(%v) = %q, want %q", tc.cells, got, tc.want)
		}
	}
}
