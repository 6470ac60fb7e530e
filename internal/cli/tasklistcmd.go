package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// taskListOpts are the options of `taskie task list`.
type taskListOpts struct {
	s             *Streams
	g             *globals
	state, status string
	asJSON        bool
}

func newTaskListCmd(s *Streams, g *globals) *cobra.Command {
	o := &taskListOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "list [--state S] [--status S] [--json]",
		Short: "List every task: id, title, Status in tasks.md, lifecycle state, dependencies",
		Long: `List the tasks of tasks.md in table order: id, title, the Status cell of
tasks.md, the lifecycle state (as ` + "`taskie query`" + ` reads it; a task never moved
is pending, or "-" when tasks.md marks it done or cancelled) and the tasks it
depends on.

  --state S    tasks in lifecycle state S (taskie help lifecycle)
  --status S   tasks whose Status in tasks.md is S

Piped, the first line names the columns (task, title, status, state,
depends_on, the keys of --json) and the columns are tab-separated; on a
terminal they are aligned.`,
		Example: "  taskie task list\n  taskie task list --state in_progress\n  taskie task list --status pending --json",
		Args:    exactArgs(0, "no arguments"),
		RunE:    func(*cobra.Command, []string) error { return runTaskList(o) },
	}
	f := c.Flags()
	f.StringVar(&o.state, "state", "", "only tasks in this lifecycle `state`")
	f.StringVar(&o.status, "status", "", "only tasks with this `status` in tasks.md")
	f.BoolVar(&o.asJSON, "json", false, "print a JSON array")
	return c
}

// taskListView is one task as `taskie task list` shows it; the piped
// header names these keys.
type taskListView struct {
	Task      string   `json:"task"`
	Title     string   `json:"title"`
	Status    string   `json:"status"` // tasks.md, lower-cased
	State     string   `json:"state"`  // lifecycle; "" without a record
	DependsOn []string `json:"depends_on"`
}

var taskListColumns = []string{"task", "title", "status", "state", "depends_on"}

// newTaskListView shows a task's one record: its status as tasks.md
// renders it, its lifecycle state ("" for a task without a record that
// tasks.md marks done or cancelled).
func newTaskListView(r taskrec.Record) taskListView {
	v := taskListView{Task: r.ID.String(), Title: r.Title, Status: r.Display, DependsOn: []string{}}
	if r.Recorded || r.State == lifecycle.Pending {
		v.State = string(r.State)
	}
	for _, d := range r.Deps {
		v.DependsOn = append(v.DependsOn, d.String())
	}
	return v
}

func (v taskListView) cells() []string {
	deps := strings.Join(v.DependsOn, ",")
	return []string{v.Task, oneLineCell(v.Title), orNone(v.Status), orNone(v.State), orNone(deps)}
}

// oneLineCell keeps a cell on its line and its column: tabs would shift
// the piped columns.
func oneLineCell(s string) string {
	return orNone(strings.Join(strings.Fields(s), " "))
}

func runTaskList(o *taskListOpts) error {
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	var state lifecycle.State
	if o.state != "" {
		if state, err = lifecycle.ParseState(o.state); err != nil {
			return usageErr(err, "")
		}
	}
	status := strings.ToLower(strings.TrimSpace(o.status))
	if o.status != "" && !plan.KnownStatus(status) {
		return usageErr(fmt.Errorf("--status %q: unknown status%s", o.status, didYouMean(status, taskStatuses)), "statuses: "+strings.Join(taskStatuses, ", "))
	}
	ts, _, err := p.Tasks()
	if err != nil {
		return err
	}
	if ts == nil {
		return usageErr(fmt.Errorf("plan %s has no tasks.md yet", p.ID), "add a task with `taskie task add --title …`, or write the table (`"+actionRef("create-tasks")+"`)")
	}
	views := []taskListView{}
	for _, r := range planRecords(p, taskrec.Input{}) {
		if !r.Row {
			continue // a record whose row was removed
		}
		v := newTaskListView(r)
		if (state != "" && v.State != string(state)) || (status != "" && v.Status != status) {
			continue
		}
		views = append(views, v)
	}
	if o.asJSON {
		return writeJSON(o.s.Out, views)
	}
	if len(views) == 0 {
		fmt.Fprintln(o.s.Err, "no task matches")
	}
	return printTaskList(o.s, views)
}

// printTaskList writes the tasks through the table printer.
func printTaskList(s *Streams, views []taskListView) error {
	return table{cols: taskListColumns}.print(s, len(views), func(i int, _ bool) []string { return views[i].cells() })
}
