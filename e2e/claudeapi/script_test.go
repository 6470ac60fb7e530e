package claudeapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// request builds a Request the way the CLI sends it: tools by name,
// messages as given (content as a string or as blocks).
func request(t *testing.T, tools []string, messages ...string) *Request {
	t.Helper()
	var ts []string
	for _, name := range tools {
		ts = append(ts, fmt.Sprintf(`{"name":%q,"input_schema":{"type":"object"}}`, name))
	}
	body := fmt.Sprintf(`{"model":"claude-test","stream":true,"system":[{"type":"text","text":"You are Claude Code."}],
		"tools":[%s],"messages":[%s]}`, strings.Join(ts, ","), strings.Join(messages, ","))
	var req Request
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return &req
}

func user(text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"<system-reminder>date</system-reminder>"},{"type":"text","text":%s}]}`, b)
}

func userString(text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"role":"user","content":%s}`, b)
}

func assistantTool(id, name string) string {
	return fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":{}}]}`, id, name)
}

func assistantText(text string) string {
	return fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q}]}`, text)
}

func toolResult(id, text string, isError bool) string {
	return fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q,"is_error":%v}]}`, id, text, isError)
}

var (
	agentTools    = []string{"Agent", "Bash", "Edit", "Read", "Write"}
	reviewerTools = []string{"Bash", "Glob", "Grep", "Read", "StructuredOutput", "Write"}
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		tools []string
		want  Role
	}{
		{agentTools, Agent},
		{reviewerTools, Reviewer},
		{[]string{"StructuredOutput"}, Reviewer},
		{nil, Side},
		{[]string{"Read"}, Side},
		{[]string{"Bash"}, Side},
	} {
		if got := Detect(request(t, tc.tools, user("hi"))); got != tc.want {
			t.Errorf("tools %v: %s, want %s", tc.tools, got, tc.want)
		}
	}
}

// block is a code-review block message as taskie writes it.
const block = "Stop hook feedback:\n[taskie hook stop]: taskie: code review 1 of task 1 (plan \"p\") is in: FAIL\n" +
	"An independent reviewer (model opus) wrote:\n  .taskie/plans/p/task-1-review-1.md\n\n" +
	"3. Write .taskie/plans/p/task-1-post-review-1.md: for every finding, what you changed.\n" +
	"4. Record it: `taskie done post-code-review --plan p`\n" +
	"   (fallback: set \"phase\": \"post-code-review\" in .taskie/plans/p/state.json).\n"

func TestAgentFirstTurnStepByStep(t *testing.T) {
	s := &Script{Dir: "/proj", FirstTurn: []Reply{
		Call("Bash", map[string]any{"command": "taskie start 1 --auto"}),
		Call("Write", map[string]any{"file_path": "/proj/hello.go", "content": "package hello\n"}),
		Text("Done."),
	}}
	msgs := []string{user("Implement task 1."), `{"role":"system","content":"SessionStart hook additional context: plan p"}`}
	want := []string{"Bash taskie start 1 --auto", "Write /proj/hello.go", "text: Done.", "text: Nothing left to do in this turn."}
	for i, w := range want {
		reply, feedback := s.AgentReply(request(t, agentTools, msgs...))
		if got := reply.Summary(); got != w || feedback != "" {
			t.Fatalf("step %d: %q (feedback %q), want %q", i, got, feedback, w)
		}
		id := fmt.Sprintf("toolu_%d", i)
		msgs = append(msgs, assistantTool(id, "X"), toolResult(id, "ok", false))
	}
}

func TestAgentPostReviewAfterBlock(t *testing.T) {
	s := &Script{Dir: "/proj", FirstTurn: []Reply{Text("Done.")}}
	// The CLI sends the first block as a text block and later ones as a
	// plain string; both start a new turn.
	for _, feedbackMsg := range []string{user(block), userString(block)} {
		msgs := []string{user("Implement task 1."), assistantText("Done."), feedbackMsg}
		want := []string{
			"Read /proj/.taskie/plans/p/task-1-review-1.md",
			"Write /proj/.taskie/plans/p/task-1-post-review-1.md",
			"Bash taskie done post-code-review --plan p",
			"text: Post-review written and recorded: task-1-post-review-1.md.",
		}
		for i, w := range want {
			reply, feedback := s.AgentReply(request(t, agentTools, msgs...))
			if got := reply.Summary(); got != w {
				t.Fatalf("step %d: %q, want %q", i, got, w)
			}
			if !strings.Contains(feedback, "code review 1 of task 1") {
				t.Fatalf("step %d: feedback %q", i, feedback)
			}
			id := fmt.Sprintf("toolu_%d", i)
			msgs = append(msgs, assistantTool(id, "X"), toolResult(id, "ok", false))
		}
	}
}

