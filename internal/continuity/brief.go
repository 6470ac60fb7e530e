package continuity

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Budget is the most bytes Brief.Text returns: a fresh session's context
// stays under 2 KB (docs/continuity.md).
const Budget = 2000

// RecentSessions is how many progress entries the context shows.
const RecentSessions = 2

// Brief is what a fresh session needs to resume work on a plan and one of
// its tasks. Paths are relative to the project root. Context fills it;
// Text renders it within Budget.
type Brief struct {
	Plan      string       `json:"plan"`
	HasState  bool         `json:"has_state"`
	Phase     domain.Phase `json:"phase,omitempty"`
	NextPhase domain.Phase `json:"next_phase,omitempty"`
	Paused    bool         `json:"paused,omitempty"`
	TasksDone int          `json:"tasks_done"`  // tasks.md rows whose status is done
	Tasks     int          `json:"tasks_total"` // tasks.md rows

	Task       domain.TaskID `json:"task,string,omitempty"` // 0: none; written "3"
	TaskSource string        `json:"task_source,omitempty"` // argument, current_task, in-progress, next pending
	Title      string        `json:"title,omitempty"`
	Status     string        `json:"status,omitempty"` // from tasks.md
	TaskFile   string        `json:"task_file,omitempty"`
	HasFile    bool          `json:"task_file_exists,omitempty"`
	// FileProblem says why an existing task file was not read (a link out
	// of the repository, a FIFO, too large); its content is then unknown.
	FileProblem string       `json:"task_file_problem,omitempty"`
	Reqs        string       `json:"requirements,omitempty"`
	Subtasks    []SubtaskRef `json:"subtasks,omitempty"`
	Criteria    []Criterion  `json:"criteria,omitempty"`
	Inputs      []ChainInput `json:"chain_inputs,omitempty"`
	Recent      []Session    `json:"recent_progress,omitempty"`
	Sessions    int          `json:"sessions"` // number of the last session, archived ones included

	Next workflow.Route `json:"next_step"`
	// RepairPending: state.json lags behind the files; `taskie continue`
	// records the repair, the context never writes.
	RepairPending bool   `json:"repair_pending,omitempty"`
	Links         []Link `json:"links,omitempty"`
}

// SubtaskRef is a subtask's id, title and status.
type SubtaskRef struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// ChainInput is the chain output of a task this one depends on.
type ChainInput struct {
	Task   domain.TaskID `json:"task,string"` // written "3"
	Title  string        `json:"title,omitempty"`
	Status string        `json:"status,omitempty"`
	Path   string        `json:"path"`
	Output *ChainOutput  `json:"output,omitempty"` // nil: not written yet
	// Problem says why the dependency's task file was not read.
	Problem string `json:"problem,omitempty"`
}

// Link names a document the context points to instead of embedding it.
type Link struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// Part is one part of the rendered context.
type Part struct {
	Name string `json:"name"`
	Text string `json:"-"`
	Size int    `json:"bytes"`      // bytes in the context
	Full int    `json:"full_bytes"` // bytes before clipping
}

// Clipped reports whether the part was shortened to fit the budget.
func (p Part) Clipped() bool { return p.Size < p.Full }

// Text renders the context within Budget.
func (b *Brief) Text() string {
	var s strings.Builder
	for _, p := range b.Parts(Budget) {
		s.WriteString(p.Text)
	}
	return s.String()
}

// partRenderer renders a part within limit bytes.
type partRenderer struct {
	name   string
	render func(limit int) string
}

// Parts renders each part of the context so that together they fit in
// budget bytes: parts smaller than a fair share keep all their text, the
// rest share what is left (and link to the full text).
func (b *Brief) Parts(budget int) []Part {
	rs := []partRenderer{
		{"header", b.header}, {"task", b.task}, {"criteria", b.criteria},
		{"chain-inputs", b.inputs}, {"progress", b.progress},
		{"next-step", b.nextStep}, {"links", b.links},
	}
	full := make([]int, len(rs))
	for i, r := range rs {
		full[i] = len(r.render(math.MaxInt))
	}
	caps := fit(full, budget)
	out := make([]Part, 0, len(rs))
	for i, r := range rs {
		t := r.render(caps[i])
		if full[i] == 0 {
			continue
		}
		out = append(out, Part{Name: r.name, Text: t, Size: len(t), Full: full[i]})
	}
	return out
}

