package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
)

// Route actions that are not phases. A Route's Action is a string because
// it holds either a phase (or advance target) the agent runs as an action
// (/taskie:<phase>, $taskie-<phase> in Codex), one of these, or "add-task".
const (
	EndTurn = "end-turn" // a review is due: end the turn and the Stop hook runs it
	AddTask = "add-task" // the agent adds a task (the add-task action)
	Nothing = "none"     // the plan is complete
	Resume  = "resume"   // automation is paused
	Human   = "human"    // the review cycle stopped for a human decision
	Wait    = "wait"     // a review is running right now
	Fix     = "fix"      // state.json holds an illegal value a human must fix
)

// Agent is the coding agent taskie talks to: it decides how a message
// names a taskie action.
type Agent string

// The agents taskie talks to.
const (
	ClaudeCode Agent = "claude" // slash commands: /taskie:<action>
	Codex      Agent = "codex"  // skills: $taskie-<action> (no custom slash commands since 0.117.0)
	Shell      Agent = "shell"  // a user at a terminal: taskie commands
)

// Ref is how the agent runs a taskie action: /taskie:continue-plan in
// Claude Code (and for an unknown agent), $taskie-continue-plan in Codex,
// a taskie command in a shell (RefTask).
func (a Agent) Ref(action string) string { return a.RefTask(action, 0) }

// RefTask is Ref for an action on task t (0: none known). A shell user
// gets the taskie command that starts the action; the agents' actions
// find their task themselves.
func (a Agent) RefTask(action string, t domain.TaskID) string {
	switch a {
	case Codex:
		return "$taskie-" + action
	case Shell:
		return shellRef(action, t)
	}
	return "/taskie:" + action
}

// shellRef is the taskie command a user at a terminal runs for an action
// (the agents' actions in plugin/actions say the same steps).
func shellRef(action string, t domain.TaskID) string {
	task := "T"
	if t > 0 {
		task = t.String()
	}
	p := domain.Phase(action)
	switch {
	case domain.IsReview(p):
		cmd := "taskie review --kind " + strings.TrimSuffix(action, "-review")
		if p == domain.CodeReview && t > 0 {
			cmd += " --task " + task
		}
		return cmd
	case domain.IsPostReview(p), p == domain.NewPlan:
		return "taskie done " + action
	case p == domain.CreateTasks, action == AddTask:
		return "taskie task add --title …"
	case p == domain.ContinueTask:
		return strings.TrimSuffix("taskie context "+task, " T")
	case domain.IsImplementing(p), domain.IsAdvanceTarget(p):
		return "taskie start " + task
	}
	return "taskie continue"
}

// quoted is Ref, in backquotes when it is a shell command.
func (a Agent) quoted(action string) string {
	if a == Shell {
		return "`" + a.Ref(action) + "`"
	}
	return a.Ref(action)
}

// AgentFromEnv tells who runs a taskie command from its environment:
// Codex sets CODEX_THREAD_ID in the shell of every command its agent runs.
// Claude Code sets CLAUDECODE=1 in its Bash tool, and taskie's
// SessionStart hook exports TASKIE_SESSION_ID there, so either one (a
// session id other than Codex's thread) means Claude Code, which also
// covers a Claude Code started from a Codex shell. None of them: a user
// in a shell. (A hook tells its agent from its input instead.)
func AgentFromEnv(getenv func(string) string) Agent {
	thread, sid := getenv("CODEX_THREAD_ID"), getenv("TASKIE_SESSION_ID")
	switch {
	case getenv("CLAUDECODE") != "":
		return ClaudeCode
	case thread == "" && sid == "":
		return Shell
	case thread == "" || sid != "" && sid != thread:
		return ClaudeCode
	}
	return Codex
}

// TaskFact is one row of tasks.md.
type TaskFact struct {
	ID     domain.TaskID
	Status string // lower-case
	Deps   []domain.TaskID
}

