package claudeapi

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Role says who a request comes from.
type Role string

const (
	// Agent is the main Claude Code session the test starts.
	Agent Role = "agent"
	// Reviewer is the nested `claude -p --json-schema …` that taskie's Stop
	// hook runs: the CLI offers it the StructuredOutput tool.
	Reviewer Role = "reviewer"
	// Side is anything else the CLI asks on the way (titles, summaries, …).
	Side Role = "side"
)

// FeedbackMarker starts the message in which Claude Code hands a Stop
// hook's block reason to the model.
const FeedbackMarker = "Stop hook feedback"

// Detect tells the two scripted parts apart by the tools on offer: only a
// `--json-schema` run gets StructuredOutput, and the main session gets
// Bash and Write. Requests with neither are side requests.
func Detect(req *Request) Role {
	switch {
	case req.HasTool("StructuredOutput"):
		return Reviewer
	case req.HasTool("Bash") && req.HasTool("Write"):
		return Agent
	}
	return Side
}

// Script is what the fake model does.
type Script struct {
	// Dir is the project root: the block message names files relative to
	// it, and Claude Code's Write and Read tools want absolute paths.
	Dir string
	// FirstTurn is the agent's answer to the user's prompt, one reply per
	// request: tool calls, then a final text.
	FirstTurn []Reply
	// Verdicts are the reviewer's verdicts by review iteration: the review
	// of file …-review-<n>.md returns Verdicts[n-1] ("PASS" past the end).
	Verdicts []string
	// SeriesVerdicts, when it names the series of a review file, takes
	// precedence over Verdicts: the key is the file's name without
	// "-<n>.md" ("plan-review", "tasks-review", "task-1-review",
	// "all-code-review"), the value the verdicts by iteration ("PASS" past
	// the end).
	SeriesVerdicts map[string][]string
	// ReviewerGate, if not nil, holds every reviewer reply back until it
	// is closed, so that a test can watch a review in progress and let it
	// go on as soon as it has seen it; ReviewerGateLimit, if not 0, bounds
	// how long one reply is held.
	ReviewerGate      <-chan struct{}
	ReviewerGateLimit time.Duration
	// CTO are the CTO's answers by attempt (CTO[n-1] for attempt n): a CTO
	// review (taskie's CTO schema) answers with it; past the end, a guided
	// retry with CTOGuidance.
	CTO []CTOAnswer
	// NoFindings: the reviewer reports no finding (an empty list, as the
	// schema requires), so the verdicts drive the cycle and no finding
	// goes round to stop it for a human (with ratchet_after above the
	// reviews run, a FAIL counts as failed).
	NoFindings bool
	// IgnoreBlocks makes the agent answer every Stop hook block by ending
	// its turn again at once, without the post-review the block asks for.
	IgnoreBlocks bool
}

// CTOAnswer is a CTO review's structured decision.
type CTOAnswer struct {
	Decision   string // guided_retry, rollback, skip, escalate
	Guidance   string
	RollbackTo string
}

// CTOGuidance is the guidance of a CTO answer the script does not name.
const CTOGuidance = "Handle the empty name in Greet and test it."

// CTOFeedbackMarker is in the block of a CTO review that sends the agent
// back to work: the guidance follows it.
const CTOFeedbackMarker = "The CTO's guidance"

// CTOFollowedText starts what the agent says after a CTO's guidance.
const CTOFollowedText = "Following the CTO's guidance: "

// IgnoredBlockText is what the agent says when IgnoreBlocks is set.
const IgnoredBlockText = "I am not doing the post-review now; ending my turn."

var (
	// reviewFileRe finds review files and post-review files by their name.
	reviewFileRe = regexp.MustCompile(`[\w./-]*review-(\d+)\.md`)
	postFileRe   = regexp.MustCompile(`[\w./-]*-post-review-\d+\.md`)
	doneCmdRe    = regexp.MustCompile("`(taskie done [^`]+)`")
	// findingRe finds the findings a block lists by id ("  - F1 (major) …").
	findingRe  = regexp.MustCompile(`(?m)^\s*- (F\d+) \(`)
	planFlagRe = regexp.MustCompile(` --plan \S+`)
)

// FixNote is the note the scripted agent records with each finding it
// marks fixed (`taskie finding fixed <id> --note …`).
const FixNote = "hello.go handles the empty name"

// AgentReply is the main agent's next reply. A turn starts at the user's
// prompt or at the latest Stop hook feedback; the replies already given
// in this turn say which step comes next. feedback is the block message
// the turn reacts to ("" on the first turn).
func (s *Script) AgentReply(req *Request) (reply Reply, feedback string) {
	start := 0
	for i, m := range req.Messages {
		if m.Role != "assistant" && strings.Contains(m.Text(), FeedbackMarker) {
			start, feedback = i, m.Text()
		}
	}
	steps := s.FirstTurn
	switch {
	case feedback != "" && s.IgnoreBlocks:
		steps = []Reply{Text(IgnoredBlockText)}
	case strings.Contains(feedback, CTOFeedbackMarker):
		// Nothing to post-review: follow the guidance, end the turn, and
		// the next stop reviews again.
		steps = []Reply{Text(CTOFollowedText + ctoGuidanceOf(feedback))}
	case feedback != "":
		steps = s.postReview(feedback)
	}
	n := countRole(req.Messages[start:], "assistant")
	if n < len(steps) {
		return steps[n], feedback
	}
	return Text("Nothing left to do in this turn."), feedback
}

