package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// eventTaskAdded is the event of `taskie task add`.
const eventTaskAdded = events.TaskAdded

// newTasksHeader is the table `task add` starts when the plan has no
// tasks.md yet: the columns plugin/actions/create-tasks.md asks for.
const newTasksHeader = "| Id | Status | Priority | Complexity | Description | Depends on | Files |\n" +
	"|----|--------|----------|------------|-------------|------------|-------|\n"

// taskAddOpts are the options of `taskie task add`.
type taskAddOpts struct {
	s                                *Streams
	g                                *globals
	title, description               string
	deps, files                      string
	priority, complexity             string
	asJSON                           bool
	setDeps, setFiles, setPrio, setC bool
}

func newTaskAddCmd(s *Streams, g *globals) *cobra.Command {
	o := &taskAddOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "add --title TEXT [--description TEXT] [--deps 1,2] [--files a,b] [--priority P] [--complexity C]",
		Short: "Add a task: a row at the end of tasks.md and its task-<T>.md",
		Long: `Add a pending task with the next free id: a row after the last row of tasks.md
(every other line kept as written, a | in a value escaped) and task-<T>.md,
starting with "# Task <T>: <title>" and the description. The title goes to the
first of the Title, Name, Task, Summary or Description columns; the description
also to a Description column when that is not the title's. --deps, --files,
--priority and --complexity need their column in tasks.md. Without tasks.md, one
is created with the columns Id, Status, Priority, Complexity, Description,
Depends on and Files. One commit of the plan, logged as a TASK_ADDED event.`,
		Example: `  taskie task add --title "Parse the config file" --deps 1,2 --files config/,go.mod
  taskie task add --title "Docs" --description "Document the flags" --priority low --json`,
		Args: exactArgs(0, "no arguments (use --title)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			o.setDeps, o.setFiles = f.Changed("deps"), f.Changed("files")
			o.setPrio, o.setC = f.Changed("priority"), f.Changed("complexity")
			return runTaskAdd(o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.title, "title", "", "the task's title (required)")
	f.StringVar(&o.description, "description", "", "what to build and why: the start of task-<T>.md")
	f.StringVar(&o.deps, "deps", "", "ids of the tasks it depends on, comma-separated")
	f.StringVar(&o.files, "files", "", "the files or directories it changes, comma-separated")
	f.StringVar(&o.priority, "priority", "", "its Priority cell (high, medium, low)")
	f.StringVar(&o.complexity, "complexity", "", "its Complexity cell (S, M, L …)")
	f.BoolVar(&o.asJSON, "json", false, "print the new task as `taskie task list --json` shows it")
	return c
}

func runTaskAdd(o *taskAddOpts) error {
	title := strings.TrimSpace(o.title)
	if title == "" {
		return usageErr(errors.New("a task needs a title"), "give it with --title TEXT")
	}
	for name, v := range map[string]string{"--title": o.title, "--deps": o.deps, "--files": o.files, "--priority": o.priority, "--complexity": o.complexity} {
		if strings.ContainsAny(v, "\r\n") {
			return usageErr(fmt.Errorf("%s contains a line break: a table cell is one line", name), "put longer text in --description")
		}
	}
	deps, err := parseDepsFlag(o.deps)
	if err != nil {
		return err
	}
	files := splitList(o.files)
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	var added plan.Task
	err = p.Update(func(snap *store.Snapshot) (store.Change, error) {
		raw := snap.TasksRaw
		if snap.Tasks == nil {
			if snap.TasksErr != nil && !errors.Is(snap.TasksErr, fs.ErrNotExist) {
				return store.Change{}, snap.TasksErr
			}
			raw = []byte(newTasksHeader)
		}
		ts, _ := plan.ParseTasks(raw)
		if len(ts.Header) == 0 {
			return store.Change{}, usageErr(fmt.Errorf("plan %s: tasks.md has no table to add a row to", p.ID), "`taskie validate` says what is wrong with it")
		}
		id := ts.NextID()
		for snap.Exists(plan.TaskFile(id)) {
			id++ // a task file without its row: its id is not free
		}
		cells, err := o.cells(ts, title, deps, files)
		if err != nil {
			return store.Change{}, err
		}
		if err := ts.AppendRow(id, cells); err != nil {
			return store.Change{}, usageErr(err, "")
		}
		t, _ := ts.Find(id)
		added = *t
		body := fmt.Sprintf("# Task %d: %s\n", id, title)
		if d := strings.TrimSpace(o.description); d != "" {
			body += "\n" + d + "\n"
		}
		meta := events.Meta(events.TaskAddedMeta{Title: title, DependsOn: deps, Files: files})
		return store.Change{Actor: "cli", Reason: "task add",
			Files:  map[string][]byte{"tasks.md": ts.Bytes(), plan.TaskFile(id): []byte(body)},
			Events: []events.Event{{Event: eventTaskAdded, Task: strconv.Itoa(id), Actor: "cli", Reason: "task add", Meta: meta}}}, nil
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		// never moved: pending, as task list shows it
		rec := taskrec.Fold(taskrec.Input{Tasks: &plan.Tasks{Tasks: []plan.Task{added}}})[0]
		return writeJSON(o.s.Out, newTaskListView(rec))
	}
	fmt.Fprintf(o.s.Err, "task %d added: %s (%s)\n", added.ID, title, plan.TaskFile(added.ID))
	return nil
}

// cells maps the flags to the columns of the table; a flag whose column
// is missing is an error naming the columns there are.
func (o *taskAddOpts) cells(ts *plan.Tasks, title string, deps []int, files []string) (map[string]string, error) {
	cells := map[string]string{"Status": plan.StatusPending}
	titleCol, ok := ts.Column("title", "name", "task", "summary", "description")
	if !ok {
		return nil, usageErr(fmt.Errorf("tasks.md has no column for the title (Title, Name, Task, Summary or Description; columns: %s)", strings.Join(ts.Header, ", ")),
			"add a Title column to tasks.md")
	}
	cells[titleCol] = title
	if d := strings.TrimSpace(o.description); d != "" && !strings.ContainsAny(d, "\r\n") {
		if col, ok := ts.Column("description"); ok && col != titleCol {
			cells[col] = d
		}
	}
	need := func(set bool, value string, names ...string) error {
		if !set {
			return nil
		}
		col, ok := ts.Column(names...)
		if !ok {
			return usageErr(fmt.Errorf("tasks.md has no %s column (columns: %s)", names[0], strings.Join(ts.Header, ", ")),
				"add the column to tasks.md's header and separator, or leave out the flag")
		}
		cells[col] = value
		return nil
	}
	depCell := "-"
	if len(deps) > 0 {
		ids := make([]string, len(deps))
		for i, d := range deps {
			if _, ok := ts.Find(d); !ok {
				return nil, usageErr(fmt.Errorf("--deps: %v", unknownTaskErr(ts, d)), "")
			}
			ids[i] = strconv.Itoa(d)
		}
		depCell = strings.Join(ids, ", ")
	}
	if col := ts.DependsColumn(); col != "" && !o.setDeps {
		cells[col] = "-"
	}
	if err := need(o.setDeps, depCell, "Depends on", "dependencies", "deps", "depends", "depends-on"); err != nil {
		return nil, err
	}
	if err := need(o.setFiles, strings.Join(files, ", "), "Files"); err != nil {
		return nil, err
	}
	if err := need(o.setPrio, strings.TrimSpace(o.priority), "Priority"); err != nil {
		return nil, err
	}
	if err := need(o.setC, strings.TrimSpace(o.complexity), "Complexity"); err != nil {
		return nil, err
	}
	return cells, nil
}

// unknownTaskErr names an id that is not a task, and the ids that are.
func unknownTaskErr(ts *plan.Tasks, id int) error {
	ids := ts.IDs()
	known := make([]string, len(ids))
	for i, n := range ids {
		known[i] = strconv.Itoa(n)
	}
	if len(known) == 0 {
		return fmt.Errorf("unknown task %d: tasks.md has no tasks", id)
	}
	return fmt.Errorf("unknown task %d (known ids: %s)", id, strings.Join(known, ", "))
}

// parseDepsFlag reads --deps: task ids separated by commas or spaces.
func parseDepsFlag(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		id, err := domain.ParseTaskID(strings.TrimPrefix(f, "#"))
		if err != nil {
			return nil, usageErr(fmt.Errorf("--deps %q: %v", s, err), "give task ids separated by commas: --deps 1,2")
		}
		if n := int(id); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// splitList splits a comma- or space-separated flag value.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}
