package parallel

import (
	"fmt"
	"strings"
)

// DefaultMaxRetries is how many times a failing task is retried (docs/parallel.md#results-and-retries).
const DefaultMaxRetries = 2

// OnExhausted says what happens to a task that failed every retry.
type OnExhausted string

// What to do when retries run out.
const (
	Skip     OnExhausted = "skip"     // record it in failed_tasks and go on
	Escalate OnExhausted = "escalate" // record it and ask a human
)

// ParseOnExhausted reads a config value; "" is Skip.
func ParseOnExhausted(s string) (OnExhausted, error) {
	switch v := OnExhausted(strings.ToLower(strings.TrimSpace(s))); v {
	case "":
		return Skip, nil
	case Skip, Escalate:
		return v, nil
	}
	return "", fmt.Errorf("on_exhausted %q: must be %q or %q", s, Skip, Escalate)
}

// RetryAction is what to do after a failed attempt.
type RetryAction int

// Retry actions.
const (
	Retry        RetryAction = iota + 1 // run the task again
	SkipTask                            // give up on it and go on with the others
	EscalateTask                        // give up on it and ask a human
)

var retryNames = [...]string{"", "retry", "skip", "escalate"}

func (a RetryAction) String() string {
	if a <= 0 || int(a) >= len(retryNames) {
		return fmt.Sprintf("action(%d)", int(a))
	}
	return retryNames[a]
}

// RetryDecision is the policy's answer after a failure.
type RetryDecision struct {
	Action RetryAction
	Retry  int  // for Retry: which retry this is, 1-based
	Failed bool // record the task in failed_tasks
	Msg    string
}

// AfterFailure decides what follows a task's failed attempt; attempts
// counts the failed attempts so far, this one included. The task is
// retried while attempts ≤ maxRetries (maxRetries < 0 is
// DefaultMaxRetries, 0 means never retry); then it is recorded as failed
// and skipped or escalated. An onExhausted other than Skip escalates, so
// a typo never hides a failure.
func AfterFailure(attempts, maxRetries int, onExhausted OnExhausted) RetryDecision {
	if maxRetries < 0 {
		maxRetries = DefaultMaxRetries
	}
	attempts = max(attempts, 1)
	if attempts <= maxRetries {
		return RetryDecision{Action: Retry, Retry: attempts,
			Msg: fmt.Sprintf("failed attempt %d: retry %d of %d", attempts, attempts, maxRetries)}
	}
	d := RetryDecision{Action: EscalateTask, Failed: true,
		Msg: fmt.Sprintf("failed %s, retries exhausted: recorded in failed_tasks and escalated", plural(attempts, "attempt"))}
	if onExhausted == Skip {
		d.Action = SkipTask
		d.Msg = fmt.Sprintf("failed %s, retries exhausted: recorded in failed_tasks and skipped", plural(attempts, "attempt"))
	}
	return d
}

// plural writes "1 attempt", "3 attempts".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