// postReview is the agent's answer to a review block: read the review,
// write the post-review file the message names, mark each finding the
// message lists by id fixed (`taskie finding fixed`), record the
// post-review with the command the message gives, and end the turn.
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
	steps := []Reply{
		Call("Read", map[string]any{"file_path": s.abs(review)}),
		Call("Write", map[string]any{"file_path": s.abs(post), "content": fmt.Sprintf(
			"# Post-review\n\nRead %s. Finding 1: fixed (hello.go now handles the empty name).\n", filepath.Base(review))}),
	}
	plan := planFlagRe.FindString(done)
	for _, m := range findingRe.FindAllStringSubmatch(feedback, -1) {
		steps = append(steps, Call("Bash", map[string]any{
			"command":     fmt.Sprintf("taskie finding fixed %s --note %q%s", m[1], FixNote, plan),
			"description": "Record finding " + m[1] + " as fixed"}))
	}
	return append(steps,
		Call("Bash", map[string]any{"command": done, "description": "Record the post-review in taskie"}),
		Text("Post-review written and recorded: "+filepath.Base(post)+"."))
}

// ReviewerReply is the nested reviewer's next reply: write the review file
// its prompt names, return the scripted verdict as structured output, then
// a short final text.
func (s *Script) ReviewerReply(req *Request) Reply {
	var prompt strings.Builder
	for _, m := range req.Messages {
		if m.Role == "user" {
			prompt.WriteString(m.Text())
		}
	}
	if req.IsCTO() {
		return s.ctoReply(req, prompt.String())
	}
	path, iteration := ReviewFile(prompt.String())
	if path == "" {
		return Text("The prompt names no review file.")
	}
	verdict := s.Verdict(path, iteration)
	review := fmt.Sprintf("# Review, iteration %d\n\n## Findings\n%s\n\n## Verdict\n%s\n",
		iteration, findings(verdict), verdict)
	answer := map[string]any{"verdict": verdict, "review": review, "findings": []map[string]any{}}
	if !s.NoFindings {
		answer["findings"] = structuredFindings(verdict, prompt.String())
	}
	steps := []Reply{
		Call("Write", map[string]any{"file_path": path, "content": review}),
		Call("StructuredOutput", answer),
		Text("Review written: " + verdict + "."),
	}
	if n := countRole(req.Messages, "assistant"); n < len(steps) {
		return steps[n]
	}
	return Text(verdict)
}

var ctoAttemptRe = regexp.MustCompile(`CTO attempt (\d+)`)

// ctoReply is a CTO review's next reply: the scripted decision of the
// attempt the prompt names, as structured output, then a short text. The
// CTO writes no file: taskie writes its guidance.
func (s *Script) ctoReply(req *Request, prompt string) Reply {
	attempt := 1
	if m := ctoAttemptRe.FindStringSubmatch(prompt); m != nil {
		attempt, _ = strconv.Atoi(m[1])
	}
	a := CTOAnswer{Decision: "guided_retry", Guidance: CTOGuidance}
	if attempt >= 1 && attempt <= len(s.CTO) {
		a = s.CTO[attempt-1]
	}
	steps := []Reply{
		Call("StructuredOutput", map[string]any{"decision": a.Decision, "guidance": a.Guidance, "rollback_to": a.RollbackTo,
			"review": fmt.Sprintf("# CTO review, attempt %d\n\nThe reviews keep finding the empty name unhandled.\n", attempt)}),
		Text("CTO decision: " + a.Decision + "."),
	}
	if n := countRole(req.Messages, "assistant"); n < len(steps) {
		return steps[n]
	}
	return Text(a.Decision)
}

// ctoGuidanceOf is the first line of the guidance a CTO block quotes.
func ctoGuidanceOf(feedback string) string {
	_, rest, _ := strings.Cut(feedback, CTOFeedbackMarker)
	_, rest, _ = strings.Cut(rest, "\n\n")
	return strings.TrimSpace(firstLine(strings.TrimSpace(rest)))
}

// Verdict is the scripted verdict for the review file path of an iteration.
func (s *Script) Verdict(path string, iteration int) string {
	verdicts, ok := s.SeriesVerdicts[Series(path)]
	if !ok {
		verdicts = s.Verdicts
	}
	if iteration >= 1 && iteration <= len(verdicts) {
		return verdicts[iteration-1]
	}
	return "PASS"
}

// Series is the review series a review file belongs to: its name without
// "-<n>.md" (".../task-1-review-2.md" → "task-1-review").
func Series(path string) string {
	if m := seriesRe.FindStringSubmatch(filepath.Base(path)); m != nil {
		return m[1]
	}
	return ""
}

var seriesRe = regexp.MustCompile(`^(.*)-\d+\.md$`)

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

// structuredFindings is the review ledger's part of the answer: a FAIL
// reports the empty-name finding (by its id once the prompt lists it as on
// record), a PASS reports it fixed when it is on record, else nothing.
func structuredFindings(verdict, prompt string) []map[string]any {
	onRecord := strings.Contains(prompt, "F1 (")
	f := map[string]any{"id": "", "severity": "major", "title": "the empty name is not handled", "file": "hello.go", "line": 0, "status": "open"}
	if onRecord {
		f["id"] = "F1"
	}
	switch {
	case verdict == "FAIL":
		return []map[string]any{f}
	case onRecord:
		f["status"] = "fixed"
		return []map[string]any{f}
	}
	return []map[string]any{}
}

func findings(verdict string) string {
	if verdict == "PASS" {
		return "No findings."
	}
	return "1. [major] hello.go: the empty name is not handled."
}

func (s *Script) abs(p string) string {
	if filepath.IsAbs(p) || s.Dir == "" {
		return p
	}
	return filepath.Join(s.Dir, p)
}

func countRole(ms []Message, role string) int {
	n := 0
	for _, m := range ms {
		if m.Role == role {
			n++
		}
	}
	return n
}
