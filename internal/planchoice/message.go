package planchoice

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Message is the one sentence the hook shows (as a systemMessage) and logs
// when a plan awaits the hook and the hook does not act on it: which plans,
// why, and the command that resolves it. It is "" when there is nothing to
// say: the choice acts on a pending plan, or no plan is pending.
func Message(c Choice) string {
	switch {
	case c.Reason == SeveralPending && len(c.Candidates) > 0:
		return fmt.Sprintf("taskie: plans %s and this session has named none of them, so none was driven; name the one to drive with `taskie status --plan ID` (e.g. `taskie status --plan %s`) and stop again.",
			awaiting(c), c.Candidates[0])
	case c.Reason == MidTurnElsewhere && len(c.Candidates) == 1:
		return fmt.Sprintf("taskie: plan %s but session %s is mid-turn on it (blocked %s ago); to drive it from this session, run `taskie status --plan %s` (naming the plan takes it over) and stop again.",
			awaiting(c), session(c.Blocker), ago(c.BlockedAgo), c.Candidates[0])
	case c.Reason == MidTurnElsewhere && len(c.Candidates) > 1:
		return fmt.Sprintf("taskie: plans %s but other sessions are mid-turn on them (session %s blocked on %q %s ago); to drive one from this session, run `taskie status --plan ID` (naming the plan takes it over) and stop again.",
			awaiting(c), session(c.Blocker), c.Candidates[0], ago(c.BlockedAgo))
	case c.Reason == Mentioned && len(c.Candidates) == 1:
		return fmt.Sprintf("taskie: plan %s but this session is working on plan %q, so it was not driven; to drive it from this session, run `taskie status --plan %s` and stop again.",
			awaiting(c), c.Plan, c.Candidates[0])
	case c.Reason == Mentioned && len(c.Candidates) > 1:
		return fmt.Sprintf("taskie: plans %s but this session is working on plan %q, so none was driven; to drive one from this session, run `taskie status --plan ID` and stop again.",
			awaiting(c), c.Plan)
	}
	return ""
}

// awaiting names the candidates and what each awaits: `"a" awaits a code
// review`, `"a" and "b" await a code review`, or `"a" (a code review) and
// "b" (task creation) await the hook`.
func awaiting(c Choice) string {
	what := make([]string, len(c.Candidates))
	same := true
	for i, id := range c.Candidates {
		what[i] = awaitsText(c.Awaits[id])
		same = same && what[i] == what[0]
	}
	switch {
	case len(c.Candidates) == 1:
		return fmt.Sprintf("%q awaits %s", c.Candidates[0], what[0])
	case same:
		return fmt.Sprintf("%s await %s", list(c.Candidates), what[0])
	}
	named := make([]string, len(c.Candidates))
	for i, id := range c.Candidates {
		named[i] = fmt.Sprintf("%q (%s)", id, what[i])
	}
	return join(named) + " await the hook"
}

// awaitsText is what a plan whose next phase is next waits for.
func awaitsText(next string) string {
	switch next {
	case "plan-review":
		return "a plan review"
	case "tasks-review":
		return "a tasks review"
	case "code-review":
		return "a code review"
	case "all-code-review":
		return "the review of all its code"
	case "post-plan-review", "post-tasks-review", "post-code-review", "post-all-code-review":
		return "the fixes of its last review"
	case "create-tasks":
		return "task creation"
	case "next-task", "next-task-tdd":
		return "its next task"
	case "continue-task":
		return "the rest of its current task"
	case "complete-task", "complete-task-tdd":
		return "the completion of its task"
	case "":
		return "the hook"
	}
	return "its next phase, " + next
}

// list quotes plan ids: "a", "b" and "c".
func list(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(id)
	}
	return join(q)
}

// join writes "a", "a and b", "a, b and c".
func join(q []string) string {
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// session prints a session id as is when it is plain, quoted otherwise (it
// comes from the agent's hook input).
func session(id string) string {
	if !isID(id) {
		return strconv.Quote(id)
	}
	return id
}

// ago is a short duration: 40s, 2m, 1h5m.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(max(0, int(d/time.Second))) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h" + strconv.Itoa(int(d%time.Hour/time.Minute)) + "m"
}
