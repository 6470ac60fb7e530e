package continuity

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/events/eventstest"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

// newPlan writes files (paths relative to the plan directory) into a new
// project and opens plan "p".
func newPlan(t testing.TB, files map[string]string) *store.Plan {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ".taskie", "plans", "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := implied.Get(&plan.Repo{Root: root}, "p", clock.At(ts0))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const tasksMD = `| Id | Status | Title | Depends on |
|----|--------|-------|------------|
| 1 | done | Decode | - |
| 2 | in-progress | Validate | 1 |
| 3 | pending | Report | 1, 2 |
`

func TestContextPicksTheTask(t *testing.T) {
	for _, tc := range []struct {
		name, state, tasks string
		arg, task          domain.TaskID
		source             string
	}{
		{"current_task", `{"phase":"next-task","current_task":"3"}`, tasksMD, 0, 3, "current_task"},
		{"in progress", `{"phase":"create-tasks"}`, tasksMD, 0, 2, "in progress"},
		{"next pending", `{"phase":"create-tasks"}`, strings.Replace(tasksMD, "in-progress", "done", 1), 0, 3, "next pending"},
		{"argument", `{"phase":"next-task","current_task":"3"}`, tasksMD, 1, 1, "argument"},
		{"none", `{"phase":"complete"}`, strings.NewReplacer("in-progress", "done", "pending", "done").Replace(tasksMD), 0, 0, ""},
		{"no tasks.md", `{"phase":"new-plan"}`, "", 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"plan.md": "# P\n", "state.json": tc.state}
			if tc.tasks != "" {
				files["tasks.md"] = tc.tasks
			}
			b, err := Context(newPlan(t, files), tc.arg)
			if err != nil {
				t.Fatal(err)
			}
			if b.Task != tc.task || b.TaskSource != tc.source {
				t.Errorf("task %d (%s), want %d (%s)", b.Task, b.TaskSource, tc.task, tc.source)
			}
		})
	}
}

func TestContextGathers(t *testing.T) {
	p := newPlan(t, map[string]string{
		"plan.md":    "# P\n",
		"design.md":  "# D\n",
		"tasks.md":   tasksMD,
		"state.json": `{"phase":"next-task","current_task":"3","next_phase":"code-review","phase_iteration":0}`,
		"task-1.md":  "# Task 1\n\n## Chain Output\n\n### Summary\nLoad.\n\n### For Downstream Tasks\nUse Load.\n",
		"task-3.md": "# Task 3: Report\n\nReport errors.\n\n### Subtask 3.1: a\n- **Status**: pending\n\n" +
			"## Acceptance Criteria\n- [x] one\n- [ ] two\n\n## Progress Log\n\n" +
			"### Session 1 — a\n- **Did**: x\n\n### Session 2 — b\n- **Did**: y\n\n### Session 3 — c\n- **Did**: z\n",
	})
	b, err := Context(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Title != "Report" || b.Status != "pending" || !b.HasFile || b.Reqs != "Report errors." || b.TaskFile != ".taskie/plans/p/task-3.md" {
		t.Errorf("task fields: %+v", b)
	}
	if len(b.Recent) != 2 || b.Recent[0].Did != "y" || b.Recent[1].Did != "z" || b.Sessions != 3 {
		t.Errorf("recent = %+v (sessions %d)", b.Recent, b.Sessions)
	}
	wantInputs := []ChainInput{
		{Task: 1, Title: "Decode", Status: "done", Path: ".taskie/plans/p/task-1.md", Output: &ChainOutput{Summary: "Load.", Downstream: "Use Load."}},
		{Task: 2, Title: "Validate", Status: "in-progress", Path: ".taskie/plans/p/task-2.md"},
	}
	if diff := cmp.Diff(wantInputs, b.Inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	wantLinks := []Link{{"plan.md", ".taskie/plans/p/plan.md"}, {"design.md", ".taskie/plans/p/design.md"}, {"tasks.md", ".taskie/plans/p/tasks.md"}}
	if diff := cmp.Diff(wantLinks, b.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if b.Next.Action != "continue-task" || len(b.Subtasks) != 1 {
		t.Errorf("next %+v, subtasks %+v", b.Next, b.Subtasks)
	}
	if n := len(b.Text()); n > Budget {
		t.Errorf("text is %d bytes", n)
	}
}

func TestContextWritesNothing(t *testing.T) {
	// A review file and its post-review exist but state.json lags behind:
	// `taskie continue` would repair it; the context only says so.
	const st = `{"phase":"post-code-review","current_task":"2","phase_iteration":1,"next_phase":"code-review"}`
	p := newPlan(t, map[string]string{
		"plan.md": "# P\n", "tasks.md": tasksMD, "state.json": st,
		"task-2.md": "# T\n", "task-2-review-2.md": "r", "task-2-post-review-2.md": "pr",
	})
	b, err := Context(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !b.RepairPending {
		t.Errorf("no repair pending: %+v", b.Next)
	}
	if got := read(t, p.Path("state.json")); got != st {
		t.Errorf("state.json changed: %s", got)
	}
	if _, err := os.Stat(p.Path(events.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("events.jsonl written: %v", err)
	}
}

func TestContextStateErrors(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasksMD, "state.json": "{bad"})
	_, err := Context(p, 0)
	var se *state.SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("err = %v, want a SyntaxError", err)
	}
	p = newPlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasksMD})
	b, err := Context(p, 0)
	if err != nil || b.HasState || !b.Next.Guess {
		t.Errorf("no state.json: %+v, %v", b, err)
	}
}

func TestNote(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasksMD, "task-2.md": "# Task 2\r\n\r\nText.\r\n"})
	res, err := Note(p, 2, Entry{Did: "a", Next: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Session != 1 || res.Archived != nil || len(res.Warnings) != 0 || res.Path != ".taskie/plans/p/task-2.md" {
		t.Errorf("result %+v", res)
	}
	want := "# Task 2\r\n\r\nText.\r\n\r\n## Progress Log\r\n\r\n### Session 1 — 2025-06-01T10:00:00Z\r\n- **Did**: a\r\n- **Issues**: none\r\n- **Next**: b\r\n"
	if diff := cmp.Diff(want, read(t, p.Path("task-2.md"))); diff != "" {
		t.Errorf("task file (-want +got):\n%s", diff)
	}
	evs, _, _ := eventstest.Read(p.Dir)
	wantEv := []events.Event{{TS: ts0, Plan: "p", Task: "2", Event: events.Progress, Actor: "cli", Reason: "session 1: a",
		Meta: map[string]any{"session": float64(1), "did": "a", "next": "b"}}}
	if diff := cmp.Diff(wantEv, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// A missing task file is created with its title from tasks.md.
	if _, err := Note(p, 3, Entry{Did: "start"}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p.Path("task-3.md")); !strings.HasPrefix(got, "# Task 3: Report\n\n## Progress Log\n\n### Session 1") {
		t.Errorf("new task file:\n%s", got)
	}
	if _, err := Note(p, 2, Entry{Did: " "}); err == nil {
		t.Error("empty did accepted")
	}
}

func TestNoteSizeManagement(t *testing.T) {
	big := strings.Repeat("x", 2000)
	var b strings.Builder
	b.WriteString("# Task 2\n\nText.\n\n## Progress Log\n")
	for i := 1; b.Len() < ArchiveSize-3000; i++ {
		b.WriteString("\n### Session " + strconv.Itoa(i) + " — t\n- **Did**: " + big + "\n")
	}
	p := newPlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasksMD, "task-2.md": b.String()})
	before := Parse([]byte(b.String())).Sessions()
	n := len(before)

	// Past 50 KB: a warning and the split suggestion (more than 20 sessions).
	res, err := Note(p, 2, Entry{Did: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Archived != nil || len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "over 50 KB") || !strings.Contains(res.Warnings[1], "consider splitting") {
		t.Fatalf("warnings %q, archived %+v", res.Warnings, res.Archived)
	}

	// At 75 KB: all but the last 5 sessions move to the archive.
	res, err = Note(p, 2, Entry{Did: big + big})
	if err != nil {
		t.Fatal(err)
	}
	if res.Archived == nil || res.Archived.From != 1 || res.Archived.To != n-3 || res.Archive != ".taskie/archive/p/task-2.md" {
		t.Fatalf("archived %+v to %s", res.Archived, res.Archive)
	}
	got := read(t, p.Path("task-2.md"))
	ss := Parse([]byte(got)).Sessions()
	if len(ss) != 6 || !ss[0].Archived || ss[5].N != n+2 || ss[5].Did != big+big {
		t.Errorf("sessions after archive: %d, first %+v", len(ss), ss[0].Heading)
	}
	arch := read(t, ArchivePath(p, 2))
	if !strings.HasPrefix(arch, "# Task 2 — archived progress (plan p)\n\n### Session 1 — t\n") || strings.Count(arch, "### Session ") != n-3 {
		t.Errorf("archive starts %q, %d sessions", arch[:80], strings.Count(arch, "### Session "))
	}
	if !strings.Contains(got, "`.taskie/archive/p/task-2.md`") || len(got) > WarnSize {
		t.Errorf("task file is %d bytes", len(got))
	}

	// The next archive appends; it never overwrites.
	for Parse([]byte(read(t, p.Path("task-2.md")))).Len() < ArchiveSize-5000 {
		if _, err := Note(p, 2, Entry{Did: big + big + big}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		if res, err = Note(p, 2, Entry{Did: big + big + big}); err != nil {
			t.Fatal(err)
		}
		if res.Archived != nil {
			break
		}
	}
	if res.Archived == nil || res.Archived.From != 1 {
		t.Fatalf("second archive %+v", res.Archived)
	}
	arch2 := read(t, ArchivePath(p, 2))
	if !strings.HasPrefix(arch2, arch) || strings.Count(arch2, "# Task 2 — archived") != 1 || strings.Contains(arch2, "archived to") {
		t.Errorf("the archive was not appended to")
	}
}

func TestCheckAndCriteria(t *testing.T) {
	const in = "# T\n\n## Acceptance Criteria\n- [ ] a\n- [ ] b\n"
	p := newPlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasksMD, "task-2.md": in})
	c, changed, err := Check(p, 2, 2, true)
	if err != nil || !changed || c.Text != "b" || !c.Done {
		t.Fatalf("Check = %+v, %v, %v", c, changed, err)
	}
	if got := read(t, p.Path("task-2.md")); got != "# T\n\n## Acceptance Criteria\n- [ ] a\n- [x] b\n" {
		t.Errorf("file %q", got)
	}
	cs, section, err := Criteria(p, 2)
	if err != nil || !section || len(cs) != 2 || !cs[1].Done {
		t.Errorf("Criteria = %+v, %v, %v", cs, section, err)
	}
	var re *RangeError
	if _, _, err := Check(p, 2, 3, true); !errors.As(err, &re) {
		t.Errorf("out of range: %v", err)
	}
	if _, _, err := Check(p, 1, 1, true); !errors.Is(err, ErrNoTaskFile) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(p.Path("task-1.md")); err == nil {
		t.Error("check created a task file")
	}
}

func TestSetOutput(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasksMD, "task-1.md": "# T\n\n## Chain Output\nold\n"})
	if err := SetOutput(p, 1, ChainOutput{Summary: "new"}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p.Path("task-1.md")); got != "# T\n\n## Chain Output\n\n### Summary\nnew\n" {
		t.Errorf("file %q", got)
	}
}

// TestNoteConcurrent: notes written at once all survive, numbered 1..n
// without gaps or repeats, each with its event.
func TestNoteConcurrent(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# P\n", "tasks.md": tasksMD, "task-2.md": "# T\n"})
	const workers, each = 8, 5
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		go func() {
			for i := 0; i < each; i++ {
				_, err := Note(p, 2, Entry{Did: "work"})
				errs <- err
			}
		}()
	}
	for i := 0; i < workers*each; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ss := Parse([]byte(read(t, p.Path("task-2.md")))).Sessions()
	if len(ss) != workers*each {
		t.Fatalf("%d sessions, want %d", len(ss), workers*each)
	}
	for i, s := range ss {
		if s.N != i+1 {
			t.Fatalf("session %d is numbered %d", i+1, s.N)
		}
	}
	evs, _, _ := eventstest.Read(p.Dir)
	if len(evs) != workers*each {
		t.Errorf("%d events", len(evs))
	}
}
