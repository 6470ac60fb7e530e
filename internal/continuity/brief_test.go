package continuity

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/workflow"
)

// typicalBrief is a task in the middle of its work.
func typicalBrief() *Brief {
	return &Brief{
		Plan: "p", HasState: true, Phase: "next-task", NextPhase: "code-review",
		Task: 2, TaskSource: "current_task", Title: "Validate the config", Status: "in-progress",
		TaskFile: ".taskie/plans/p/task-2.md", HasFile: true,
		Reqs: "Validate every field of the decoded config and report all problems at once.",
		Subtasks: []SubtaskRef{
			{ID: "2.1", Title: "Range checks", Status: "done"},
			{ID: "2.2", Title: "Enum checks", Status: "in-progress"},
		},
		Criteria: []Criterion{{N: 1, Done: true, Text: "ranges"}, {N: 2, Text: "enums (unit test)"}},
		Inputs: []ChainInput{{Task: 1, Title: "Decode", Status: "done", Path: ".taskie/plans/p/task-1.md",
			Output: &ChainOutput{Summary: "config.Load returns a Config.", Downstream: "Errors carry lines."}}},
		Recent: []Session{
			{N: 3, TS: "2025-06-01T10:00:00Z", Entry: Entry{Did: "ranges", Issues: "none", Next: "enums"}},
		},
		Sessions: 3,
		Next: workflow.Route{Action: "continue-task", Task: 2, Command: "taskie done next-task",
			Why: "task 2 has unfinished subtasks"},
		Links: []Link{{Name: "plan.md", Path: ".taskie/plans/p/plan.md"}},
	}
}

func TestBriefText(t *testing.T) {
	want := `taskie plan p: phase next-task → next code-review (automated).
Task 2: Validate the config [in-progress] (current_task) — .taskie/plans/p/task-2.md
Validate every field of the decoded config and report all problems at once.
Subtasks: 1 of 2 done; next 2.2 Enum checks (in-progress).
Unchecked criteria (1 of 2; once its test passes: ` + "`taskie task check 2 <n>`" + `):
  2. [ ] enums (unit test)
Chain inputs (Depends on):
  - task 1 “Decode” [done]: config.Load returns a Config.
    For downstream: Errors carry lines.
Last progress (1 of 3 sessions; before ending: ` + "`taskie task note 2 --did … --issues … --next …`" + `):
  - Session 3 (2025-06-01T10:00:00Z): Did: ranges; Next: enums
next: continue-task (task 2)
why:  task 2 has unfinished subtasks
run:  taskie done next-task
action: /taskie:continue-task
Read only if needed: .taskie/plans/p/plan.md.
`
	if diff := cmp.Diff(want, typicalBrief().Text()); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
}

func TestBriefStates(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Brief)
		has  []string
		not  []string
	}{
		{"no state", func(b *Brief) { b.HasState, b.Phase, b.NextPhase = false, "", "" },
			[]string{"no state.json (standalone)"}, []string{"phase"}},
		{"paused", func(b *Brief) { b.Paused = true }, []string{"automation PAUSED"}, nil},
		{"no task", func(b *Brief) { b.Task, b.Tasks, b.TasksDone = 0, 3, 3 },
			[]string{"; 3 of 3 tasks done.", "No task is current, in progress or pending."}, []string{"criteria", "Last progress", "Chain inputs"}},
		{"no tasks yet", func(b *Brief) { b.Task = 0 }, nil, []string{"No task", "tasks done"}},
		{"no task file", func(b *Brief) { b.HasFile = false },
			[]string{"Task 2: Validate the config [in-progress] (current_task); .taskie/plans/p/task-2.md does not exist yet"},
			[]string{"criteria"}},
		{"all checked", func(b *Brief) { b.Criteria[1].Done = true },
			[]string{"All 2 acceptance criteria are checked: write the chain output (`taskie task output 2 < output.md`)"}, nil},
		{"no criteria", func(b *Brief) { b.Criteria = nil }, []string{"No acceptance criteria in .taskie/plans/p/task-2.md"}, nil},
		{"no sessions", func(b *Brief) { b.Recent, b.Sessions = nil, 0 }, []string{"No progress entries yet"}, nil},
		{"dependency without output", func(b *Brief) { b.Inputs[0].Output = nil }, []string{"[done]: no chain output yet"}, nil},
		{"repair pending", func(b *Brief) { b.RepairPending = true }, []string{"`taskie continue` records the repair"}, nil},
		{"options", func(b *Brief) { b.Next.Options = []string{"code-review", "continue-task"} }, []string{"options: code-review continue-task"}, nil},
		{"free-text session", func(b *Brief) { b.Recent[0].Entry, b.Recent[0].Text = Entry{}, "wrote\nthings" },
			[]string{"Session 3 (2025-06-01T10:00:00Z): wrote things"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := typicalBrief()
			tc.edit(b)
			got := b.Text()
			for _, s := range tc.has {
				if !strings.Contains(got, s) {
					t.Errorf("missing %q in:\n%s", s, got)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(got, s) {
					t.Errorf("unexpected %q in:\n%s", s, got)
				}
			}
		})
	}
}

