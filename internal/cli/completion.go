package cli

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/continuity"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Shell completion completes values, not only command names: plan ids,
// task ids (with their titles), phases, state fields and their values,
// task statuses, lifecycle states, criteria numbers and review kinds.
// Which value an argument takes is read from the command's usage line
// (`start <task>`, `status [plan]`, `task move <task> <state>`), so every
// command gets it, and never a file name where none belongs.

// taskStatuses are the Status values of tasks.md.
var taskStatuses = []string{"pending", "in-progress", "done", "cancelled", "postponed", "blocked"}

// reviewKinds are the values of `taskie review --kind`.
var reviewKinds = []string{"plan", "tasks", "code", "all-code"}

// completer returns the completions of one kind of value.
type completer func(g *globals, args []string) []cobra.Completion

// completers by the placeholder a usage line names; a placeholder not
// listed ("setting") is completed by its command itself. Arrays, not maps:
// they cost nothing when the process starts.
var completers = [...]namedCompleter{
	{"plan", completePlans},
	{"task", completeTasks},
	{"phase", completePhases},
	{"field", func(*globals, []string) []cobra.Completion { return workflow.Settable }},
	{"value", completeFieldValue},
	{"status", func(*globals, []string) []cobra.Completion { return taskStatuses }},
	{"state", completeLifecycle},
	{"n", completeCriteria},
}

// flagCompleters complete flag values by flag name.
var flagCompleters = [...]namedCompleter{
	{"task", completeTasks},
	{"kind", func(*globals, []string) []cobra.Completion { return reviewKinds }},
	{"state", completeLifecycle},
}

type namedCompleter struct {
	name string
	fn   completer
}

// completerFor returns the completer of a placeholder, nil for none.
func completerFor(kind string) completer {
	for _, c := range completers {
		if c.name == kind {
			return c.fn
		}
	}
	return nil
}

var placeholderRE = &lazyRegexp{expr: `^[\[<]+([a-z]+)[\]>]*$`}

// placeholders reads the positional arguments of a usage line:
// "move <task> <state>" → [task state].
func placeholders(use string) []string {
	fields := strings.Fields(use)
	var out []string
	for _, f := range fields[min(1, len(fields)):] {
		if m := placeholderRE.get().FindStringSubmatch(f); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// registerCompletions gives every command value completion for its
// arguments and its --plan, --task, --kind and --state flags.
func registerCompletions(root *cobra.Command, g *globals) {
	_ = root.RegisterFlagCompletionFunc("plan", flagFunc(g, completePlans))
	walk(root, func(c *cobra.Command) {
		for _, f := range flagCompleters {
			if c.LocalFlags().Lookup(f.name) != nil {
				_ = c.RegisterFlagCompletionFunc(f.name, flagFunc(g, f.fn))
			}
		}
		if c.ValidArgsFunction != nil || len(c.ValidArgs) > 0 || c.HasSubCommands() {
			return
		}
		kinds := placeholders(c.Use)
		if c.CommandPath() == "taskie plan use" {
			kinds = []string{"plan"}
		}
		c.ValidArgsFunction = argsFunc(g, kinds)
	})
}

// argsFunc completes the positional argument at len(args) by its kind.
func argsFunc(g *globals, kinds []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= len(kinds) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		fn := completerFor(kinds[len(args)])
		if fn == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(g, args), cobra.ShellCompDirectiveNoFileComp
	}
}

func flagFunc(g *globals, fn completer) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return fn(g, args), cobra.ShellCompDirectiveNoFileComp
	}
}

// completionPlan opens the plan a completion is about, silently.
func completionPlan(g *globals) *store.Plan {
	g.picked = true // no note on stderr while completing
	p, err := g.openPlan("")
	if err != nil {
		return nil
	}
	return p
}

func completePlans(g *globals, _ []string) []cobra.Completion {
	r, err := g.repo()
	if err != nil {
		return nil
	}
	rows, err := planRows(r, g.clock())
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, row := range rows {
		desc := row.State
		if row.Phase != nil {
			desc = string(*row.Phase)
		}
		out = append(out, cobra.CompletionWithDesc(row.ID, desc))
	}
	return out
}

func completeTasks(g *globals, _ []string) []cobra.Completion {
	p := completionPlan(g)
	if p == nil {
		return nil
	}
	ts, _, err := p.Tasks()
	if err != nil || ts == nil {
		return nil
	}
	st, _ := p.State()
	var out []cobra.Completion
	for _, r := range taskrec.OfFiles(ts, st) {
		if !r.Row {
			continue
		}
		desc := r.Display
		if r.Title != "" {
			desc += ": " + r.Title
		}
		out = append(out, cobra.CompletionWithDesc(r.ID.String(), desc))
	}
	return out
}

// completePhases lists the phases, the legal moves from the plan's phase
// first.
func completePhases(g *globals, _ []string) []cobra.Completion {
	var first []domain.Phase
	if p := completionPlan(g); p != nil {
		if st, err := p.State(); err == nil {
			first = workflow.LegalFrom(st.Phase)
		}
	}
	seen := map[domain.Phase]bool{}
	var out []cobra.Completion
	for _, ph := range append(first, domain.Phases...) {
		if !seen[ph] {
			seen[ph] = true
			out = append(out, cobra.CompletionWithDesc(string(ph), workflow.Stage(ph)))
		}
	}
	return out
}

// completeFieldValue completes the value of `taskie set <field> <value>`.
func completeFieldValue(g *globals, args []string) []cobra.Completion {
	if len(args) == 0 {
		return nil
	}
	switch args[0] {
	case "phase":
		return completePhases(g, args)
	case "next_phase":
		out := []cobra.Completion{"null"}
		for _, ph := range append(append([]domain.Phase{}, domain.Phases...), domain.CompleteTask, domain.CompleteTaskTDD) {
			out = append(out, string(ph))
		}
		return out
	case "current_task":
		return append(completeTasks(g, args), "null")
	case "tdd", "enabled":
		return []cobra.Completion{"true", "false"}
	case "session_id", "phase_iteration":
		return []cobra.Completion{"null"}
	}
	return nil
}

func completeLifecycle(*globals, []string) []cobra.Completion {
	var out []cobra.Completion
	for _, s := range lifecycle.States() {
		out = append(out, string(s))
	}
	return out
}

// completeCriteria lists the acceptance criteria of the task in args[0].
func completeCriteria(g *globals, args []string) []cobra.Completion {
	if len(args) == 0 {
		return nil
	}
	p := completionPlan(g)
	if p == nil {
		return nil
	}
	task, err := p.TaskID(args[0])
	if err != nil {
		return nil
	}
	cs, _, err := continuity.Criteria(p, task)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, c := range cs {
		mark := "[ ] "
		if c.Done {
			mark = "[x] "
		}
		out = append(out, cobra.CompletionWithDesc(strconv.Itoa(c.N), mark+c.Text))
	}
	return out
}
