package hook

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in string
		want     Input
		err      string
	}{
		{"claude", `{"session_id":"s","cwd":"/p","stop_hook_active":true,"transcript_path":"/t","hook_event_name":"Stop","extra":{"x":1}}`,
			Input{SessionID: "s", Cwd: "/p", TranscriptPath: "/t", HookEventName: "Stop", StopHookActive: true}, ""},
		{"active as string", `{"cwd":"/p","stop_hook_active":"true"}`, Input{Cwd: "/p", StopHookActive: true}, ""},
		{"active missing", `{"cwd":"/p"}`, Input{Cwd: "/p"}, ""},
		{"empty", "  \n", Input{}, "empty hook input"},
		{"not json", "hello", Input{}, "not a JSON object"},
		{"array", "[1]", Input{}, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadInputNeverHangs(t *testing.T) {
	r, w := io.Pipe() // a writer that never closes
	defer w.Close()
	start := time.Now()
	_, err := ReadInput(r, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no hook input") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestReadInputTooLarge(t *testing.T) {
	big := bytes.Repeat([]byte("x"), MaxInput+10)
	if _, err := ReadInput(bytes.NewReader(big), time.Second); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v", err)
	}
}

func TestResultWrite(t *testing.T) {
	tests := []struct {
		name         string
		r            Result
		format       string
		code         int
		stdout, errs string
	}{
		{"silent allow", Allow(""), FormatExit2, 0, "", ""},
		{"allow with message", Allow("hi"), FormatExit2, 0, "{\"systemMessage\":\"hi\"}\n", ""},
		{"block exit2", Result{Block: true, Reason: "fix it"}, FormatExit2, 2, "", "fix it\n"},
		{"block json", Result{Block: true, Reason: "fix \"it\""}, FormatJSON, 0, "{\"decision\":\"block\",\"reason\":\"fix \\\"it\\\"\"}\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := tc.r.Write(&out, &errb, tc.format); code != tc.code {
				t.Errorf("code = %d, want %d", code, tc.code)
			}
			if out.String() != tc.stdout || errb.String() != tc.errs {
				t.Errorf("stdout %q stderr %q, want %q %q", out.String(), errb.String(), tc.stdout, tc.errs)
			}
		})
	}
}

func TestBlockMessages(t *testing.T) {
	for _, review := range []string{"plan-review", "tasks-review", "code-review", "all-code-review"} {
		for _, verdict := range []string{"FAIL", "PASS", ""} {
			t.Run(review+"/"+verdict, func(t *testing.T) {
				d := BlockData{Plan: "p", Task: "3", Review: review, Model: "opus", Verdict: verdict,
					Iteration: 2, NextIteration: 3, Clean: 1, ReviewFile: "R-FILE", PostFile: "P-FILE",
					StateFile: ".taskie/plans/p/state.json"}
				msg := BlockMessage(d)
				post := "post-" + review
				for _, want := range []string{"R-FILE", "P-FILE", "taskie done " + post, `"phase": "` + post + `"`,
					"independent", "taskie pause", " 2 "} {
					if !strings.Contains(msg, want) {
						t.Errorf("message lacks %q:\n%s", want, msg)
					}
				}
				if verdict == "PASS" && !strings.Contains(msg, "passed; one more clean review is needed") {
					t.Errorf("a first PASS must say one more clean review is needed:\n%s", msg)
				}
			})
		}
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSummaryIsSmallAndSaysTheNextStep(t *testing.T) {
	root := t.TempDir()
	var criteria strings.Builder
	for i := 0; i < 200; i++ {
		criteria.WriteString("- [ ] a long acceptance criterion that goes on and on and on\n")
	}
	writeFiles(t, root, map[string]string{
		".taskie/plans/p/plan.md":    "# Plan\n",
		".taskie/plans/p/tasks.md":   "| Id | Status |\n|---|---|\n| 1 | in-progress |\n",
		".taskie/plans/p/task-1.md":  "# Task 1\n" + criteria.String() + "- [x] done one\n",
		".taskie/plans/p/state.json": `{"phase":"post-code-review","next_phase":"code-review","current_task":"1","phase_iteration":1}`,
	})
	r, err := plan.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := project.Get(r, "p")
	if err != nil {
		t.Fatal(err)
	}
	s := Summary(p)
	if len(s) > SummaryBudget {
		t.Errorf("summary is %d bytes, budget %d", len(s), SummaryBudget)
	}
	for _, want := range []string{"phase post-code-review → next code-review", "Task 1", "(current_task)", "- [ ] a long", "190 more", "next: end-turn", "code-review iteration 2 is due", "taskie continue"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestSelectPlanPrefersOwnSessionThenTranscript(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/a/plan.md":    "# a\n",
		".taskie/plans/a/state.json": `{"phase":"new-plan","session_id":"A"}`,
		".taskie/plans/b/plan.md":    "# b\n",
		".taskie/plans/b/state.json": `{"phase":"new-plan"}`,
		".taskie/plans/c/plan.md":    "# c\n",
		".taskie/plans/c/state.json": `{"phase":"new-plan"}`,
		"t.jsonl":                    `{"command":"taskie plan new c --auto"}` + "\n" + `{"file":".taskie/plans/b/plan.md"}` + "\n",
	})
	r, _ := plan.Find(root)
	now := time.Now()
	// b is the most recent plan on disk, but session A owns a.
	future := now.Add(time.Minute)
	_ = os.Chtimes(filepath.Join(root, ".taskie/plans/c/state.json"), future, future)
	if got := SelectPlan(r, Input{SessionID: "A"}, now); got != "a" {
		t.Errorf("session A got %q, want its own plan a", got)
	}
	if got := SelectPlan(r, Input{SessionID: "B", TranscriptPath: filepath.Join(root, "t.jsonl")}, now); got != "b" {
		t.Errorf("session B got %q, want b (mentioned last in its transcript)", got)
	}
	if got := SelectPlan(r, Input{SessionID: "C"}, now); got != "c" {
		t.Errorf("session C got %q, want the most recent plan c", got)
	}
	// A live owner keeps its plan from other sessions; a stale one does not.
	if err := (&Session{ID: "A", path: sessionPath(r.TaskieDir(), "A")}).Save(now); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(filepath.Join(root, ".taskie/plans/a/state.json"), future.Add(time.Minute), future.Add(time.Minute))
	if got := SelectPlan(r, Input{SessionID: "D"}, now); got == "a" {
		t.Error("session D took plan a from live session A")
	}
	if got := SelectPlan(r, Input{SessionID: "D"}, now.Add(OwnerTTL+time.Minute)); got != "a" {
		t.Errorf("session D got %q, want a once A is stale", got)
	}
}
