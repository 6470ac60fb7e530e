package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// SummaryBudget bounds the context injected at session start (SPEC §12).
const SummaryBudget = 2048

// SessionStart prints where the plan stands as additionalContext, so a fresh
// or compacted session resumes from facts, not guesses. It always exits 0.
func SessionStart(e Env) int {
	if e.Getenv("TASKIE_HOOK_SKIP") != "" {
		return 0
	}
	in, err := ReadInput(e.Stdin, e.InputDeadline)
	if err != nil || in.Cwd == "" {
		return 0
	}
	repo, err := plan.Find(in.Cwd)
	if err != nil {
		return 0
	}
	id := SelectPlan(repo, in, e.Now())
	if id == "" {
		return 0
	}
	p, err := project.Get(repo, id)
	if err != nil {
		return 0
	}
	text := Summary(p)
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": "SessionStart", "additionalContext": text}})
	fmt.Fprintf(e.Stdout, "%s\n", out)
	return 0
}

// Summary is the short text of where a plan stands, under SummaryBudget.
func Summary(p *project.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "taskie plan %q (.taskie/plans/%s/).\n", p.ID, p.ID)
	s, err := p.State()
	switch {
	case errors.Is(err, state.ErrNotFound):
		b.WriteString("No state.json (standalone plan).\n")
	case err != nil:
		fmt.Fprintf(&b, "state.json is unreadable: %v. Fix it before continuing.\n", err)
		return clip(b.String())
	default:
		fmt.Fprintf(&b, "Stage %s; phase %s → next %s", workflow.Stage(s.Phase), s.Phase, orNull(s.Next()))
		if s.Task() != "" {
			fmt.Fprintf(&b, "; current task %s", s.Task())
		}
		if !s.IsEnabled() {
			b.WriteString("; automation PAUSED")
		}
		b.WriteString(".\n")
		if t := s.Task(); t != "" {
			writeCriteria(&b, p, t)
		}
	}
	if s != nil && err == nil {
		r := workflow.Continue(p.RouteFacts(s), p.Models())
		fmt.Fprintf(&b, "Next step: %s", r.Action)
		if r.Task != "" {
			fmt.Fprintf(&b, " (task %s)", r.Task)
		}
		fmt.Fprintf(&b, " — %s.", r.Why)
		if r.Command != "" {
			fmt.Fprintf(&b, " Run `%s`.", r.Command)
		}
		b.WriteString("\n")
	}
	b.WriteString("Run `taskie continue` for the exact next action and `taskie status` for the whole picture.\n")
	return clip(b.String())
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// writeCriteria lists the current task's unchecked acceptance criteria.
func writeCriteria(b *strings.Builder, p *project.Plan, task string) {
	id, err := strconv.Atoi(task)
	if err != nil {
		return
	}
	data, err := os.ReadFile(p.Path(plan.TaskFile(id)))
	if err != nil {
		return
	}
	var open []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- [ ]"); ok {
			open = append(open, strings.TrimSpace(rest))
		}
	}
	if len(open) == 0 {
		return
	}
	fmt.Fprintf(b, "Unchecked criteria of task %s:\n", task)
	for i, c := range open {
		if i == 8 {
			fmt.Fprintf(b, "  … and %d more in %s\n", len(open)-i, plan.TaskFile(id))
			break
		}
		fmt.Fprintf(b, "  - [ ] %s\n", c)
	}
}

func clip(s string) string {
	if len(s) <= SummaryBudget {
		return s
	}
	cut := strings.LastIndex(s[:SummaryBudget-40], "\n")
	if cut < 0 {
		cut = SummaryBudget - 40
	}
	return s[:cut] + "\n… (run `taskie status`)\n"
}
