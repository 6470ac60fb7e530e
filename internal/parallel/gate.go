package parallel

import (
	"fmt"
	"strings"
)

// GateDecision is the SubagentStop hook's answer: block the stop with
// Message as the reason, or allow it, with Message (if any) shown to the
// agent.
type GateDecision struct {
	Block   bool
	Message string
}

// SubagentStop decides a subagent's stop (docs/parallel.md#the-subagent-gate). A subagent that holds a
// claim and stops with its worktree's HEAD still at the claim's base
// commit is blocked once, and told to commit or release; the caller
// records that it blocked and passes alreadyBlocked at the next stop,
// which is then allowed with a message (loop safety, as in docs/hook.md). No claim,
// or a new commit, allows silently; an unknown base or head allows with a
// message, since nothing can be checked.
func SubagentStop(held *Claim, baseSHA, headSHA string, alreadyBlocked bool) GateDecision {
	if held == nil {
		return GateDecision{}
	}
	baseSHA, headSHA = strings.TrimSpace(baseSHA), strings.TrimSpace(headSHA)
	task := held.Task
	switch {
	case baseSHA == "" || headSHA == "":
		return GateDecision{Message: fmt.Sprintf("taskie: task %d: cannot check for a new commit (the claim's base or the worktree's HEAD is unknown)", task)}
	case baseSHA != headSHA:
		return GateDecision{}
	case alreadyBlocked:
		return GateDecision{Message: fmt.Sprintf("taskie: task %d still has no commit since the claim (HEAD %s); allowing this stop — the task stays claimed by %s until it is released or its lease expires",
			task, short(headSHA), held.Agent)}
	}
	return GateDecision{Block: true, Message: fmt.Sprintf("task %d is claimed by %s, but the worktree has no commit since the claim (HEAD is still %s). "+
		"Commit the work, then stop; if the task is not finished, say so and run `taskie release %d --as %s`.",
		task, held.Agent, short(headSHA), task, held.Agent)}
}

// short abbreviates a commit id for messages.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