// hugeBrief has every part far over its share.
func hugeBrief() *Brief {
	b := typicalBrief()
	b.Reqs = strings.Repeat("Requirement text that goes on and on. ", 300)
	b.Criteria = nil
	for i := 1; i <= 40; i++ {
		b.Criteria = append(b.Criteria, Criterion{N: i, Text: strings.Repeat("criterion words ", 20)})
	}
	for i := 0; i < 6; i++ {
		b.Inputs = append(b.Inputs, ChainInput{Task: 9, Title: "Dep", Path: ".taskie/plans/p/task-9.md",
			Output: &ChainOutput{Summary: strings.Repeat("summary ", 200), Downstream: strings.Repeat("notes ", 100)}})
	}
	b.Recent = []Session{
		{N: 7, TS: "t", Entry: Entry{Did: strings.Repeat("did ", 300), Next: strings.Repeat("next ", 100)}},
		{N: 8, TS: "t", Entry: Entry{Did: strings.Repeat("did ", 300)}},
	}
	return b
}

func TestBriefBudget(t *testing.T) {
	b := hugeBrief()
	text := b.Text()
	if len(text) > Budget {
		t.Fatalf("context is %d bytes, budget %d:\n%s", len(text), Budget, text)
	}
	for _, s := range []string{
		"… (see .taskie/plans/p/task-2.md)", // requirements and progress
		"more (`taskie task criteria 2`)",
		"… (see .taskie/plans/p/task-9.md)",
		"next: continue-task (task 2)\nwhy:  task 2 has unfinished subtasks\nrun:  taskie done next-task\n",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("missing %q in:\n%s", s, text)
		}
	}
	total := 0
	for _, p := range b.Parts(Budget) {
		total += p.Size
		if p.Size != len(p.Text) || p.Full < p.Size {
			t.Errorf("part %s: size %d, text %d, full %d", p.Name, p.Size, len(p.Text), p.Full)
		}
	}
	if total != len(text) {
		t.Errorf("parts sum to %d, text is %d", total, len(text))
	}
}

// TestPartsRespectCaps renders every part at many caps: none may exceed
// its cap, or the budget would not hold.
func TestPartsRespectCaps(t *testing.T) {
	for _, b := range []*Brief{typicalBrief(), hugeBrief()} {
		rs := []func(int) string{b.header, b.task, b.criteria, b.inputs, b.progress, b.nextStep, b.links}
		for i, r := range rs {
			whole := r(math.MaxInt)
			full := len(whole)
			if got := r(full); got != whole {
				t.Errorf("part %d clipped at its own size:\n%s\nwant:\n%s", i, got, whole)
			}
			for c := 0; c <= full+5; c += 1 + c/100 {
				if got := len(r(c)); got > c {
					t.Fatalf("part %d at cap %d: %d bytes", i, c, got)
				}
			}
		}
	}
}