func (b *Brief) header(limit int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "taskie plan %s: ", b.Plan)
	switch {
	case !b.HasState:
		s.WriteString("no state.json (standalone)")
	default:
		fmt.Fprintf(&s, "phase %s", b.Phase)
		if b.NextPhase != "" {
			fmt.Fprintf(&s, " → next %s (automated)", b.NextPhase)
		} else {
			s.WriteString(" (standalone)")
		}
	}
	if b.Paused {
		s.WriteString("; automation PAUSED")
	}
	if b.Tasks > 0 {
		fmt.Fprintf(&s, "; %d of %d tasks done", b.TasksDone, b.Tasks)
	}
	s.WriteString(".\n")
	return clipText(s.String(), limit, "…\n")
}

func (b *Brief) task(limit int) string {
	switch {
	case b.Task == 0 && b.Tasks == 0:
		return ""
	case b.Task == 0:
		return clipText("No task is current, in progress or pending.\n", limit, "…\n")
	}
	var head strings.Builder
	fmt.Fprintf(&head, "Task %s", b.Task)
	if b.Title != "" {
		fmt.Fprintf(&head, ": %s", b.Title)
	}
	if b.Status != "" {
		fmt.Fprintf(&head, " [%s]", b.Status)
	}
	if b.TaskSource != "" && b.TaskSource != "argument" {
		fmt.Fprintf(&head, " (%s)", b.TaskSource)
	}
	if b.FileProblem != "" {
		fmt.Fprintf(&head, "; %s was not read: %s (`taskie validate`)\n", b.TaskFile, b.FileProblem)
		return clipText(head.String(), limit, "…\n")
	}
	if !b.HasFile {
		fmt.Fprintf(&head, "; %s does not exist yet\n", b.TaskFile)
		return clipText(head.String(), limit, "…\n")
	}
	fmt.Fprintf(&head, " — %s\n", b.TaskFile)
	h := clipText(head.String(), limit, "…\n")
	sub := b.subtaskLine()
	rest := limit - len(h) - len(sub)
	if b.Reqs == "" || rest < 40 {
		if len(h)+len(sub) <= limit {
			return h + sub
		}
		return h
	}
	return h + clipText(b.Reqs+"\n", rest, "… (see "+b.TaskFile+")\n") + sub
}

// subtaskLine summarises the subtasks: how many are done and the first
// one that is not.
func (b *Brief) subtaskLine() string {
	if len(b.Subtasks) == 0 {
		return ""
	}
	done := 0
	var next *SubtaskRef
	for i, st := range b.Subtasks {
		if finished(st.Status) {
			done++
		} else if next == nil {
			next = &b.Subtasks[i]
		}
	}
	line := fmt.Sprintf("Subtasks: %d of %d done", done, len(b.Subtasks))
	if next != nil {
		line += fmt.Sprintf("; next %s %s (%s)", next.ID, clipText(next.Title, 80, "…"), orValue(next.Status, "no status"))
	}
	return line + ".\n"
}

func finished(status string) bool {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "done", "completed", "cancelled":
		return true
	}
	return false
}