// RouteFacts is what `taskie continue` looks at.
type RouteFacts struct {
	State    *state.State // nil when the plan has no state.json
	HasPlan  bool         // plan.md exists
	HasTasks bool         // tasks.md exists
	Tasks    []TaskFact
	// Subtasks holds the statuses (lower-case) of the current task's subtasks.
	Subtasks []string
	// Reviews are the plan's review and post-review files.
	Reviews ReviewFiles
	// Orphans are the reviews the log shows started and never finished
	// (their hook was killed): a file such a reviewer left is no review.
	// The shell reads them only when a review file of the next iteration
	// is on disk (RouteOrphansMatter); nil = none.
	Orphans []ReviewAt
	// Agent is who reads the route: it names the actions its way.
	Agent Agent
}

// RouteOrphansMatter reports whether a review file of the next iteration
// is on disk: only then does the shell read which reviews were orphaned.
func RouteOrphansMatter(f RouteFacts) bool { return reviewAhead(f.State, f.Reviews) }

// orphaned reports that iteration n of a review was started and never
// finished (Orphans).
func (f RouteFacts) orphaned(review domain.Phase, task domain.TaskID, n int) bool {
	return slices.Contains(f.Orphans, ReviewAt{Review: review, Task: task, N: n})
}

// Route is the answer of `taskie continue`.
type Route struct {
	Action  string        `json:"action"`                // a phase, an advance target or a constant above
	Task    domain.TaskID `json:"task,string,omitempty"` // written "3", as in state.json
	Why     string        `json:"why"`
	Command string        `json:"command,omitempty"` // taskie command to run first
	Guess   bool          `json:"guess,omitempty"`   // reconstructed from files, no state.json
	Options []string      `json:"options,omitempty"` // ambiguous: the actions that fit
	// Repair is a state to record first (crash recovery); nil = none.
	Repair *state.State `json:"-"`
	// For a post-review: the review to address and the file to write,
	// filled in by callers that know the plan's paths.
	ReviewFile string `json:"review_file,omitempty"`
	PostFile   string `json:"post_review_file,omitempty"`
	// Agent is who reads the route (RouteFacts.Agent).
	Agent Agent `json:"-"`
	// PlanFlag is " --plan ID" for a shell's commands when the repository
	// has several plans (the caller knows).
	PlanFlag string `json:"-"`
}

