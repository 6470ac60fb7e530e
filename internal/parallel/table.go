package parallel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
)

// FromTable turns a parsed tasks.md into Tasks. taskFiles holds the
// content of task-{T}.md by id; it is read only for tasks without a Files
// cell. The Priority column is read by ParsePriority, Depends on as every
// id it names ("3, 5", "#3 #5"; "-" and "none" are none), Files as a
// comma or space separated list normalised by NormPath. A row whose id
// repeats an earlier one is skipped: plan validation reports it.
//
// The problems are unknown priorities, then those of Check.
func FromTable(ts *plan.Tasks, taskFiles map[domain.TaskID][]byte) ([]Task, []Problem) {
	if ts == nil {
		return nil, nil
	}
	prioCol := column(ts.Header, "priority", "prio")
	filesCol := column(ts.Header, "files")
	out := make([]Task, 0, len(ts.Tasks))
	seen := make(map[domain.TaskID]bool, len(ts.Tasks))
	var ps []Problem
	for _, pt := range ts.Tasks {
		id := domain.TaskID(pt.ID)
		if seen[id] {
			continue
		}
		seen[id] = true
		t := Task{ID: id, Status: pt.StatusNorm(), Priority: PriorityMedium}
		if prioCol != "" {
			cell := pt.Cell(prioCol)
			rank, ok := ParsePriority(cell)
			if !ok {
				ps = append(ps, Problem{Task: id, Kind: UnknownPriority,
					Msg: fmt.Sprintf("task %d: unknown priority %q (use high, medium, low or a number, 1 first); taken as medium", id, cell)})
			}
			t.Priority = rank
		}
		for _, d := range pt.DependsOn {
			t.Deps = append(t.Deps, domain.TaskID(d))
		}
		t.Files = filesOf(pt, filesCol, taskFiles[id])
		out = append(out, t)
	}
	return out, append(ps, Check(out)...)
}

// filesOf is the Files cell when the column exists and the cell is not
// empty, else the paths named in the task file.
func filesOf(pt plan.Task, filesCol string, taskFile []byte) []string {
	if filesCol == "" || strings.TrimSpace(pt.Cell(filesCol)) == "" {
		return FilesIn(taskFile)
	}
	var out []string
	for _, f := range pt.Files {
		if p := NormPath(f); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// column returns the header as written of the first of names present
// (case-insensitive), or "".
func column(header []string, names ...string) string {
	for _, n := range names {
		for _, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), n) {
				return h
			}
		}
	}
	return ""
}
