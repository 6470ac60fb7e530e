package parallel

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAfterFailure(t *testing.T) {
	tests := []struct {
		name        string
		attempts    int
		maxRetries  int
		onExhausted OnExhausted
		want        RetryDecision
	}{
		{"first failure: retry 1", 1, 2, Skip,
			RetryDecision{Action: Retry, Retry: 1, Msg: "failed attempt 1: retry 1 of 2"}},
		{"second failure: retry 2", 2, 2, Skip,
			RetryDecision{Action: Retry, Retry: 2, Msg: "failed attempt 2: retry 2 of 2"}},
		{"third failure: recorded and skipped", 3, 2, Skip,
			RetryDecision{Action: SkipTask, Failed: true, Msg: "failed 3 attempts, retries exhausted: recorded in failed_tasks and skipped"}},
		{"third failure: recorded and escalated", 3, 2, Escalate,
			RetryDecision{Action: EscalateTask, Failed: true, Msg: "failed 3 attempts, retries exhausted: recorded in failed_tasks and escalated"}},
		{"negative max is the default", 3, -1, Skip,
			RetryDecision{Action: SkipTask, Failed: true, Msg: "failed 3 attempts, retries exhausted: recorded in failed_tasks and skipped"}},
		{"zero retries", 1, 0, Skip,
			RetryDecision{Action: SkipTask, Failed: true, Msg: "failed 1 attempt, retries exhausted: recorded in failed_tasks and skipped"}},
		{"unknown policy escalates", 5, 2, "ignore",
			RetryDecision{Action: EscalateTask, Failed: true, Msg: "failed 5 attempts, retries exhausted: recorded in failed_tasks and escalated"}},
		{"attempts below 1 count as 1", 0, 2, Skip,
			RetryDecision{Action: Retry, Retry: 1, Msg: "failed attempt 1: retry 1 of 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, AfterFailure(tc.attempts, tc.maxRetries, tc.onExhausted)); d != "" {
				t.Errorf("decision (-want +got):\n%s", d)
			}
		})
	}
}

func TestRetryActionString(t *testing.T) {
	for a, want := range map[RetryAction]string{Retry: "retry", SkipTask: "skip", EscalateTask: "escalate", 9: "action(9)"} {
		if got := a.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(a), got, want)
		}
	}
}

func TestParseOnExhausted(t *testing.T) {
	for in, want := range map[string]OnExhausted{"": Skip, "skip": Skip, " Escalate ": Escalate} {
		if got, err := ParseOnExhausted(in); err != nil || got != want {
			t.Errorf("ParseOnExhausted(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseOnExhausted("ignore"); err == nil || !strings.Contains(err.Error(), `"skip" or "escalate"`) {
		t.Errorf("ParseOnExhausted(ignore) error = %v", err)
	}
}

func TestSubagentStop(t *testing.T) {
	held := claim(3, "worker-1", 0)
	const base, next = "0123456789abcdef0123", "fedcba9876543210fedc"
	tests := []struct {
		name           string
		held           *Claim
		base, head     string
		alreadyBlocked bool
		block          bool
		message        string // a part of the message; "" means none
	}{
		{"no claim: allowed", nil, base, base, false, false, ""},
		{"new commit: allowed", &held, base, next, false, false, ""},
		{"new commit after a block: allowed", &held, base, next, true, false, ""},
		{"no commit, first stop: blocked", &held, base, base, false, true,
			"task 3 is claimed by worker-1, but the worktree has no commit since the claim (HEAD is still 0123456789ab)"},
		{"no commit, second stop: allowed with a message", &held, base, base, true, false,
			"task 3 still has no commit since the claim (HEAD 0123456789ab); allowing this stop"},
		{"unknown base: allowed with a message", &held, "", next, false, false, "cannot check for a new commit"},
		{"unknown head: allowed with a message", &held, base, " ", false, false, "cannot check for a new commit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SubagentStop(tc.held, tc.base, tc.head, tc.alreadyBlocked)
			if got.Block != tc.block {
				t.Errorf("Block = %v, want %v (message %q)", got.Block, tc.block, got.Message)
			}
			if tc.message == "" && got.Message != "" || !strings.Contains(got.Message, tc.message) {
				t.Errorf("Message = %q, want it to contain %q", got.Message, tc.message)
			}
		})
	}
}

func TestResultRef(t *testing.T) {
	got := ResultRef(3, "abc123", ResultComplete)
	if want := `{"task":3,"commit":"abc123","status":"complete"}`; got != want {
		t.Errorf("ResultRef = %s, want %s", got, want)
	}
	r, err := ParseResultRef(got + "\n")
	if err != nil || r != (Result{Task: 3, Commit: "abc123", Status: "complete"}) {
		t.Errorf("ParseResultRef = %+v, %v", r, err)
	}
	for _, bad := range []string{"", "done", `{"task":0,"commit":"x","status":"complete"}`,
		`{"task":3,"commit":"x","status":"complete","extra":1}`, `{"task":3} {"task":4}`} {
		if _, err := ParseResultRef(bad); err == nil {
			t.Errorf("ParseResultRef(%q) accepted", bad)
		}
	}
}
