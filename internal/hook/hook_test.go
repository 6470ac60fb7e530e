package hook

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in string
		want     Input
		err      string
	}{
		{"claude", `{"session_id":"s","cwd":"/p","stop_hook_active":true,"transcript_path":"/t","hook_event_name":"Stop","extra":{"x":1}}`,
			Input{SessionID: "s", Cwd: "/p", TranscriptPath: "/t", HookEventName: "Stop", StopHookActive: true, Agent: Claude}, ""},
		{"codex", `{"session_id":"t","turn_id":"u","cwd":"/p","stop_hook_active":false,"hook_event_name":"Stop"}`,
			Input{SessionID: "t", Cwd: "/p", HookEventName: "Stop", Agent: Codex}, ""},
		{"active as string", `{"cwd":"/p","stop_hook_active":"true"}`, Input{Cwd: "/p", StopHookActive: true, Agent: Claude}, ""},
		{"active missing", `{"cwd":"/p"}`, Input{Cwd: "/p", Agent: Claude}, ""},
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
	if err == nil || !strings.Contains(err.Error(), "hook input") || !strings.Contains(err.Error(), "100ms") {
		t.Fatalf("err = %v, want a hook input error naming the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// An agent that writes its input and keeps the pipe open is answered at
// once, not after the deadline.
func TestReadInputCompleteObjectOnAnOpenPipe(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	go func() { _, _ = w.Write([]byte(`{"session_id":"s","cwd":"/p","stop_hook_active":true}`)) }()
	start := time.Now()
	in, err := ReadInput(r, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if in.SessionID != "s" || in.Cwd != "/p" || !in.StopHookActive {
		t.Errorf("input = %+v", in)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v: waited for the pipe to close", d)
	}
}

func TestReadInputTooLarge(t *testing.T) {
	big := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("x"), MaxInput+10)...), `"}`...)
	if _, err := ReadInput(bytes.NewReader(big), time.Second); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v", err)
	}
	garbage := bytes.Repeat([]byte("x"), MaxInput+10)
	if _, err := ReadInput(bytes.NewReader(garbage), time.Second); err == nil {
		t.Fatal("1 MiB of garbage accepted")
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
				d := BlockData{Plan: "p", Task: 3, Review: domain.Phase(review), Model: "opus", Verdict: domain.Verdict(verdict),
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
	p, err := implied.Get(r, "p", clock.Real())
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

// openStore opens the plan store of a test repository.
func openStore(t *testing.T, root string) *store.Files {
	t.Helper()
	r, err := plan.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := store.Open(r, clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs
}

// lastDecision records a session's last hook decision on a plan, at a time.
func lastDecision(t *testing.T, fs *store.Files, session, planID, decision string, at time.Time) {
	t.Helper()
	s := LoadSession(fs.Root(), session)
	s.Plan, s.LastDecision = planID, decision
	if err := s.Save(at); err != nil {
		t.Fatal(err)
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
		"t.jsonl":                    bash("taskie plan new c --auto") + "\n" + write(".taskie/plans/b/plan.md") + "\n",
	})
	fs := openStore(t, root)
	now := time.Now()
	const window = 10 * time.Minute
	touch := func(id string, at time.Time) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(root, ".taskie/plans", id, "state.json"), at, at); err != nil {
			t.Fatal(err)
		}
	}
	touch("d", now.Add(time.Hour)) // the most recent plan, with nothing pending
	// check wants plan want and a message containing every wantMsg (none:
	// no message).
	check := func(name string, in Input, at time.Time, want string, wantMsg ...string) Selection {
		t.Helper()
		sel := SelectPlan(fs, in, at, window)
		ok := sel.Plan == want && (len(wantMsg) > 0) == (sel.Message != "")
		for _, m := range wantMsg {
			ok = ok && strings.Contains(sel.Message, m)
		}
		if !ok {
			t.Errorf("%s: got %q (%s) %q, want %q and a message containing %q", name, sel.Plan, sel.Reason, sel.Message, want, wantMsg)
		}
		return sel
	}
	check("own pending plan", Input{SessionID: "A"}, now, "a")
	if sel := check("transcript names b last", Input{SessionID: "B", TranscriptPath: filepath.Join(root, "t.jsonl")}, now, "b"); sel.Takeover {
		t.Errorf("b has no owner: no takeover, got %+v", sel)
	}
	check("last_assistant_message names c", Input{SessionID: "B", LastAssistantMessage: "I updated .taskie/plans/c/plan.md"}, now, "c")
	check("several pending plans, no mention: none", Input{SessionID: "C"}, now, "", `"a"`, `"b"`, `"c"`, "await a plan review", "taskie status --plan")

	// An owner mid-turn (its last decision a block, within the window)
	// keeps its plan from other sessions; one whose turn ended does not.
	lastDecision(t, fs, "A", "a", "block", now.Add(-time.Minute))
	if sel := check("owner mid-turn excluded", Input{SessionID: "C"}, now, "", `"b"`, `"c"`, "await a plan review"); strings.Contains(sel.Message, `"a"`) {
		t.Errorf("the plan another session is mid-turn on is offered: %q", sel.Message)
	}
	check("the owner itself still drives it", Input{SessionID: "A"}, now, "a")
	writeFiles(t, root, map[string]string{"resume.jsonl": bash("taskie continue --plan a") + "\n"})
	if sel := check("a session that names a plan takes it over", Input{SessionID: "E", TranscriptPath: filepath.Join(root, "resume.jsonl")}, now, "a"); !sel.Takeover || sel.PreviousOwner != "A" {
		t.Errorf("naming plan a: want a takeover from A, got %+v", sel)
	}
	writeFiles(t, root, map[string]string{".taskie/plans/c/state.json": `{"phase":"complete"}`})
	check("the only pending plan free", Input{SessionID: "C"}, now, "b")
	writeFiles(t, root, map[string]string{".taskie/plans/b/state.json": `{"phase":"complete"}`})
	check("only a mid-turn plan pending: none, and say why", Input{SessionID: "C"}, now, "", `plan "a" awaits a plan review but session A is mid-turn on it`)
	if sel := check("the block is older than the window", Input{SessionID: "C"}, now.Add(window), "a"); !sel.Takeover || sel.PreviousOwner != "A" {
		t.Errorf("taking a plan whose owner's turn ended: want a takeover from A, got %+v", sel)
	}
	lastDecision(t, fs, "A", "a", "allow", now.Add(-time.Minute))
	check("the owner's turn ended: the plan is free", Input{SessionID: "C"}, now, "a")
	lastDecision(t, fs, "A", "other", "block", now.Add(-time.Minute))
	check("the owner's last block was on another plan", Input{SessionID: "C"}, now, "a")
	writeFiles(t, root, map[string]string{".taskie/plans/a/state.json": `{"phase":"complete","session_id":"A"}`})
	check("nothing pending: the most recent plan, for validation", Input{SessionID: "C"}, now, "d")
}

// bash and write are a Claude Code transcript's lines for the agent's tool
// calls.
func bash(command string) string {
	return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{"command":` + strconv.Quote(command) + `}}]}}`
}

func write(path string) string {
	return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":` + strconv.Quote(path) + `}}]}}`
}