// A block listing findings by id: the agent marks each fixed before it
// records the post-review, with the block's --plan.
func TestAgentMarksListedFindingsFixed(t *testing.T) {
	s := &Script{Dir: "/proj"}
	withFindings := strings.Replace(block, "\n3. Write", "\nOpen findings on record (ids are stable for this review cycle):\n"+
		"  - F1 (major) hello.go — the empty name is not handled\n  - F3 (minor) — naming\n\n3. Write", 1)
	msgs := []string{user("Implement task 1."), assistantText("Done."), userString(withFindings)}
	want := []string{
		"Read /proj/.taskie/plans/p/task-1-review-1.md",
		"Write /proj/.taskie/plans/p/task-1-post-review-1.md",
		`Bash taskie finding fixed F1 --note "hello.go handles the empty name" --plan p`,
		`Bash taskie finding fixed F3 --note "hello.go handles the empty name" --plan p`,
		"Bash taskie done post-code-review --plan p",
		"text: Post-review written and recorded: task-1-post-review-1.md.",
	}
	for i, w := range want {
		reply, _ := s.AgentReply(request(t, agentTools, msgs...))
		if got := reply.Summary(); got != w {
			t.Fatalf("step %d: %q, want %q", i, got, w)
		}
		id := fmt.Sprintf("toolu_%d", i)
		msgs = append(msgs, assistantTool(id, "X"), toolResult(id, "ok", false))
	}
}

func TestAgentFollowsLatestBlock(t *testing.T) {
	s := &Script{Dir: "/proj"}
	second := strings.NewReplacer("review 1", "review 2", "review-1", "review-2").Replace(block)
	msgs := []string{user("go"), assistantText("Done."), userString(block),
		assistantTool("a", "Read"), toolResult("a", "ok", false), assistantText("Post-review written."),
		userString(second)}
	reply, feedback := s.AgentReply(request(t, agentTools, msgs...))
	if got := reply.Summary(); got != "Read /proj/.taskie/plans/p/task-1-review-2.md" {
		t.Errorf("reply %q", got)
	}
	if feedback != second {
		t.Errorf("feedback is not the latest block: %q", feedback)
	}
}

func TestAgentBlockWithoutFiles(t *testing.T) {
	s := &Script{}
	reply, _ := s.AgentReply(request(t, agentTools, user("go"), assistantText("Done."),
		userString("Stop hook feedback:\n[taskie hook stop]: plan.md is missing")))
	if reply.Tool != nil || !strings.Contains(reply.Text, "names no review") {
		t.Errorf("reply %+v", reply)
	}
}

const reviewerPrompt = "# Code review of task 1 of plan p (iteration 2)\n\n" +
	"Do not read or rely on earlier review files such as `/proj/.taskie/plans/p/task-1-post-review-1.md`.\n" +
	"- `/proj/.taskie/plans/p/task-1.md`: the task under review\n\n## Review file\n\n" +
	"Write your review, in Markdown, to exactly this path:\n\n`/proj/.taskie/plans/p/task-1-review-2.md`\n"

func TestReviewFile(t *testing.T) {
	path, n := ReviewFile(reviewerPrompt)
	if path != "/proj/.taskie/plans/p/task-1-review-2.md" || n != 2 {
		t.Errorf("ReviewFile: %q, %d", path, n)
	}
	if path, n := ReviewFile("no file here"); path != "" || n != 0 {
		t.Errorf("ReviewFile on no path: %q, %d", path, n)
	}
	if path, _ := ReviewFile("write `/p/plan-review-1.md`"); path != "/p/plan-review-1.md" {
		t.Errorf("plan review: %q", path)
	}
}

func TestReviewerWritesThenReturnsVerdict(t *testing.T) {
	s := &Script{Verdicts: []string{"PASS", "FAIL"}} // iteration 2 → FAIL
	msgs := []string{user(reviewerPrompt)}
	r0 := s.ReviewerReply(request(t, reviewerTools, msgs...))
	if r0.Tool == nil || r0.Tool.Name != "Write" || r0.Tool.Input["file_path"] != "/proj/.taskie/plans/p/task-1-review-2.md" {
		t.Fatalf("first reply %+v", r0)
	}
	msgs = append(msgs, assistantTool("w", "Write"), toolResult("w", "File created", false))
	r1 := s.ReviewerReply(request(t, reviewerTools, msgs...))
	if r1.Tool == nil || r1.Tool.Name != "StructuredOutput" || r1.Tool.Input["verdict"] != "FAIL" {
		t.Fatalf("second reply %+v", r1)
	}
	if review, _ := r1.Tool.Input["review"].(string); review != r0.Tool.Input["content"] {
		t.Errorf("structured review text differs from the file: %q", review)
	}
	msgs = append(msgs, assistantTool("s", "StructuredOutput"), toolResult("s", "ok", false))
	if r2 := s.ReviewerReply(request(t, reviewerTools, msgs...)); r2.Tool != nil {
		t.Errorf("third reply should be text: %+v", r2)
	}
}

