package workflow

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/state"
)

// Route actions that are not agent actions.
const (
	EndTurn = "end-turn" // a review is due: end the turn and the Stop hook runs it
	Nothing = "none"     // the plan is complete
	Resume  = "resume"   // automation is paused
	Wait    = "wait"     // a review is running right now
)

// TaskFact is one row of tasks.md.
type TaskFact struct {
	ID     int
	Status string // lower-case
}

// RouteFacts is what `taskie continue` looks at.
type RouteFacts struct {
	State    *state.State // nil when the plan has no state.json
	HasPlan  bool         // plan.md exists
	HasTasks bool         // tasks.md exists
	Tasks    []TaskFact
	// Subtasks holds the statuses (lower-case) of the current task's subtasks.
	Subtasks []string
	// ReviewExists and PostExists tell whether iteration n of a review (for
	// task t when it is a code review) has its review / post-review file.
	ReviewExists, PostExists func(review string, task, n int) bool
	// Latest returns the highest review iteration on disk (0 = none).
	Latest func(review string, task int) int
}

// Route is the answer of `taskie continue`.
type Route struct {
	Action  string   `json:"action"`
	Task    string   `json:"task,omitempty"`
	Why     string   `json:"why"`
	Command string   `json:"command,omitempty"` // taskie command to run first
	Guess   bool     `json:"guess,omitempty"`   // reconstructed from files, no state.json
	Options []string `json:"options,omitempty"` // ambiguous: the actions that fit
	// Repair is a state to record first (crash recovery); nil = none.
	Repair *state.State `json:"-"`
	// For a post-review: the review to address and the file to write,
	// filled in by callers that know the plan's paths.
	ReviewFile string `json:"review_file,omitempty"`
	PostFile   string `json:"post_review_file,omitempty"`
}

// Text renders a route the way `taskie continue` prints it.
func (r Route) Text() string {
	var b strings.Builder
	action := r.Action
	if r.Task != "" {
		action += " (task " + r.Task + ")"
	}
	fmt.Fprintf(&b, "next: %s\n", action)
	fmt.Fprintf(&b, "why:  %s\n", r.Why)
	if r.Command != "" {
		fmt.Fprintf(&b, "run:  %s\n", r.Command)
	}
	if len(r.Options) > 1 {
		fmt.Fprintf(&b, "options: %s\n", strings.Join(r.Options, " "))
	}
	if r.ReviewFile != "" {
		fmt.Fprintf(&b, "review file:      %s\n", r.ReviewFile)
	}
	if r.PostFile != "" {
		fmt.Fprintf(&b, "post-review file: %s\n", r.PostFile)
	}
	if len(r.Options) <= 1 && (IsPhase(r.Action) || IsAdvanceTarget(r.Action) || r.Action == "add-task") {
		fmt.Fprintf(&b, "action: /taskie:%s\n", r.Action)
	}
	return b.String()
}

// Decide routing for a plan (SPEC §8).
func Continue(f RouteFacts, models []string) Route {
	s := f.State
	switch {
	case s == nil:
		return guess(f)
	case !s.IsEnabled():
		return Route{Action: Resume, Command: "taskie resume", Why: "automation is paused for this plan"}
	case s.Next() == Complete:
		n := s.Clone()
		n.Phase, n.NextPhase = Complete, nil
		return Route{Action: Nothing, Repair: n, Why: "the all-code review passed: the plan is complete (recorded)"}
	case s.Phase == Complete && s.Next() == "":
		return Route{Action: Nothing, Why: "the plan is complete; add a task with /taskie:add-task to go on"}
	case IsPostReview(s.Next()):
		return postReviewDue(f, s)
	case IsReview(s.Next()):
		return reviewDue(f, s, models)
	case IsAdvanceTarget(s.Next()):
		return nextTask(f, s)
	case s.Next() != "":
		return Route{Action: s.Next(), Task: s.Task(), Why: fmt.Sprintf("next_phase is %s", s.Next())}
	}
	return standalone(f, s)
}

func taskNum(s *state.State) int {
	t, _ := strconv.Atoi(s.Task())
	return t
}

// postReviewDue: the hook blocked and the agent owes a post-review.
func postReviewDue(f RouteFacts, s *state.State) Route {
	post, review, n := s.Next(), ReviewOf(s.Next()), s.Iteration()
	if f.PostExists(review, taskNum(s), n) {
		r := s.Clone()
		r.Phase, r.NextPhase = post, state.Str(review)
		return Route{Action: EndTurn, Task: s.Task(), Repair: r,
			Why: fmt.Sprintf("the %s for iteration %d is written but was not recorded (taskie continue records it); end your turn and the Stop hook runs %s iteration %d", post, n, review, n+1)}
	}
	return Route{Action: post, Task: s.Task(), Command: "taskie done " + post,
		Why: fmt.Sprintf("%s iteration %d found problems or needs one more clean review; address it, write the post-review file, then run the command", review, n)}
}

