// Package agentsim simulates a coding agent driving taskie the way Claude
// Code does: it stops, reacts to a block by doing the post-review and
// stopping again with stop_hook_active true, and on a new turn follows
// `taskie continue`. The demo and the loop tests use it with the real
// taskie binary and a fake reviewer.
package agentsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Agent is one simulated agent session in a project directory.
type Agent struct {
	Taskie  string   // path of the taskie binary
	Dir     string   // project root
	Env     []string // environment for taskie (PATH with the fake reviewer)
	Session string   // session_id sent to the hook
	Plan    string   // plan id the agent works on
	Out     io.Writer
	// Transcript, when set, is sent as transcript_path.
	Transcript string
	Stops      []Stop
	// Tasks is the plan create-tasks writes; nil: DemoTasks.
	Tasks []Task
	// ClaimAs, when set, names the agent each task is claimed for
	// (`taskie claim T --as NAME`) before the agent starts it, as an
	// orchestrator that hands tasks out does: it makes a plan "run with
	// claims", whose status shows the current wave.
	ClaimAs func(task string) string
	// BeforeStart, when set, runs before the agent claims and starts a
	// task: what other agents did to it first (a failed attempt, say).
	BeforeStart func(task string) error
	// AfterStop, when set, runs after each stop of Play; an error ends the play.
	AfterStop func(Stop) error
}

// Task is one row of the tasks.md createTasks writes.
type Task struct {
	Deps  string // "-" or ids, comma-separated
	Files string // the Files cell ("-": none)
}

// DemoTasks is the demo's plan: two steps, the second after the first.
var DemoTasks = []Task{{Deps: "-", Files: "step1.txt"}, {Deps: "1", Files: "step2.txt"}}

// Stop is the answer of one `taskie hook stop`.
type Stop struct {
	Active  bool
	Code    int
	Block   bool
	Reason  string // block reason (stderr)
	Message string // systemMessage on allow
	Stdout  string
}