// taskie's own words in a transcript — a tool result of `taskie status`, a
// block fed back as a user message, a systemMessage, SessionStart's context
// — never name a plan for the session: only the agent's own lines do.
func TestSelectPlanCountsOnlyTheAgentsWords(t *testing.T) {
	root := t.TempDir()
	refusal := `taskie: plan \"a\" awaits a plan review but session A is mid-turn on it (blocked 1m ago); to drive it from this session, run ` + "`taskie status --plan a`" + ` (naming the plan takes it over) and stop again.`
	writeFiles(t, root, map[string]string{
		".taskie/plans/a/plan.md":    "# a\n",
		".taskie/plans/a/state.json": `{"phase":"new-plan","next_phase":"plan-review","session_id":"A"}`,
		// Claude Code 2.1.197's lines for what taskie says.
		"claude.jsonl": strings.Join([]string{
			`{"type":"system","subtype":"stop_hook_summary","content":"` + refusal + `","level":"info"}`,
			`{"type":"attachment","attachment":{"type":"hook_additional_context","content":["` + refusal + `"],"hookEvent":"SessionStart"}}`,
			`{"type":"user","message":{"role":"user","content":"Stop hook feedback:\n[taskie hook stop]: review .taskie/plans/a/plan-review-1.md"}}`,
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hook:    last stop allow: ` + refusal + `"}]}}`,
		}, "\n") + "\n",
		// A Codex rollout's lines for the same.
		"rollout-2026-11-26T06-28-21-01a2.jsonl": strings.Join([]string{
			`{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"` + refusal + `"}]}}`,
			`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + refusal + `"}}`,
			`{"type":"event_msg","payload":{"type":"user_message","message":"` + refusal + `"}}`,
		}, "\n") + "\n",
		"agent.jsonl":       `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"` + refusal + `"}]}}` + "\n" + bash("taskie status --plan a") + "\n",
		"codex-agent.jsonl": `{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"taskie status --plan a\"]}"}}` + "\n",
	})
	fs := openStore(t, root)
	now := time.Now()
	lastDecision(t, fs, "A", "a", "block", now.Add(-time.Minute))
	for _, tc := range []struct {
		transcript, last string
		want             string
	}{
		{transcript: "claude.jsonl"},
		{transcript: "rollout-2026-11-26T06-28-21-01a2.jsonl"},
		{transcript: "agent.jsonl", want: "a"},
		{transcript: "codex-agent.jsonl", want: "a"},
		{last: "I ran taskie status --plan a to take it over.", want: "a"},
	} {
		in := Input{SessionID: "B", LastAssistantMessage: tc.last}
		if tc.transcript != "" {
			in.TranscriptPath = filepath.Join(root, tc.transcript)
		}
		sel := SelectPlan(fs, in, now, time.Hour)
		if sel.Plan != tc.want {
			t.Errorf("%s%s: chose %q (%s), want %q", tc.transcript, tc.last, sel.Plan, sel.Reason, tc.want)
		}
	}
}