// reviewDue: next_phase is a review; either it is due or a crash left its
// files ahead of state.json.
func reviewDue(f RouteFacts, s *state.State, models []string) Route {
	review, t, n := s.Next(), taskNum(s), s.Iteration()+1
	if f.ReviewExists(review, t, n) {
		r := s.Clone()
		r.PhaseIteration, r.ConsecutiveClean, r.ReviewModel = state.Int(n), 0, NextModel(models, s.ReviewModel)
		if f.PostExists(review, t, n) {
			r.Phase, r.NextPhase = PostReview(review), state.Str(review)
			return Route{Action: EndTurn, Task: s.Task(), Repair: r,
				Why: fmt.Sprintf("%s iteration %d and its post-review exist but state.json was not updated (taskie continue records it; the verdict is lost); end your turn and the Stop hook runs iteration %d", review, n, n+1)}
		}
		r.Phase, r.NextPhase = review, state.Str(PostReview(review))
		return Route{Action: PostReview(review), Task: s.Task(), Repair: r, Command: "taskie done " + PostReview(review),
			Why: fmt.Sprintf("%s iteration %d was written but state.json was not updated (taskie continue records it; the verdict is lost); do the post-review", review, n)}
	}
	if IsImplementing(s.Phase) && unfinished(f.Subtasks) {
		return Route{Action: ContinueTask, Task: s.Task(), Command: "taskie done " + s.Phase,
			Why: fmt.Sprintf("task %s has unfinished subtasks; finish them, then run the command and end your turn for the code review", s.Task())}
	}
	return Route{Action: EndTurn, Task: s.Task(),
		Why: fmt.Sprintf("%s iteration %d is due: end your turn and the Stop hook runs it", review, n)}
}

func unfinished(subtasks []string) bool {
	for _, st := range subtasks {
		if st != "done" && st != "completed" && st != "cancelled" {
			return true
		}
	}
	return false
}

func firstPending(tasks []TaskFact, exclude int) (int, bool) {
	for _, t := range tasks {
		if t.Status == "pending" && t.ID != exclude {
			return t.ID, true
		}
	}
	return 0, false
}

func nextTask(f RouteFacts, s *state.State) Route {
	id, ok := firstPending(f.Tasks, taskNum(s))
	if !ok {
		return Route{Action: AllCodeReview, Options: []string{AllCodeReview, "add-task"},
			Why: fmt.Sprintf("next_phase is %s but no pending task remains; run the all-code review or add a task", s.Next())}
	}
	ts := strconv.Itoa(id)
	return Route{Action: s.Next(), Task: ts, Command: "taskie start " + ts + " --auto",
		Why: fmt.Sprintf("the previous review cycle passed; task %s is the next pending task", ts)}
}

// standalone: next_phase is null, so only the phase and files say what's next.
func standalone(f RouteFacts, s *state.State) Route {
	p := s.Phase
	if IsImplementing(p) && unfinished(f.Subtasks) {
		return Route{Action: ContinueTask, Task: s.Task(), Why: fmt.Sprintf("task %s has unfinished subtasks", s.Task())}
	}
	if IsReview(p) {
		if n := f.Latest(p, taskNum(s)); n > 0 && !f.PostExists(p, taskNum(s), n) {
			return Route{Action: PostReview(p), Task: s.Task(), Why: fmt.Sprintf("%s iteration %d has no post-review yet", p, n)}
		}
	}
	opts := optionsAfter(p, s.TDD)
	return Route{Action: opts[0], Task: s.Task(), Options: opts,
		Why: fmt.Sprintf("standalone mode (next_phase is null) after %s: more than one action fits; pick one", p)}
}

// optionsAfter lists the actions that can follow a phase.
func optionsAfter(p string, tdd bool) []string {
	switch Stage(p) {
	case "Planning", "Plan review":
		return []string{PlanReview, CreateTasks}
	case "Task creation", "Task review":
		return []string{TasksReview, TaskTarget(tdd)}
	case "Implementation":
		return []string{CodeReview, ContinueTask, TaskTarget(tdd)}
	case "Final review":
		return []string{AllCodeReview, "add-task"}
	}
	return []string{"add-task"}
}

// guess reconstructs the next action from the files alone.
func guess(f RouteFacts) Route {
	r := guessFiles(f)
	r.Guess = true
	r.Why = "no state.json, best guess from the files: " + r.Why
	return r
}

func guessFiles(f RouteFacts) Route {
	if !f.HasPlan {
		return Route{Action: NewPlan, Why: "plan.md does not exist"}
	}
	if !f.HasTasks {
		if n := f.Latest(PlanReview, 0); n > 0 && !f.PostExists(PlanReview, 0, n) {
			return Route{Action: PostPlanReview, Why: fmt.Sprintf("plan review %d has no post-review", n)}
		}
		return Route{Action: PlanReview, Options: []string{PlanReview, CreateTasks}, Why: "plan.md exists but tasks.md does not"}
	}
	if n := f.Latest(TasksReview, 0); n > 0 && !f.PostExists(TasksReview, 0, n) {
		return Route{Action: PostTasksReview, Why: fmt.Sprintf("tasks review %d has no post-review", n)}
	}
	for _, t := range f.Tasks {
		if t.Status != "in-progress" {
			continue
		}
		ts := strconv.Itoa(t.ID)
		if n := f.Latest(CodeReview, t.ID); n > 0 && !f.PostExists(CodeReview, t.ID, n) {
			return Route{Action: PostCodeReview, Task: ts, Why: fmt.Sprintf("task %s review %d has no post-review", ts, n)}
		}
		return Route{Action: ContinueTask, Task: ts, Command: "taskie start " + ts, Why: fmt.Sprintf("task %s is in progress", ts)}
	}
	if id, ok := firstPending(f.Tasks, 0); ok {
		ts := strconv.Itoa(id)
		return Route{Action: CompleteTask, Task: ts, Options: []string{CompleteTask, TasksReview},
			Why: fmt.Sprintf("task %s is the first pending task", ts)}
	}
	if n := f.Latest(AllCodeReview, 0); n > 0 && !f.PostExists(AllCodeReview, 0, n) {
		return Route{Action: PostAllCodeReview, Why: fmt.Sprintf("all-code review %d has no post-review", n)}
	}
	return Route{Action: AllCodeReview, Options: []string{AllCodeReview, "add-task"}, Why: "no task is pending or in progress"}
}
