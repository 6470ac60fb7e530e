package agentsim

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tenTasks is a plan of 10 tasks in 4 waves: {1,2,3}, {4,5,6}, {7,8},
// {9,10}, each task with a file of its own.
var tenTasks = []Task{
	{Deps: "-", Files: "step1.txt"}, {Deps: "-", Files: "step2.txt"}, {Deps: "-", Files: "step3.txt"},
	{Deps: "1", Files: "step4.txt"}, {Deps: "2", Files: "step5.txt"}, {Deps: "1,2", Files: "step6.txt"},
	{Deps: "4", Files: "step7.txt"}, {Deps: "5,6", Files: "step8.txt"},
	{Deps: "7", Files: "step9.txt"}, {Deps: "8", Files: "step10.txt"},
}

// tenTaskVerdicts: plan and tasks reviews pass; task 3 fails three code
// reviews, the CTO review that follows answers a guided retry, then it
// passes; tasks 5 and 8 fail once; every other review passes (the last
// step repeats, through the all-code review).
const tenTaskVerdicts = `PASS
PASS
PASS
PASS
# task 1, task 2
PASS
PASS
PASS
PASS
# task 3: three FAILs, the CTO, two PASSes
FAIL
FAIL
FAIL
CTO-RETRY check the error the reviews keep reporting
PASS
PASS
# task 4
PASS
PASS
# task 5
FAIL
PASS
PASS
# task 6, task 7
PASS
PASS
PASS
PASS
# task 8
FAIL
PASS
PASS
`