func TestReviewerVerdictPastScriptIsPass(t *testing.T) {
	s := &Script{}
	msgs := []string{user(reviewerPrompt), assistantTool("w", "Write"), toolResult("w", "ok", false)}
	if r := s.ReviewerReply(request(t, reviewerTools, msgs...)); r.Tool == nil || r.Tool.Input["verdict"] != "PASS" {
		t.Errorf("reply %+v", r)
	}
}

func TestSeriesVerdicts(t *testing.T) {
	for path, want := range map[string]string{
		"/proj/.taskie/plans/p/task-1-review-2.md":   "task-1-review",
		"/proj/.taskie/plans/p/plan-review-1.md":     "plan-review",
		".taskie/plans/p/all-code-review-3.md":       "all-code-review",
		"/proj/.taskie/plans/p/tasks-review-10.md":   "tasks-review",
		"/proj/.taskie/plans/p/not-a-review-file.md": "",
	} {
		if got := Series(path); got != want {
			t.Errorf("Series(%q) = %q, want %q", path, got, want)
		}
	}
	s := &Script{Verdicts: []string{"FAIL"}, SeriesVerdicts: map[string][]string{"plan-review": {"PASS", "FAIL"}}}
	for _, tc := range []struct {
		path string
		n    int
		want string
	}{
		{"/p/plan-review-1.md", 1, "PASS"},
		{"/p/plan-review-2.md", 2, "FAIL"},
		{"/p/plan-review-3.md", 3, "PASS"},   // past the end
		{"/p/task-1-review-1.md", 1, "FAIL"}, // no series: Verdicts
		{"/p/task-1-review-2.md", 2, "PASS"},
	} {
		if got := s.Verdict(tc.path, tc.n); got != tc.want {
			t.Errorf("Verdict(%q, %d) = %q, want %q", tc.path, tc.n, got, tc.want)
		}
	}
}

func TestAgentIgnoresBlocks(t *testing.T) {
	s := &Script{Dir: "/proj", FirstTurn: []Reply{Text("Done.")}, IgnoreBlocks: true}
	reply, feedback := s.AgentReply(request(t, agentTools, user("go"), assistantText("Done."), userString(block)))
	if reply.Tool != nil || reply.Text != IgnoredBlockText || feedback != block {
		t.Errorf("reply %+v, feedback %q", reply, feedback)
	}
	// The first turn is unchanged.
	if reply, _ := s.AgentReply(request(t, agentTools, user("go"))); reply.Text != "Done." {
		t.Errorf("first turn reply %+v", reply)
	}
}

// TestCTOReview: a request whose StructuredOutput takes taskie's CTO
// schema gets the scripted decision of the attempt its prompt names (a
// guided retry past the script's end), never a review file; the agent
// answers the CTO's block by quoting the guidance and ending its turn.
func TestCTOReview(t *testing.T) {
	cto := func(prompt string) *Request {
		body := `{"model":"m","tools":[{"name":"StructuredOutput","input_schema":{"type":"object","properties":{"decision":{"enum":["guided_retry","rollback","skip","escalate"]}}}}],"messages":[` + user(prompt) + `]}`
		var req Request
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		return &req
	}
	s := Script{CTO: []CTOAnswer{{Decision: "guided_retry", Guidance: "Split the parser."}, {Decision: "escalate", Guidance: "A human decides."}}}
	plain := request(t, []string{"StructuredOutput"}, user("Write .taskie/plans/p/task-1-review-3.md"))
	if plain.IsCTO() {
		t.Error("a code review's request counts as a CTO review")
	}
	for _, tc := range []struct{ prompt, want string }{
		{"# CTO review of plan p (CTO attempt 1)\nRead task-1-review-3.md", "StructuredOutput guided_retry"},
		{"# CTO review of plan p (CTO attempt 2)", "StructuredOutput escalate"},
		{"# CTO review of plan p (CTO attempt 3)", "StructuredOutput guided_retry"},
	} {
		req := cto(tc.prompt)
		if !req.IsCTO() {
			t.Fatalf("%q: not recognised as a CTO review", tc.prompt)
		}
		if got := s.ReviewerReply(req).Summary(); got != tc.want {
			t.Errorf("%q: reply %q, want %q", tc.prompt, got, tc.want)
		}
	}
	block := "Stop hook feedback:\n[taskie hook stop]: taskie: the CTO reviewed task 1 (attempt 1 of 2) and decided: guided retry. The CTO's guidance (also in .taskie/plans/p/task-1-cto-1.md):\n\n    Split the parser.\n\nFollow it."
	reply, fb := s.AgentReply(request(t, []string{"Bash", "Write"}, user("go"), assistantTool("t1", "Bash"), userString(block)))
	if fb != block || reply.Text != CTOFollowedText+"Split the parser." {
		t.Errorf("the agent's answer to the CTO's block: %q (feedback %q)", reply.Text, fb)
	}
}
