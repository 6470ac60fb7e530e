package codexapi

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Role says who a request comes from.
type Role string

const (
	// Agent is the main `codex exec` session the test starts: Codex offers
	// it the exec_command tool.
	Agent Role = "agent"
	// Reviewer is the `codex exec --output-schema …` that taskie's Stop hook
	// runs: its request asks for a json_schema text format.
	Reviewer Role = "reviewer"
	// Side is anything else Codex asks on the way.
	Side Role = "side"
)

// HookPromptMarker starts the user message in which Codex 0.169.0 hands a
// Stop hook's block reason to the model:
// <hook_prompt hook_run_id="stop:0:<hooks.json>">REASON</hook_prompt>.
const HookPromptMarker = "<hook_prompt"

// Detect tells the parts apart: a structured-output request is the
// reviewer; one that offers exec_command is the agent.
func Detect(req *Request) Role {
	switch {
	case req.Text != nil && req.Text.Format != nil && req.Text.Format.Type == "json_schema":
		return Reviewer
	case req.HasTool("exec_command"):
		return Agent
	}
	return Side
}

// Script is what the fake model does.
type Script struct {
	// Dir is the project root: the block message names files relative to it.
	Dir string
	// FirstTurn is the agent's answer to the user's prompt, one reply per
	// request: commands, then a final text.
	FirstTurn []Reply
	// Verdicts are the reviewer's verdicts by review iteration: the review
	// of file …-review-<n>.md returns Verdicts[n-1] ("PASS" past the end).
	Verdicts []string
	// Findings are the reviewer's findings by review iteration, each a
	// JSON array of objects with every field the strict schema requires
	// (id, severity, title, file, line, status); "" or past the end: the
	// answer has no "findings", and the verdict alone decides.
	Findings []string
	// ReviewerTurn are replies (commands) every reviewer gives, one per
	// request, before its verdict.
	ReviewerTurn []Reply
}

var (
	reviewFileRe = regexp.MustCompile(`[\w./-]*review-(\d+)\.md`)
	postFileRe   = regexp.MustCompile(`[\w./-]*-post-review-\d+\.md`)
	doneCmdRe    = regexp.MustCompile("`(taskie done [^`]+)`")
	hookPromptRe = regexp.MustCompile(`(?s)<hook_prompt[^>]*>(.*?)</hook_prompt>`)
)

// AgentReply is the main agent's next reply. A turn starts at the user's
// prompt or at the latest Stop hook block (a hook_prompt message); the
// replies already given since then say which step comes next. feedback is
// the block reason the turn reacts to ("" on the first turn).
func (s *Script) AgentReply(req *Request) (reply Reply, feedback string) {
	start := 0
	for i, it := range req.Input {
		if it.Type == "message" && it.Role == "user" {
			if m := hookPromptRe.FindStringSubmatch(it.Text()); m != nil {
				start, feedback = i, unescape(m[1])
			}
		}
	}
	steps := s.FirstTurn
	if feedback != "" {
		steps = s.postReview(feedback)
	}
	n := 0
	for _, it := range req.Input[start:] {
		if it.IsModelOutput() {
			n++
		}
	}
	if n < len(steps) {
		return steps[n], feedback
	}
	return Text("Nothing left to do in this turn."), feedback
}

// unescape undoes the XML escaping Codex may apply inside hook_prompt.
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&").Replace(s)
}

// postReview is the agent's answer to a review block: read the review,
// write the post-review file the message names, record it with the
// command the message gives, and end the turn.
func (s *Script) postReview(feedback string) []Reply {
	post := postFileRe.FindString(feedback)
	review := ""
	for _, m := range reviewFileRe.FindAllString(feedback, -1) {
		if !strings.Contains(m, "post-review") {
			review = m
			break
		}
	}
	if post == "" || review == "" {
		return []Reply{Text("The Stop hook feedback names no review and post-review file; stopping.")}
	}
	done := "taskie done post-code-review"
	if m := doneCmdRe.FindStringSubmatch(feedback); m != nil {
		done = m[1]
	}
	content := fmt.Sprintf("# Post-review\n\nRead %s. Finding 1: fixed (hello.go now handles the empty name).\n", filepath.Base(review))
	return []Reply{
		Exec("cat " + review),
		Exec("cat > " + post + " <<'EOF'\n" + content + "EOF"),
		Exec(done),
		Text("Post-review written and recorded: " + filepath.Base(post) + "."),
	}
}

// ReviewerReply is the reviewer's answer: the final message is the JSON
// object the output schema asks for, with the scripted verdict and the
// review text (the reviewer's sandbox is read-only: taskie writes the file).
func (s *Script) ReviewerReply(req *Request) Reply {
	n := 0
	for _, it := range req.Input {
		if it.IsModelOutput() {
			n++
		}
	}
	if n < len(s.ReviewerTurn) {
		return s.ReviewerTurn[n]
	}
	path, iteration := ReviewFile(req.MessagesText("user"))
	if path == "" {
		return Text(`{"verdict":"FAIL","review":"The prompt names no review file."}`)
	}
	verdict := "PASS"
	if iteration <= len(s.Verdicts) {
		verdict = s.Verdicts[iteration-1]
	}
	review := fmt.Sprintf("# Review, iteration %d\n\n## Findings\n%s\n\n## Verdict\n%s\n", iteration, findings(verdict), verdict)
	answer := map[string]any{"verdict": verdict, "review": review}
	if iteration <= len(s.Findings) && s.Findings[iteration-1] != "" {
		answer["findings"] = json.RawMessage(s.Findings[iteration-1])
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return Text(fmt.Sprintf(`{"verdict":"FAIL","review":"the test's scripted findings for review %d are not JSON: %v"}`, iteration, err))
	}
	return Text(string(b))
}

// ReviewFile finds the review file a reviewer prompt asks for: the last
// `…-review-<n>.md` path in it that is not a post-review, and its n.
func ReviewFile(prompt string) (path string, iteration int) {
	for _, m := range reviewFileRe.FindAllStringSubmatch(prompt, -1) {
		if strings.Contains(m[0], "post-review") {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err == nil && n > 0 {
			path, iteration = m[0], n
		}
	}
	return path, iteration
}

func findings(verdict string) string {
	if verdict == "PASS" {
		return "No findings."
	}
	return "1. [major] hello.go: the empty name is not handled."
}