// TestTenTaskWaves plays a 10-task plan through the real Stop hook with a
// scripted reviewer, each task claimed for a worker before it starts (a
// plan run with claims: status shows its wave). After every stop each
// view of every task must agree (tasks.md's Status cell, `task list`,
// `query`, `status --json`'s counts, `groups`), and the wave must only
// grow; at each wave boundary, and when a task goes to the CTO, every
// per-task view is asked too and `taskie status` is written to the
// transcript: the test log, and the file TASKIE_WAVE_TRANSCRIPT names.
func TestTenTaskWaves(t *testing.T) {
	sb, a := sandbox(t, tenTaskVerdicts, "")
	if err := os.WriteFile(sb.PlanFile("p", "plan.md"), []byte("# Plan: ten steps in four waves\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Tasks = tenTasks
	a.ClaimAs = func(task string) string {
		n, _ := strconv.Atoi(task)
		return fmt.Sprintf("worker-%d", (n-1)%3+1)
	}
	// Task 7's first worker reports a failed attempt: its claim is
	// released, the task is ready again and goes to the next worker.
	a.BeforeStart = func(task string) error {
		if task != "7" {
			return nil
		}
		a.say("worker-3: taskie claim 7, then taskie task result 7 --status failed (a failed attempt: the claim is released, task 7 is ready again)")
		for _, c := range [][]string{{"claim", "7", "--as", "worker-3"}, {"task", "result", "7", "--status", "failed", "--as", "worker-3"}} {
			if _, err := a.Run(append(c, "--plan", a.Plan)...); err != nil {
				return err
			}
		}
		return nil
	}
	var transcript strings.Builder
	a.Out = &transcript // the play itself, between the snapshots
	fmt.Fprintf(&transcript, "# a 10-task plan in 4 waves played through the real Stop hook with a scripted reviewer\n# %s\n# (task 3 fails three code reviews and gets a CTO review; tasks 5 and 8 fail one; task 7's first worker reports a failed attempt)\n\n", Legend)
	var waves []string // the wave line of each snapshot, in order
	lastWave, ctoSeen := 0, false
	a.AfterStop = func(s Stop) error {
		if _, err := os.Stat(a.planPath("tasks.md")); err != nil {
			return nil // the plan review: no tasks yet
		}
		v, err := readViews(a)
		if err != nil {
			return err
		}
		for _, p := range v.disagreements() {
			t.Errorf("after stop #%d: %s", len(a.Stops), p)
		}
		snap := ""
		if w := v.status.Wave; w != nil {
			cur := w.Current
			if cur == 0 {
				cur = w.Total + 1 // every wave done: nothing may come after
			}
			switch {
			case cur < lastWave:
				t.Errorf("after stop #%d: wave went back from %d to %d", len(a.Stops), lastWave, cur)
			case cur != lastWave && cur > w.Total:
				snap = fmt.Sprintf("all %d waves done", w.Total)
			case cur != lastWave:
				snap = fmt.Sprintf("wave %d of %d begins", cur, w.Total)
			}
			lastWave = max(lastWave, cur)
		} else if lastWave > 0 {
			t.Errorf("after stop #%d: status no longer shows the wave", len(a.Stops))
		}
		if !ctoSeen && v.inState("cto_intervention") != "" {
			ctoSeen = true
			snap = fmt.Sprintf("task %s goes to the CTO (three failed code reviews)", v.inState("cto_intervention"))
		}
		if snap == "" {
			return nil
		}
		for _, p := range v.perTask(a) {
			t.Errorf("after stop #%d: %s", len(a.Stops), p)
		}
		out, err := a.Run("status", "--plan", a.Plan)
		if err != nil {
			return err
		}
		list, err := a.Run("task", "list", "--plan", a.Plan)
		if err != nil {
			return err
		}
		waves = append(waves, waveLine(out))
		fmt.Fprintf(&transcript, "\n=== %s (after stop #%d)\n$ taskie status\n%s$ taskie task list\n%s\n", snap, len(a.Stops), out, list)
		return nil
	}
	playErr := a.Play(80)
	if out, err := a.Run("status", "--plan", a.Plan); err == nil {
		fmt.Fprintf(&transcript, "\n=== the plan is complete\n$ taskie status\n%s", out)
	}
	t.Log("\n" + transcript.String())
	if path := os.Getenv("TASKIE_WAVE_TRANSCRIPT"); path != "" {
		if err := os.WriteFile(path, []byte(transcript.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	if playErr != nil {
		t.Fatal(playErr)
	}

	want := []string{"wave:    1 of 4", "wave:    1 of 4", "wave:    2 of 4", "wave:    3 of 4", "wave:    4 of 4", "wave:    all 4 done"}
	if diff := cmp.Diff(want, waves); diff != "" {
		t.Errorf("the wave at each snapshot (the CTO's is the second) (-want +got):\n%s", diff)
	}
	v, err := readViews(a)
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range v.list {
		if r.Status != "done" || r.State != "completed" {
			t.Errorf("task %s at the end: %s / %s, want done / completed", id, r.Status, r.State)
		}
	}
	if st, err := a.State(); err != nil || st["phase"] != "complete" {
		t.Errorf("final phase %v (%v), want complete", st["phase"], err)
	}
	if _, err := os.Stat(sb.PlanFile("p", "task-3-cto-1.md")); err != nil {
		t.Errorf("the CTO review of task 3 left no guidance file: %v", err)
	}
	if q := v.query["3"]; q.CTOAttempts != 1 {
		t.Errorf("task 3's CTO attempts = %d, want 1", q.CTOAttempts)
	}
	if out, err := a.Run("validate", "--plan", a.Plan); err != nil || strings.Contains(out, "warning") {
		t.Errorf("the finished plan does not validate clean: %v\n%s", err, out)
	}
	if out, err := a.Run("recover", "--check", "--plan", a.Plan); err != nil {
		t.Errorf("state.json differs from the replay of the log: %v\n%s", err, out)
	}
}

var waveRE = regexp.MustCompile(`(?m)^wave:.*$`)

func waveLine(status string) string { return waveRE.FindString(status) }

// listRow is one task of `taskie task list --json`.
type listRow struct {
	Task   string `json:"task"`
	Status string `json:"status"`
	State  string `json:"state"`
}

// queryRow is one task of `taskie query --json`.
type queryRow struct {
	Task        string `json:"task"`
	State       string `json:"state"`
	CTOAttempts int    `json:"cto_attempts"`
}

// statusView is the part of `taskie status --json` that counts tasks.
type statusView struct {
	Tasks struct {
		Done  int `json:"done"`
		Total int `json:"total"`
	} `json:"tasks"`
	ByStatus map[string]int `json:"tasks_by_status"`
	Wave     *struct {
		Current int `json:"current"`
		Total   int `json:"total"`
	} `json:"wave"`
}

// views is what every whole-plan view says about the tasks at one moment.
type views struct {
	cells  map[string]string // tasks.md's Status cell
	list   map[string]listRow
	query  map[string]queryRow
	groups map[string]string // task → status, for the tasks groups plans
	ready  []string          // the tasks ready lists
	deps   map[string][]string
	status statusView
}

func readViews(a *Agent) (*views, error) {
	v := &views{cells: map[string]string{}, list: map[string]listRow{}, query: map[string]queryRow{}, groups: map[string]string{}}
	data, err := os.ReadFile(a.planPath("tasks.md"))
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		c := strings.Split(l, "|")
		if len(c) > 3 {
			if id := strings.TrimSpace(c[1]); id != "" && id[0] >= '0' && id[0] <= '9' {
				v.cells[id] = strings.TrimSpace(c[2])
			}
		}
	}
	var list []struct {
		listRow
		DependsOn []string `json:"depends_on"`
	}
	var query []queryRow
	var ready []struct{ Task string }
	var groups struct {
		Waves []struct {
			Tasks []struct{ Task, Status string }
		}
	}
	for _, r := range []struct {
		args []string
		into any
	}{
		{[]string{"task", "list", "--json"}, &list},
		{[]string{"query", "--json"}, &query},
		{[]string{"status", "--json"}, &v.status},
		{[]string{"groups", "--json"}, &groups},
		{[]string{"ready", "--json"}, &ready},
	} {
		out, err := a.Run(append(r.args, "--plan", a.Plan)...)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(out), r.into); err != nil {
			return nil, fmt.Errorf("taskie %s: %v", strings.Join(r.args, " "), err)
		}
	}
	v.deps = map[string][]string{}
	for _, r := range list {
		v.list[r.Task], v.deps[r.Task] = r.listRow, r.DependsOn
	}
	for _, r := range ready {
		v.ready = append(v.ready, r.Task)
	}
	for _, r := range query {
		v.query[r.Task] = r
	}
	for _, w := range groups.Waves {
		for _, g := range w.Tasks {
			v.groups[g.Task] = g.Status
		}
	}
	return v, nil
}

// rendering is the Status cell a lifecycle state renders as (docs/lifecycle.md).
func rendering(state string) string {
	switch state {
	case "pending", "assigned":
		return "pending"
	case "completed":
		return "done"
	case "cto_intervention", "human_escalation":
		return "blocked"
	case "abandoned":
		return "cancelled"
	}
	return "in-progress"
}

// inState is the first task in state, "" when none is.
func (v *views) inState(state string) string {
	for i := 1; i <= len(v.list); i++ {
		if r := v.list[strconv.Itoa(i)]; r.State == state {
			return r.Task
		}
	}
	return ""
}

// disagreements lists every place two whole-plan views differ on a task.
func (v *views) disagreements() []string {
	var out []string
	counts := map[string]int{}
	for id, cell := range v.cells {
		counts[cell]++
		r, q := v.list[id], v.query[id]
		if r.Status != cell {
			out = append(out, fmt.Sprintf("task %s: tasks.md says %s, task list says %s", id, cell, r.Status))
		}
		if q.State != r.State {
			out = append(out, fmt.Sprintf("task %s: query says %s, task list says %s", id, q.State, r.State))
		}
		if want := rendering(q.State); cell != want {
			out = append(out, fmt.Sprintf("task %s: tasks.md says %s for lifecycle state %s (renders %s)", id, cell, q.State, want))
		}
		if g, ok := v.groups[id]; ok && g != cell {
			out = append(out, fmt.Sprintf("task %s: groups says %s, tasks.md %s", id, g, cell))
		}
		if _, ok := v.groups[id]; ok && q.State == "completed" {
			out = append(out, fmt.Sprintf("task %s: completed, yet groups plans it", id))
		}
	}
	for _, id := range v.ready {
		if st := v.query[id].State; st != "pending" {
			out = append(out, fmt.Sprintf("task %s: ready lists it in state %s", id, st))
		}
		for _, d := range v.deps[id] {
			if st := v.query[d].State; st != "completed" {
				out = append(out, fmt.Sprintf("task %s: ready lists it while its dependency %s is %s", id, d, st))
			}
		}
	}
	if len(v.list) != len(v.cells) || len(v.query) != len(v.cells) {
		out = append(out, fmt.Sprintf("tasks.md has %d tasks, task list %d, query %d", len(v.cells), len(v.list), len(v.query)))
	}
	if v.status.Tasks.Done != counts["done"] || v.status.Tasks.Total != len(v.cells) {
		out = append(out, fmt.Sprintf("status says %d/%d done, tasks.md %d/%d", v.status.Tasks.Done, v.status.Tasks.Total, counts["done"], len(v.cells)))
	}
	if diff := cmp.Diff(counts, v.status.ByStatus); diff != "" {
		out = append(out, "status's tasks by status differ from tasks.md's cells (-tasks.md +status):\n"+diff)
	}
	return out
}

// perTask asks each task's own views (`query --task T`, `task show T`,
// `context T`) and lists where they differ from the whole-plan views.
func (v *views) perTask(a *Agent) []string {
	var out []string
	for id, r := range v.list {
		var q []queryRow
		var show struct {
			Status    string
			Lifecycle *struct{ State string }
		}
		var ctx struct{ Status string }
		for _, c := range []struct {
			args []string
			into any
		}{
			{[]string{"query", "--task", id, "--json"}, &q},
			{[]string{"task", "show", id, "--json"}, &show},
			{[]string{"context", id, "--json"}, &ctx},
		} {
			js, err := a.Run(append(c.args, "--plan", a.Plan)...)
			if err == nil {
				err = json.Unmarshal([]byte(js), c.into)
			}
			if err != nil {
				out = append(out, fmt.Sprintf("task %s: %v", id, err))
			}
		}
		if len(q) != 1 || q[0].State != r.State {
			out = append(out, fmt.Sprintf("task %s: query --task says %+v, task list %s", id, q, r.State))
		}
		if show.Status != r.Status || show.Lifecycle == nil || show.Lifecycle.State != r.State {
			out = append(out, fmt.Sprintf("task %s: task show says %s / %+v, task list %s / %s", id, show.Status, show.Lifecycle, r.Status, r.State))
		}
		if ctx.Status != r.Status {
			out = append(out, fmt.Sprintf("task %s: context says %s, task list %s", id, ctx.Status, r.Status))
		}
	}
	return out
}