func orValue(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

func (b *Brief) criteria(limit int) string {
	if b.Task == 0 || !b.HasFile {
		return ""
	}
	var open []string
	for _, c := range b.Criteria {
		if !c.Done {
			open = append(open, fmt.Sprintf("  %d. [ ] %s", c.N, clipText(c.Text, 200, "…")))
		}
	}
	switch {
	case len(b.Criteria) == 0:
		return clipText(fmt.Sprintf("No acceptance criteria in %s.\n", b.TaskFile), limit, "…\n")
	case len(open) == 0:
		return clipText(fmt.Sprintf("All %d acceptance criteria are checked: write the chain output (`taskie task output %s < output.md`).\n",
			len(b.Criteria), b.Task), limit, "…\n")
	}
	head := fmt.Sprintf("Unchecked criteria (%d of %d; once its test passes: `taskie task check %s <n>`):",
		len(open), len(b.Criteria), b.Task)
	return clipList(head, open, limit, "  … %d more (`taskie task criteria "+b.Task.String()+"`)")
}

func (b *Brief) inputs(limit int) string {
	if b.Task == 0 || len(b.Inputs) == 0 {
		return ""
	}
	items := make([]string, len(b.Inputs))
	for i, in := range b.Inputs {
		items[i] = in.line()
	}
	return clipEach("Chain inputs (Depends on):", items, limit, func(i int) string {
		return "… (see " + b.Inputs[i].Path + ")"
	})
}

// line renders one chain input on one or two lines.
func (in ChainInput) line() string {
	s := "  - task " + in.Task.String()
	if in.Title != "" {
		s += " " + quote(clipText(in.Title, 80, "…"))
	}
	if in.Status != "" {
		s += " [" + in.Status + "]"
	}
	if in.Problem != "" {
		return s + ": " + in.Path + " was not read: " + in.Problem
	}
	if in.Output == nil {
		return s + ": no chain output yet"
	}
	s += ": " + oneLine(in.Output.Summary)
	if in.Output.Downstream != "" {
		s += "\n    For downstream: " + oneLine(in.Output.Downstream)
	}
	return s
}

func quote(s string) string { return "\u201c" + s + "\u201d" }

// oneLine joins a text's lines with spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (b *Brief) progress(limit int) string {
	if b.Task == 0 {
		return ""
	}
	cmd := fmt.Sprintf("`taskie task note %s --did … --issues … --next …`", b.Task)
	if len(b.Recent) == 0 {
		return clipText("No progress entries yet; before ending the session add one: "+cmd+".\n", limit, "…\n")
	}
	items := make([]string, len(b.Recent))
	for i, s := range b.Recent {
		items[i] = s.line()
	}
	head := fmt.Sprintf("Last progress (%d of %d sessions; before ending: %s):", len(b.Recent), b.Sessions, cmd)
	return clipEach(head, items, limit, func(int) string { return "… (see " + b.TaskFile + ")" })
}

// line renders a session on one line.
func (s Session) line() string {
	out := fmt.Sprintf("  - Session %d", s.N)
	if s.TS != "" {
		out += " (" + s.TS + ")"
	}
	if s.Entry == (Entry{}) {
		return out + ": " + oneLine(s.Text)
	}
	out += ": Did: " + oneLine(s.Did)
	if s.Issues != "" && !strings.EqualFold(s.Issues, "none") {
		out += "; Issues: " + oneLine(s.Issues)
	}
	if s.Next != "" && !strings.EqualFold(s.Next, "none") {
		out += "; Next: " + oneLine(s.Next)
	}
	return out
}

// nextStep says the next step as `taskie continue` does.
func (b *Brief) nextStep(limit int) string {
	var s strings.Builder
	s.WriteString(b.Next.Text())
	if b.RepairPending {
		s.WriteString("note: state.json lags behind the files; `taskie continue` records the repair\n")
	}
	return clipText(s.String(), limit, "… (run `taskie continue`)\n")
}

func (b *Brief) links(limit int) string {
	if len(b.Links) == 0 {
		return ""
	}
	// Files of one directory share it: "dir/: a.md, b.md".
	var dirs []string
	names := map[string][]string{}
	for _, l := range b.Links {
		dir, name := path.Split(l.Path)
		if _, ok := names[dir]; !ok {
			dirs = append(dirs, dir)
		}
		names[dir] = append(names[dir], name)
	}
	groups := make([]string, len(dirs))
	for i, d := range dirs {
		if len(names[d]) == 1 {
			groups[i] = d + names[d][0]
		} else {
			groups[i] = d + ": " + strings.Join(names[d], ", ")
		}
	}
	return clipText("Read only if needed: "+strings.Join(groups, "; ")+".\n", limit, "…\n")
}
