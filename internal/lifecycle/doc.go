// Package lifecycle is the task lifecycle state machine of docs/lifecycle.md: thirteen
// states, a table of legal moves, failure counting with escalation to the
// CTO and then to a human, recovery actions, invariants, timeouts and time
// metrics. It is pure: no I/O, and the clock is always a parameter.
//
// # States
//
// The first design listed twelve states: the chain pending → assigned → planning →
// validated → in_progress → testing → quality_review → approved → committing
// → completed, plus cto_intervention and human_escalation. The thirteenth is
// abandoned, the terminal state the recovery action "abandon (human only)"
// produces (the background design calls it "mark as failed"). It is not
// named failed so that it cannot be confused with a failure, which is
// counted and does not end the task. Skip needs no state of its own: it moves
// past the state the task is stuck in to the next one on the chain.
// Terminal states are completed and abandoned, which never move, and
// human_escalation, which only a human leaves, by Resolve or Abandon.
//
// # Moves and effects
//
// Every change is decided by a function (Move, Fail, Retry, …) that returns
// the new Task and the Effects that describe it, one Effect per change,
// which the caller appends to the event log. The functions never change
// their input: the Task they return is a copy. Deciding and applying are
// separate: a decision produces Effects, and one function (used by Move
// and the Log alike) applies an Effect to a Task. Replaying a log with a
// Log therefore goes through the very code that made the changes
// and rebuilds the same Task records. Times are recorded to the second,
// as the log writes them, so a replay from the log itself is exact too.
//
// # Failures
//
// Failures count per state. A successful forward move out of a state clears
// that state's count, and only that state's: the review loop quality_review
// → in_progress → testing → quality_review keeps counting quality_review's
// failures, so the third failed review escalates. The third failure in a
// state moves the task to cto_intervention. Leaving cto_intervention back
// into the work (retry, guided retry, rollback, skip) is a CTO attempt;
// after the second, the next failure goes to human_escalation (through
// cto_intervention, recorded as both steps). A human Resolve returns the
// task to the state it was escalated from with fresh counts.
//
// # Who may do what
//
// Anyone (agent, hook, cto, human, system) may Move and Fail. Retry,
// GuidedRetry and Rollback are the CTO's or a human's; Skip is the CTO's
// only; Abandon and Resolve are a human's only; Escalate is the agent's,
// the CTO's or a human's (the hook and taskie escalate only by counting
// failures). Allowed holds the table; a refused actor gets ErrRefused.
//
// # Plan phases
//
// FromPhase turns plan phase events into moves. When the lifecycle lags
// the phases (a task started while still pending), it fast-forwards along
// the chain, one ordinary forward move and one STATE_TRANSITION effect per
// state, so no state is skipped and no override is needed.
//
// # Overrides
//
// Rollback and Skip are overrides, recorded as RECOVERY effects and held to
// their own rules rather than the table: a rollback (CTO or human) goes
// back to any earlier working state, most of which the table has no row
// for; a skip (CTO only) moves past the state the task is stuck in without
// its work being done, which from cto_intervention escalated from
// committing means straight to completed. A Log accepts them only from
// the actors allowed them: a skip by anyone but the CTO breaks "no skipped
// states except by CTO override".
package lifecycle
