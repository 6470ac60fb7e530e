package plan_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/plan"
)

// FuzzParseTasks feeds arbitrary tasks.md content to ParseTasks (docs/reliability.md#bad-input:
// extra prose, broken tables and duplicate ids are listed as problems,
// never a crash, and the file is kept byte for byte).
// Seeds: f.Add below and testdata/fuzz/FuzzParseTasks.
func FuzzParseTasks(f *testing.F) {
	for _, s := range []string{
		"# Tasks\n\n| Id | Status | Title | Depends on | Files |\n|----|--------|-------|------------|-------|\n| 1 | done | Setup | - | `go.mod`, main.go |\n| 2 | pending | Parser | 1 | parse.go |\n",
		"| Id | Status |\n|---|---|\n| 1 | pending |\n| 1 | done |\n| x | wip |\n",
		"| Status | Id |\n| 1 | pending |\n",
		"|Id|Status|Notes|\r\n|--|--|--|\r\n|1|in-progress|a \\| b|\r\n",
		"Just prose, no table.",
		"",
		"| Id | Status |\n|---|---|\n\n| 2 | blocked |\nTrailing prose\n|---|\n",
		"| Id | Title | Status |\n|---|---|---|\n| 1 | a \\\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, probs := plan.ParseTasks(data)
		if ts == nil {
			t.Fatal("ParseTasks returned no table")
		}
		nLines := bytes.Count(data, []byte("\n")) + 1
		for _, p := range probs {
			if p.Line < 0 || p.Line > nLines+1 {
				t.Errorf("problem line %d outside 0..%d: %q", p.Line, nLines+1, p.Msg)
			}
			if strings.TrimSpace(p.Msg) == "" {
				t.Errorf("problem at line %d has no message", p.Line)
			}
		}
		if !slices.IsSortedFunc(probs, func(a, b plan.Problem) int { return a.Line - b.Line }) {
			t.Errorf("problems not in line order: %v", probs)
		}
		for _, task := range ts.Tasks {
			if task.ID <= 0 || task.Line < 1 || task.Line > nLines {
				t.Errorf("task id %d at line %d of %d", task.ID, task.Line, nLines)
			}
			first, ok := ts.Find(task.ID)
			if !ok || first.ID != task.ID || first.Line > task.Line {
				t.Errorf("Find(%d) does not return its first row", task.ID)
			}
		}

		// Unedited, the file is written back byte for byte and reads the
		// same way again.
		out := ts.Bytes()
		if !bytes.Equal(out, data) {
			t.Fatalf("Bytes changed an unedited file:\nin:  %q\nout: %q", data, out)
		}
		ts2, probs2 := plan.ParseTasks(out)
		if !slices.Equal(ts.IDs(), ts2.IDs()) {
			t.Fatalf("ids %v re-parse as %v", ts.IDs(), ts2.IDs())
		}
		if !slices.Equal(statuses(ts), statuses(ts2)) {
			t.Fatalf("statuses %q re-parse as %q", statuses(ts), statuses(ts2))
		}
		if !slices.Equal(probs, probs2) {
			t.Fatalf("problems %v re-parse as %v", probs, probs2)
		}

		// Setting a status changes that status and nothing else the
		// parser sees, whatever the row looked like.
		if len(ts.Tasks) == 0 {
			return
		}
		id := ts.Tasks[0].ID
		if err := ts.SetStatus(id, "done"); err != nil {
			return
		}
		edited := ts.Bytes()
		ts3, _ := plan.ParseTasks(edited)
		if !slices.Equal(ts.IDs(), ts3.IDs()) {
			t.Fatalf("after SetStatus(%d): ids %v re-parse as %v in %q", id, ts.IDs(), ts3.IDs(), edited)
		}
		if !slices.Equal(statuses(ts), statuses(ts3)) || ts3.Tasks[0].Status != "done" {
			t.Fatalf("after SetStatus(%d, done): statuses %q re-parse as %q in %q", id, statuses(ts), statuses(ts3), edited)
		}
	})
}

func statuses(ts *plan.Tasks) []string {
	out := make([]string, len(ts.Tasks))
	for i, t := range ts.Tasks {
		out[i] = t.Status
	}
	return out
}

// FuzzParseFileName checks that a plan file name is classified
// consistently and that every name taskie recognises is the one name its
// fields produce (one name per file, docs/validation.md).
// Seeds: f.Add below and testdata/fuzz/FuzzParseFileName.
func FuzzParseFileName(f *testing.F) {
	for _, s := range []string{
		"plan.md", "design.md", "tasks.md", "task-3.md",
		"plan-review-1.md", "tasks-post-review-2.md", "all-code-review-12.md",
		"task-3-review-1.md", "task-3-post-review-4.md", "task-7-code-review-2.md",
		"task-03.md", "task-0.md", "plan-review-0.md", "task-3-review-.md",
		"task--1.md", "notes.md", "plan.txt", "task-99999999999999999999.md",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		fn := plan.ParseFileName(name)
		if fn != plan.ParseFileName(name) {
			t.Fatalf("ParseFileName(%q) is not deterministic", name)
		}
		if fn.Kind == plan.KindUnknown {
			if fn != (plan.FileName{}) {
				t.Fatalf("ParseFileName(%q): unknown kind with fields set: %+v", name, fn)
			}
			return
		}
		if !strings.HasSuffix(name, ".md") {
			t.Fatalf("ParseFileName(%q) = %+v for a name without .md", name, fn)
		}
		if fn.Kind.String() == "unknown" {
			t.Fatalf("ParseFileName(%q): kind %d has no name", name, fn.Kind)
		}
		if (fn.Task > 0) != (fn.Base == "task") || fn.Task < 0 {
			t.Fatalf("ParseFileName(%q): task %d with base %q", name, fn.Task, fn.Base)
		}
		review := fn.Kind == plan.KindReview || fn.Kind == plan.KindPostReview
		if (fn.N > 0) != review || fn.N < 0 {
			t.Fatalf("ParseFileName(%q): n %d for kind %v", name, fn.N, fn.Kind)
		}
		if fn.Legacy && (!review || fn.Base != "task") {
			t.Fatalf("ParseFileName(%q): legacy name of kind %v base %q", name, fn.Kind, fn.Base)
		}
		if want := nameOf(fn); want != name {
			t.Fatalf("ParseFileName(%q) = %+v, whose name is %q", name, fn, want)
		}
	})
}

// nameOf rebuilds a file name from its parsed fields with the package's
// own name builders (and the legacy pattern, which has none exported).
func nameOf(fn plan.FileName) string {
	switch fn.Kind {
	case plan.KindPlan, plan.KindDesign, plan.KindTasks:
		return fn.Base + ".md"
	case plan.KindTask:
		return plan.TaskFile(fn.Task)
	}
	review := fn.Base + "-review"
	if fn.Base == "task" {
		review = "code-review"
	}
	name := plan.ReviewFile(review, fn.Task, fn.N)
	if fn.Kind == plan.KindPostReview {
		name = plan.PostReviewFile(review, fn.Task, fn.N)
	}
	if fn.Legacy {
		name = strings.Replace(name, "-review-", "-code-review-", 1)
		name = strings.Replace(name, "-post-code-review-", "-code-post-review-", 1)
	}
	return name
}