// Text renders a route the way `taskie continue` prints it.
func (r Route) Text() string {
	var b strings.Builder
	action := r.Action
	if r.Task != 0 {
		action += " (task " + r.Task.String() + ")"
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
	if a := domain.Phase(r.Action); len(r.Options) <= 1 && (domain.IsPhase(a) || domain.IsAdvanceTarget(a) || r.Action == AddTask) {
		ref := r.Agent.RefTask(r.Action, r.Task)
		if r.Agent == Shell {
			ref += r.PlanFlag
		}
		if ref != r.Command { // a shell's action is often the command above
			fmt.Fprintf(&b, "action: %s\n", ref)
		}
	}
	return b.String()
}

// Continue decides where a plan resumes (docs/state-machine.md#continuation-taskie-continue).
func Continue(f RouteFacts, models []domain.Model) Route {
	r := route(f, models)
	r.Agent = f.Agent
	return r
}

func route(f RouteFacts, models []domain.Model) Route {
	s := f.State
	switch {
	case s == nil:
		return guess(f)
	case !s.IsEnabled():
		return Route{Action: Resume, Command: "taskie resume", Why: "automation is paused for this plan"}
	case escalated(s):
		return HumanRoute(s, pendingOther(f, s.Task()))
	case s.NeedsHuman:
		return Route{Action: Human, Task: s.Task(), Command: "taskie findings",
			Why: "the review cycle stopped for a human: the reviews are not converging (or a budget is spent); a human reads the open findings, decides, then runs taskie resume to review again"}
	case s.Next() == domain.Complete:
		n := s.Clone()
		n.Phase, n.NextPhase = domain.Complete, nil
		return Route{Action: Nothing, Repair: n, Why: "the all-code review passed: the plan is complete (recorded)"}
	case s.Phase == domain.Complete && s.Next() == "":
		return Route{Action: Nothing, Why: "the plan is complete; add a task with " + f.Agent.quoted(AddTask) + " to go on"}
	case domain.IsReview(s.Next()) && s.MaxReviews == 0:
		return Route{Action: EndTurn, Task: s.Task(),
			Why: fmt.Sprintf("%s is due but max_reviews is 0 (reviews off): end your turn and the Stop hook skips it", s.Next())}
	case (domain.IsReview(s.Next()) || domain.IsPostReview(s.Next())) && !IterationInRange(s):
		return iterationOutOfRange(f, s)
	case domain.IsPostReview(s.Next()):
		return postReviewDue(f, s)
	case domain.IsReview(s.Next()) && s.Iteration() >= s.MaxReviews:
		return capRoute(f, s)
	case domain.IsReview(s.Next()):
		return reviewDue(f, s, models)
	case domain.IsAdvanceTarget(s.Next()):
		return nextTask(f, s)
	case s.Next() != "":
		return Route{Action: string(s.Next()), Task: s.Task(), Why: fmt.Sprintf("next_phase is %s", s.Next())}
	}
	return standalone(f, s)
}

// postReviewDue: the hook blocked and the agent owes a post-review.
func postReviewDue(f RouteFacts, s *state.State) Route {
	post, review, n := s.Next(), domain.ReviewOf(s.Next()), s.Iteration()
	// After a third failure the task is in cto_intervention: the next
	// stop runs the CTO review, not another code review (as the hook says).
	next := fmt.Sprintf("%s iteration %d", review, n+1)
	cto := ""
	if st, _ := TaskLife(s); review == domain.CodeReview && st == lifecycle.CTOIntervention {
		next = "the CTO review"
		cto = fmt.Sprintf("; task %s is in cto_intervention (its reviews failed 3 times), so after the command end your turn and the Stop hook runs the CTO review, not %s iteration %d", s.Task(), review, n+1)
	}
	if f.Reviews.Post(review, s.Task(), n) {
		r := s.Clone()
		r.Phase, r.NextPhase = post, state.Opt(review)
		return Route{Action: EndTurn, Task: s.Task(), Repair: r,
			Why: fmt.Sprintf("the %s for iteration %d is written but was not recorded (taskie continue records it); end your turn and the Stop hook runs %s", post, n, next)}
	}
	return Route{Action: string(post), Task: s.Task(), Command: "taskie done " + string(post),
		Why: fmt.Sprintf("%s iteration %d found problems or needs one more clean review; address it, write the post-review file, then run the command%s", review, n, cto)}
}

// IterationInRange reports whether phase_iteration is within
// 0…max_reviews; outside, the state is illegal and no iteration number may
// be computed from it (it could be negative or overflow).
func IterationInRange(s *state.State) bool {
	it := s.Iteration()
	return it >= 0 && it <= max(s.MaxReviews, 0)
}

// iterationOutOfRange asks for phase_iteration to be fixed, suggesting the
// highest iteration of the cycle's review on disk.
func iterationOutOfRange(f RouteFacts, s *state.State) Route {
	review := s.Next()
	if !domain.IsReview(review) {
		review = domain.ReviewOf(review)
	}
	n := min(max(f.Reviews.Latest(review, s.Task()), 0), max(s.MaxReviews, 0))
	return Route{Action: Fix, Task: s.Task(), Command: fmt.Sprintf("taskie set phase_iteration %d", n),
		Why: fmt.Sprintf("phase_iteration is %d, outside 0…%d (max_reviews): state.json is illegal and no review runs until it is fixed; set it to the %s iteration the plan is at (%d is the highest review file on disk), or rebuild the state with `taskie recover`",
			s.Iteration(), s.MaxReviews, review, n)}
}

// reviewDue: next_phase is a review; either it is due or a crash left its
// files ahead of state.json.
func reviewDue(f RouteFacts, s *state.State, models []domain.Model) Route {
	review, t, n := s.Next(), s.Task(), s.Iteration()+1
	if f.Reviews.Review(review, t, n) && f.orphaned(review, t, n) {
		// Not a review: the hook that ran it was killed before judging it.
		return Route{Action: EndTurn, Task: t,
			Why: fmt.Sprintf("%s iteration %d on disk was left by a reviewer whose hook was killed, so it is no review and is not recorded; end your turn; the Stop hook sets it aside and reviews again", review, n)}
	}
	if f.Reviews.Review(review, t, n) {
		r := s.Clone()
		r.PhaseIteration, r.ConsecutiveClean, r.ReviewModel = state.Int(n), 0, NextModel(models, s.ReviewModel)
		if f.Reviews.Post(review, t, n) {
			r.Phase, r.NextPhase = domain.PostReview(review), state.Opt(review)
			return Route{Action: EndTurn, Task: s.Task(), Repair: r,
				Why: fmt.Sprintf("%s iteration %d and its post-review exist but state.json was not updated (taskie continue records it; the verdict is lost); end your turn and the Stop hook runs iteration %d", review, n, n+1)}
		}
		r.Phase, r.NextPhase = review, state.Opt(domain.PostReview(review))
		return Route{Action: string(domain.PostReview(review)), Task: s.Task(), Repair: r, Command: "taskie done " + string(domain.PostReview(review)),
			Why: fmt.Sprintf("%s iteration %d was written but state.json was not updated (taskie continue records it; the verdict is lost); do the post-review", review, n)}
	}
	if domain.IsImplementing(s.Phase) && unfinished(f.Subtasks) {
		return Route{Action: string(domain.ContinueTask), Task: s.Task(), Command: "taskie done " + string(s.Phase),
			Why: fmt.Sprintf("task %s has unfinished subtasks; finish them, then run the command and end your turn for the code review", s.Task())}
	}
	if st, _ := TaskLife(s); review == domain.CodeReview && st == lifecycle.CTOIntervention {
		return Route{Action: EndTurn, Task: t,
			Why: fmt.Sprintf("task %s is in cto_intervention (its reviews failed 3 times): end your turn and the Stop hook runs the CTO review, whose decision comes back in its block", t)}
	}
	return Route{Action: EndTurn, Task: s.Task(),
		Why: fmt.Sprintf("%s iteration %d is due: end your turn and the Stop hook runs it", review, n)}
}

// escalated reports a current task with a human while its code-review
// cycle is on: the Stop hook runs nothing for it.
func escalated(s *state.State) bool {
	st, _ := TaskLife(s)
	return st == lifecycle.HumanEscalation && inCodeCycle(s.Next())
}

// capRoute: the review due is past max_reviews. A code review hands its
// task to a human, as the Stop hook does at the cap.
func capRoute(f RouteFacts, s *state.State) Route {
	review := s.Next()
	if review == domain.CodeReview && s.Task() > 0 {
		r := HumanRoute(s, pendingOther(f, s.Task()))
		r.Why = fmt.Sprintf("max_reviews (%d) reached for the code review of task %s without two clean reviews in a row: the Stop hook hands the task to a human (human_escalation); %s",
			s.MaxReviews, s.Task(), HumanDecision(s, pendingOther(f, s.Task())))
		return r
	}
	return Route{Action: Human, Task: s.Task(), Command: fmt.Sprintf("taskie set max_reviews %d", s.MaxReviews+4),
		Why: fmt.Sprintf("max_reviews (%d) reached for %s: no review runs; raise it to review again, or move on with `taskie set next_phase %s`",
			s.MaxReviews, review, AdvanceTarget(review, s.TDD, pendingOther(f, s.Task())))}
}

// pendingOther reports a pending task other than t in tasks.md.
func pendingOther(f RouteFacts, t domain.TaskID) bool {
	_, ok := firstPending(f.Tasks, t)
	return ok
}

// HumanRoute is `taskie continue`'s answer for a task with a human.
func HumanRoute(s *state.State, pendingOther bool) Route {
	t := s.Task()
	cmd := fmt.Sprintf("taskie task resolve %s --actor human", t)
	if s.NeedsHuman {
		cmd = "taskie findings" // what goes round, read first
	}
	return Route{Action: Human, Task: t, Command: cmd,
		Why: fmt.Sprintf("task %s is in human_escalation: the Stop hook runs no review for it until a human decides; %s", t, HumanDecision(s, pendingOther))}
}

// HumanDecision says what a human decides for the current task of s, with
// the exact commands: the same words in the hook, continue and status.
func HumanDecision(s *state.State, pendingOther bool) string {
	t := s.Task()
	var b strings.Builder
	switch {
	case domain.IsReview(s.Next()) && s.Iteration() >= s.MaxReviews:
		fmt.Fprintf(&b, "it reached max_reviews (%d): raise it (`taskie set max_reviews %d`) and resume the reviews with `taskie task resolve %s --actor human`, or accept the work as it is (`taskie set next_phase %s`)",
			s.MaxReviews, s.MaxReviews+4, t, AdvanceTarget(domain.CodeReview, s.TDD, pendingOther))
	case s.NeedsHuman:
		fmt.Fprintf(&b, "its reviews do not converge (`taskie findings` lists what goes round): fix or decline the findings, then `taskie task resolve %s --actor human` and `taskie resume` review again", t)
	default:
		fmt.Fprintf(&b, "the CTO's attempts did not get it through its reviews (read task-%s-cto-*.md and the reviews): change the task or the code, then `taskie task resolve %s --actor human` reviews again with fresh counts", t, t)
	}
	fmt.Fprintf(&b, "; or give it up: `taskie task abandon %s --actor human`", t)
	return b.String()
}

func unfinished(subtasks []string) bool {
	for _, st := range subtasks {
		if st != "done" && st != "completed" && st != "cancelled" {
			return true
		}
	}
	return false
}

// firstPending is the first pending task in table order whose
// dependencies are done or cancelled, as `taskie ready` lists it; when
// none is ready, the first pending task.
func firstPending(tasks []TaskFact, exclude domain.TaskID) (domain.TaskID, bool) {
	closed := make(map[domain.TaskID]bool, len(tasks))
	for _, t := range tasks {
		closed[t.ID] = t.Status == "done" || t.Status == "cancelled"
	}
	first, found := domain.TaskID(0), false
	for _, t := range tasks {
		if t.Status != "pending" || t.ID == exclude {
			continue
		}
		if !found {
			first, found = t.ID, true
		}
		if !slices.ContainsFunc(t.Deps, func(d domain.TaskID) bool { return !closed[d] }) {
			return t.ID, true
		}
	}
	return first, found
}

func nextTask(f RouteFacts, s *state.State) Route {
	id, ok := firstPending(f.Tasks, s.Task())
	if !ok {
		return Route{Action: string(domain.AllCodeReview), Options: []string{string(domain.AllCodeReview), AddTask},
			Why: fmt.Sprintf("next_phase is %s but no pending task remains; run the all-code review or add a task", s.Next())}
	}
	return Route{Action: string(s.Next()), Task: id, Command: "taskie start " + id.String() + " --auto",
		Why: fmt.Sprintf("the previous review cycle passed; task %s is the next pending task", id)}
}

// standalone: next_phase is null, so only the phase and files say what's next.
func standalone(f RouteFacts, s *state.State) Route {
	p := s.Phase
	if domain.IsImplementing(p) && unfinished(f.Subtasks) {
		return Route{Action: string(domain.ContinueTask), Task: s.Task(), Why: fmt.Sprintf("task %s has unfinished subtasks", s.Task())}
	}
	if domain.IsReview(p) {
		if n := f.Reviews.Latest(p, s.Task()); n > 0 && !f.Reviews.Post(p, s.Task(), n) {
			return Route{Action: string(domain.PostReview(p)), Task: s.Task(), Why: fmt.Sprintf("%s iteration %d has no post-review yet", p, n)}
		}
	}
	if how := finished(f, s); how != "" && Stage(p) == "Implementation" {
		// Nothing is left to do on it: the next task, or the final review.
		if id, ok := firstPending(f.Tasks, s.Task()); ok {
			return Route{Action: string(TaskTarget(s.TDD)), Task: id, Command: "taskie start " + id.String(),
				Why: fmt.Sprintf("task %s is %s; task %s is the next pending task", s.Task(), how, id)}
		}
		return Route{Action: string(domain.AllCodeReview), Options: []string{string(domain.AllCodeReview), AddTask},
			Why: fmt.Sprintf("task %s is %s and no pending task remains; run the all-code review or add a task", s.Task(), how)}
	}
	opts := optionsAfter(p, s.TDD)
	return Route{Action: opts[0], Task: s.Task(), Options: opts,
		Why: fmt.Sprintf("standalone mode (next_phase is null) after %s: more than one action fits; pick one", p)}
}

// finished says how the current task of s ended ("done", "cancelled",
// "completed", "abandoned"), "" while it is open: its row in tasks.md, else
// its lifecycle record (a plan may have no tasks.md).
func finished(f RouteFacts, s *state.State) string {
	t := s.Task()
	if t <= 0 {
		return ""
	}
	for _, r := range f.Tasks {
		if r.ID == t {
			if r.Status == "done" || r.Status == "completed" || r.Status == "cancelled" {
				return r.Status
			}
			return ""
		}
	}
	if st, _ := TaskLife(s); st == lifecycle.Completed || st == lifecycle.Abandoned {
		return string(st)
	}
	return ""
}

// optionsAfter lists the actions that can follow a phase.
func optionsAfter(p domain.Phase, tdd bool) []string {
	switch Stage(p) {
	case "Planning", "Plan review":
		return actions(domain.PlanReview, domain.CreateTasks)
	case "Task creation", "Task review":
		return actions(domain.TasksReview, TaskTarget(tdd))
	case "Implementation":
		return actions(domain.CodeReview, domain.ContinueTask, TaskTarget(tdd))
	case "Final review":
		return []string{string(domain.AllCodeReview), AddTask}
	}
	return []string{AddTask}
}

// actions lists phases as route actions.
func actions(ps ...domain.Phase) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
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
		return Route{Action: string(domain.NewPlan), Why: "plan.md does not exist"}
	}
	if !f.HasTasks {
		if n := f.Reviews.Latest(domain.PlanReview, 0); n > 0 && !f.Reviews.Post(domain.PlanReview, 0, n) {
			return Route{Action: string(domain.PostPlanReview), Why: fmt.Sprintf("plan review %d has no post-review", n)}
		}
		return Route{Action: string(domain.PlanReview), Options: actions(domain.PlanReview, domain.CreateTasks), Why: "plan.md exists but tasks.md does not"}
	}
	if n := f.Reviews.Latest(domain.TasksReview, 0); n > 0 && !f.Reviews.Post(domain.TasksReview, 0, n) {
		return Route{Action: string(domain.PostTasksReview), Why: fmt.Sprintf("tasks review %d has no post-review", n)}
	}
	for _, t := range f.Tasks {
		if t.Status != "in-progress" {
			continue
		}
		if n := f.Reviews.Latest(domain.CodeReview, t.ID); n > 0 && !f.Reviews.Post(domain.CodeReview, t.ID, n) {
			return Route{Action: string(domain.PostCodeReview), Task: t.ID, Why: fmt.Sprintf("task %s review %d has no post-review", t.ID, n)}
		}
		return Route{Action: string(domain.ContinueTask), Task: t.ID, Command: "taskie start " + t.ID.String(), Why: fmt.Sprintf("task %s is in progress", t.ID)}
	}
	if id, ok := firstPending(f.Tasks, 0); ok {
		return Route{Action: string(domain.CompleteTask), Task: id, Options: actions(domain.CompleteTask, domain.TasksReview),
			Why: fmt.Sprintf("task %s is the first pending task", id)}
	}
	if n := f.Reviews.Latest(domain.AllCodeReview, 0); n > 0 && !f.Reviews.Post(domain.AllCodeReview, 0, n) {
		return Route{Action: string(domain.PostAllCodeReview), Why: fmt.Sprintf("all-code review %d has no post-review", n)}
	}
	return Route{Action: string(domain.AllCodeReview), Options: []string{string(domain.AllCodeReview), AddTask}, Why: "no task is pending or in progress"}
}