func TestSelectPlanMentionsAreWholeIDs(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/auth/plan.md":       "# a\n",
		".taskie/plans/auth/state.json":    `{"phase":"new-plan","next_phase":"plan-review"}`,
		".taskie/plans/auth-v2/plan.md":    "# b\n",
		".taskie/plans/auth-v2/state.json": `{"phase":"new-plan","next_phase":"plan-review"}`,
		"t.jsonl":                          bash("taskie status --plan auth-v2") + "\n",
		"u.jsonl":                          write(".taskie/plans/auth/plan.md") + "\n" + bash("taskie status --plan auth-v2x") + "\n",
	})
	fs := openStore(t, root)
	if got := SelectPlan(fs, Input{SessionID: "s", TranscriptPath: filepath.Join(root, "t.jsonl")}, time.Now(), 0); got.Plan != "auth-v2" {
		t.Errorf("--plan auth-v2 selected %+v", got)
	}
	if got := SelectPlan(fs, Input{SessionID: "s", TranscriptPath: filepath.Join(root, "u.jsonl")}, time.Now(), 0); got.Plan != "auth" {
		t.Errorf("plans/auth/ (and no whole mention of auth-v2) selected %+v", got)
	}
}

// A plan chosen for this session's stop reads its state.json once: the
// bytes SelectPlan peeked at are the snapshot's.
func TestSelectPlanStateReadOnce(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".taskie/plans/p/plan.md":    "# p\n",
		".taskie/plans/p/state.json": `{"phase":"new-plan","next_phase":"plan-review"}`,
	})
	fs := openStore(t, root)
	if sel := SelectPlan(fs, Input{SessionID: "s"}, time.Now(), 0); sel.Plan != "p" {
		t.Fatalf("selected %+v", sel)
	}
	// Changed after the choice: the snapshot is the state the choice saw.
	writeFiles(t, root, map[string]string{".taskie/plans/p/state.json": `{"phase":"new-plan","next_phase":null}`})
	snap, err := fs.Load("p")
	if err != nil {
		t.Fatal(err)
	}
	if snap.State == nil || snap.State.Next() != "plan-review" {
		t.Errorf("snapshot after the choice = %s, want the peeked state", snap.StateRaw)
	}
	// The next load reads the file again.
	if snap, _ := fs.Load("p"); snap.State == nil || snap.State.Next() != "" {
		t.Errorf("second load = %s, want the file as it is now", snap.StateRaw)
	}
}
