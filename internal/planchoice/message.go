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
		return fmt.Sprintf("taskie: plans %s await a review and this session has named none of them, so none was reviewed; name the one to drive with `taskie status --plan ID` (e.g. `taskie status --plan %s`) and stop again.",
			list(c.Candidates), c.Candidates[0])
	case c.Reason == MidTurnElsewhere && len(c.Candidates) == 1:
		return fmt.Sprintf("taskie: plan %q awaits a review but session %s is mid-turn on it (blocked %s ago); to drive it from this session, run `taskie status --plan %s` (naming the plan takes it over) and stop again.",
			c.Candidates[0], session(c.Blocker), ago(c.BlockedAgo), c.Candidates[0])
	case c.Reason == MidTurnElsewhere && len(c.Candidates) > 1:
		return fmt.Sprintf("taskie: plans %s await a review but other sessions are mid-turn on them (session %s blocked on %q %s ago); to drive one from this session, run `taskie status --plan ID` (naming the plan takes it over) and stop again.",
			list(c.Candidates), session(c.Blocker), c.Candidates[0], ago(c.BlockedAgo))
	case c.Reason == Mentioned && len(c.Candidates) == 1:
		return fmt.Sprintf("taskie: plan %q awaits a review but this session is working on plan %q, so it was not reviewed; to drive it from this session, run `taskie status --plan %s` and stop again.",
			c.Candidates[0], c.Plan, c.Candidates[0])
	case c.Reason == Mentioned && len(c.Candidates) > 1:
		return fmt.Sprintf("taskie: plans %s await a review but this session is working on plan %q, so none was reviewed; to drive one from this session, run `taskie status --plan ID` and stop again.",
			list(c.Candidates), c.Plan)
	}
	return ""
}

// list quotes plan ids: "a", "b" and "c".
func list(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(id)
	}
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
