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

func TestSelectPlan(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/a/plan.md":    "# a\n",
		".taskie/plans/a/state.json": `{"phase":"new-plan","next_phase":"plan-review","session_id":"A"}`,
		".taskie/plans/b/plan.md":    "# b\n",
		".taskie/plans/b/state.json": `{"phase":"new-plan","next_phase":"plan-review"}`,
		".taskie/plans/c/plan.md":    "# c\n",
		".taskie/plans/c/state.json": `{"phase":"new-plan","next_phase":"plan-review"}`,
		".taskie/plans/d/plan.md":    "# d\n",
		".taskie/plans/d/state.json": `{"phase":"complete"}`,
		"t.jsonl":                    `{"command":"taskie plan new c --auto"}` + "\n" + `{"file":".taskie/plans/b/plan.md"}` + "\n",
	})
	r, _ := plan.Find(root)
	now := time.Now()
	touch := func(id string, at time.Time) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(root, ".taskie/plans", id, "state.json"), at, at); err != nil {
			t.Fatal(err)
		}
	}
	touch("d", now.Add(time.Hour)) // the most recent plan, with nothing pending
	check := func(name string, in Input, at time.Time, want, wantMsg string) {
		t.Helper()
		got, msg := SelectPlan(r, in, at)
		if got != want || !strings.Contains(msg, wantMsg) {
			t.Errorf("%s: got %q %q, want %q and a message containing %q", name, got, msg, want, wantMsg)
		}
	}
	check("own pending plan", Input{SessionID: "A"}, now, "a", "")
	check("transcript names b last", Input{SessionID: "B", TranscriptPath: filepath.Join(root, "t.jsonl")}, now, "b", "")
	check("several pending plans, no mention: none", Input{SessionID: "C"}, now, "", "plans a, b, c all await automation")

	// A live owner keeps its plan from other sessions; a stale one does not.
	if err := (&Session{ID: "A", path: sessionPath(r.TaskieDir(), "A")}).Save(now); err != nil {
		t.Fatal(err)
	}
	check("live owner excluded", Input{SessionID: "C"}, now, "", "plans b, c all await")
	writeFiles(t, root, map[string]string{"resume.jsonl": `{"command":"taskie continue --plan a"}` + "\n"})
	check("a session that works on a plan takes it over", Input{SessionID: "E", TranscriptPath: filepath.Join(root, "resume.jsonl")}, now, "a", "")
	writeFiles(t, root, map[string]string{".taskie/plans/c/state.json": `{"phase":"complete"}`})
	check("the only pending plan free", Input{SessionID: "C"}, now, "b", "")
	writeFiles(t, root, map[string]string{".taskie/plans/b/state.json": `{"phase":"complete"}`})
	check("nothing pending: the most recent free plan", Input{SessionID: "C"}, now, "d", "")
	check("stale owner", Input{SessionID: "C"}, now.Add(OwnerTTL+time.Minute), "a", "")
}

func TestSelectPlanMentionsAreWholeIDs(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/auth/plan.md":       "# a\n",
		".taskie/plans/auth/state.json":    `{"phase":"new-plan","next_phase":"plan-review"}`,
		".taskie/plans/auth-v2/plan.md":    "# b\n",
		".taskie/plans/auth-v2/state.json": `{"phase":"new-plan","next_phase":"plan-review"}`,
		"t.jsonl":                          `{"command":"taskie status --plan auth-v2"}` + "\n",
		"u.jsonl":                          `{"file":".taskie/plans/auth/plan.md"} {"command":"taskie status --plan auth-v2x"}` + "\n",
	})
	r, _ := plan.Find(root)
	if got, _ := SelectPlan(r, Input{SessionID: "s", TranscriptPath: filepath.Join(root, "t.jsonl")}, time.Now()); got != "auth-v2" {
		t.Errorf("--plan auth-v2 selected %q", got)
	}
	if got, _ := SelectPlan(r, Input{SessionID: "s", TranscriptPath: filepath.Join(root, "u.jsonl")}, time.Now()); got != "auth" {
		t.Errorf("plans/auth/ (and no whole mention of auth-v2) selected %q", got)
	}
}

func TestSelectPlanQuietOwnerIsNamed(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/p/plan.md":    "# p\n",
		".taskie/plans/p/state.json": `{"phase":"new-plan","next_phase":"plan-review","session_id":"old"}`,
	})
	r, _ := plan.Find(root)
	now := time.Now()
	if err := (&Session{ID: "old", path: sessionPath(r.TaskieDir(), "old")}).Save(now.Add(-20 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	id, msg := SelectPlan(r, Input{SessionID: "new"}, now)
	if id != "" || !strings.Contains(msg, `plan "p" is owned by session old`) || !strings.Contains(msg, "--plan p") {
		t.Errorf("got %q %q", id, msg)
	}
	if err := (&Session{ID: "old", path: sessionPath(r.TaskieDir(), "old")}).Save(now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if id, msg := SelectPlan(r, Input{SessionID: "new"}, now); id != "" || msg != "" {
		t.Errorf("an active owner's plan: got %q %q, want silence", id, msg)
	}
}