// Run runs a taskie command in the project and returns its stdout.
func (a *Agent) Run(args ...string) (string, error) {
	cmd := exec.Command(a.Taskie, args...)
	cmd.Dir, cmd.Env = a.Dir, a.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("taskie %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// StopHook sends one Stop hook input and decodes the decision.
func (a *Agent) StopHook(active bool) (Stop, error) {
	in, _ := json.Marshal(map[string]any{
		"session_id": a.Session, "cwd": a.Dir, "stop_hook_active": active,
		"hook_event_name": "Stop", "transcript_path": a.Transcript,
	})
	cmd := exec.Command(a.Taskie, "hook", "stop")
	cmd.Dir, cmd.Env = a.Dir, a.Env
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	s := Stop{Active: active, Stdout: out.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		s.Code, s.Block, s.Reason = 2, true, strings.TrimSpace(errb.String())
	case err != nil:
		return s, fmt.Errorf("hook stop: %v: %s", err, errb.String())
	}
	if !s.Block && strings.TrimSpace(out.String()) != "" {
		var msg struct {
			SystemMessage string `json:"systemMessage"`
		}
		if err := json.Unmarshal(out.Bytes(), &msg); err != nil {
			return s, fmt.Errorf("hook stdout is not one JSON object: %q", out.String())
		}
		s.Message = msg.SystemMessage
	}
	a.Stops = append(a.Stops, s)
	a.say("stop #%d (stop_hook_active=%v): %s", len(a.Stops), active, s.summary())
	return s, nil
}

// Legend is the demo's vocabulary, printed before the play: the words of
// the raw hook decisions and agent actions that follow.
const Legend = "legend: stop #N = the agent ends its turn and the Stop hook decides; " +
	"BLOCK = keep working; allow = the turn ends; stop_hook_active=true = a stop right after a block; " +
	"review N = the Nth review of a cycle (2 clean in a row pass it); " +
	"end-turn N = task N is written: stop so the review that is due runs"

// summary is the raw decision followed by what it means in plain words.
func (s Stop) summary() string {
	if s.Block {
		return "BLOCK (keep working)  " + firstLine(s.Reason)
	}
	if s.Message == "" {
		return "allow (the turn ends)"
	}
	return "allow (the turn ends)  " + firstLine(s.Message)
}

// explain says in plain words what an action of `taskie continue` makes the agent do.
func explain(r Route) string {
	switch {
	case strings.HasPrefix(r.Action, "post-"):
		return "(addresses the review's findings, writes the post-review file, records the phase)"
	case r.Action == "create-tasks":
		return "(writes tasks.md and one file per task)"
	case r.Action == "complete-task" || r.Action == "complete-task-tdd":
		return "(starts task " + r.Task + " and writes its code)"
	case r.Action == "continue-task":
		return "(goes on writing task " + r.Task + "'s code)"
	case r.Action == "end-turn":
		return "(nothing to write: it ends its turn so the Stop hook runs the review that is due)"
	}
	return ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func (a *Agent) say(format string, args ...any) {
	if a.Out != nil {
		fmt.Fprintf(a.Out, format+"\n", args...)
	}
}

// Route is the part of `taskie continue --json` the agent reads.
type Route struct {
	Action  string `json:"action"`
	Task    string `json:"task"`
	Command string `json:"command"`
}

// Continue asks taskie what to do next.
func (a *Agent) Continue() (Route, error) {
	out, err := a.Run("continue", "--plan", a.Plan, "--json")
	if err != nil {
		return Route{}, err
	}
	var r Route
	return r, json.Unmarshal([]byte(out), &r)
}

// State reads state.json as a generic map.
func (a *Agent) State() (map[string]any, error) {
	data, err := os.ReadFile(a.planPath("state.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

func (a *Agent) planPath(name string) string {
	return filepath.Join(a.Dir, ".taskie", "plans", a.Plan, name)
}

func (a *Agent) write(name, text string) error {
	return os.WriteFile(a.planPath(name), []byte(text), 0o644)
}

// Act performs one action the way the plugin's action prompts tell an agent to.
func (a *Agent) Act(r Route) error {
	a.say("agent: %s", strings.Join(nonEmpty(r.Action, r.Task, explain(r)), " "))
	switch {
	case strings.HasPrefix(r.Action, "post-"):
		return a.postReview(r.Action)
	case r.Action == "create-tasks":
		return a.createTasks()
	case r.Action == "complete-task" || r.Action == "complete-task-tdd":
		if a.BeforeStart != nil {
			if err := a.BeforeStart(r.Task); err != nil {
				return err
			}
		}
		if a.ClaimAs != nil {
			who := a.ClaimAs(r.Task)
			a.say("agent: taskie claim %s --as %s (hands the task to %s)", r.Task, who, who)
			if _, err := a.Run("claim", r.Task, "--as", who, "--plan", a.Plan); err != nil {
				return err
			}
		}
		if _, err := a.Run("start", r.Task, "--auto", "--plan", a.Plan); err != nil {
			return err
		}
		return a.implement(r.Task)
	case r.Action == "continue-task":
		return a.implement(r.Task)
	case r.Action == "end-turn", r.Action == "none":
		return nil
	}
	return fmt.Errorf("agent does not know action %q", r.Action)
}

func nonEmpty(words ...string) []string {
	var out []string
	for _, w := range words {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// postReview writes the post-review file for the current iteration and records it.
func (a *Agent) postReview(post string) error {
	st, err := a.State()
	if err != nil {
		return err
	}
	n := int(num(st["phase_iteration"]))
	var name string
	switch post {
	case "post-plan-review":
		name = fmt.Sprintf("plan-post-review-%d.md", n)
	case "post-tasks-review":
		name = fmt.Sprintf("tasks-post-review-%d.md", n)
	case "post-code-review":
		name = fmt.Sprintf("task-%v-post-review-%d.md", st["current_task"], n)
	case "post-all-code-review":
		name = fmt.Sprintf("all-code-post-review-%d.md", n)
	}
	if err := a.write(name, "# Post-review\n\nAddressed every finding.\n"); err != nil {
		return err
	}
	_, err = a.Run("done", post, "--plan", a.Plan)
	return err
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

func (a *Agent) createTasks() error {
	tasks := a.Tasks
	if tasks == nil {
		tasks = DemoTasks
	}
	var b strings.Builder
	b.WriteString("| Id | Status | Title | Depends on | Files |\n|----|--------|-------|------------|-------|\n")
	for i, t := range tasks {
		id := i + 1
		fmt.Fprintf(&b, "| %d | pending | Step %d of the demo | %s | %s |\n", id, id, t.Deps, t.Files)
		task := fmt.Sprintf("# Task %d: step %d\n\n### Subtask %d.1: write it\n- **Status**: pending\n", id, id, id)
		if err := a.write(fmt.Sprintf("task-%d.md", id), task); err != nil {
			return err
		}
	}
	if err := a.write("tasks.md", b.String()); err != nil {
		return err
	}
	_, err := a.Run("done", "create-tasks", "--plan", a.Plan)
	return err
}

// implement "writes code" and marks the task's subtasks done.
func (a *Agent) implement(task string) error {
	code := filepath.Join(a.Dir, "step"+task+".txt")
	if err := os.WriteFile(code, []byte("implemented step "+task+"\n"), 0o644); err != nil {
		return err
	}
	data, err := os.ReadFile(a.planPath("task-" + task + ".md"))
	if err != nil {
		return err
	}
	return a.write("task-"+task+".md", strings.ReplaceAll(string(data), "**Status**: pending", "**Status**: done"))
}

// Play drives the plan to completion as a user who answers every advance
// with "continue": a block is handled in the same turn (the next stop has
// stop_hook_active true); an allow ends the turn, and the next turn follows
// `taskie continue`. It stops after maxStops stops.
func (a *Agent) Play(maxStops int) error {
	active := false
	for len(a.Stops) < maxStops {
		s, err := a.StopHook(active)
		if err != nil {
			return err
		}
		if a.AfterStop != nil {
			if err := a.AfterStop(s); err != nil {
				return err
			}
		}
		r, err := a.Continue()
		if err != nil {
			return err
		}
		if !s.Block && r.Action == "none" {
			return nil
		}
		if !s.Block {
			a.say("user: /taskie:continue-plan (a new turn; with autopilot on, the hook would have blocked and the agent gone on by itself)")
		}
		if err := a.Act(r); err != nil {
			return err
		}
		active = s.Block
	}
	return fmt.Errorf("plan not complete after %d stops", maxStops)
}
