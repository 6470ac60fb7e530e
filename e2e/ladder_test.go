//go:build unix

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/claudeapi"
)

// The escalation ladder in the real client (docs/lifecycle.md, "The CTO"):
// one `claude -p` turn whose agent starts task 1 and answers every block,
// with the plugin's real Stop hook and nested `claude -p` reviewers.

// TestRealClientCTOGuidance: code reviews 1–3 FAIL, so the fourth stop
// runs the CTO review (the CTO schema, the first model of the rotation)
// instead of code review 4; its guided retry blocks with the guidance,
// which reaches the agent in its next request; the agent follows it and
// ends its turn, and reviews 4 and 5 (PASS, PASS) pass the task.
func TestRealClientCTOGuidance(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	bin := queue(t, root, 30*time.Second)
	ctx, cancel := deadline(t)
	defer cancel()
	guidance := "Return \"hello, world\" from Greet(\"\") and add TestGreetEmpty."
	r := newRig(ctx, t, claude, root, bin, true, claudeapi.Script{
		Verdicts:   []string{"FAIL", "FAIL", "FAIL", "PASS", "PASS"},
		CTO:        []claudeapi.CTOAnswer{{Decision: "guided_retry", Guidance: guidance}},
		NoFindings: true, // verdicts alone: the ledger would stop a finding going round first
	})
	r.extra = []string{"--plugin-dir", filepath.Join(root, "plugin")}
	newProject(t, bin, r.proj)
	noRatchet(r)
	dir := r.planDir("p")

	tr := r.turn("fail three times", "Implement task 1 of the taskie plan p.",
		claudeapi.Call("Bash", map[string]any{"command": "taskie start 1 --auto", "description": "Start task 1"}),
		claudeapi.Call("Write", map[string]any{"file_path": filepath.Join(r.proj, "hello.go"), "content": helloGo}),
		claudeapi.Text("Task 1 is implemented in hello.go."))

	ds := of(stopDecisions(t, filepath.Join(r.proj, ".taskie", "logs", "p.log")), tr.SessionID)
	wantWhy := []string{"code-review 1: FAIL", "code-review 2: FAIL", "code-review 3: FAIL",
		"cto-review 1 of task 1: guided_retry", "code-review 4: PASS", "code-review 5: PASS"}
	checkDecisions(t, ds, wantWhy, []string{"block", "block", "block", "block", "block", "allow"})

	// The guidance reached the agent: the request after the CTO's block
	// holds it, and the agent's answer quotes it.
	fb := feedbacks(r.srv, tr.SessionID)
	var cto string
	for _, f := range fb {
		if strings.Contains(f, "the CTO reviewed task 1 (attempt 1 of 2)") {
			cto = f
		}
	}
	switch {
	case cto == "":
		t.Errorf("no block of the CTO review reached the agent; blocks:\n%s", strings.Join(fb, "\n---\n"))
	case !strings.Contains(cto, guidance) || !strings.Contains(cto, "task-1-cto-1.md"):
		t.Errorf("the CTO's block lacks the guidance or its file:\n%s", cto)
	default:
		t.Logf("the CTO's block as the agent got it:\n%s", cto)
	}
	if !agentSaid(r.srv, tr.SessionID, "text: "+claudeapi.CTOFollowedText+guidance) {
		t.Errorf("the agent did not answer the CTO's block with its guidance")
	}

	// One CTO run, with the CTO schema and the first model; no review 6.
	var ctoRuns []claudeapi.Record
	for _, rec := range firstPerSession(r.srv.Calls(claudeapi.Reviewer)) {
		if strings.Contains(rec.FirstUserText, "(CTO attempt ") {
			ctoRuns = append(ctoRuns, rec)
		}
	}
	if len(ctoRuns) != 1 || !strings.Contains(ctoRuns[0].Model, "opus") {
		t.Errorf("CTO reviewer sessions %d (models %q), want one on opus", len(ctoRuns), models(ctoRuns))
	}
	wantFiles(t, dir, []string{"task-1-review-1.md", "task-1-review-3.md", "task-1-review-4.md", "task-1-review-5.md", "task-1-cto-1.md"},
		[]string{"task-1-review-6.md", "task-1-cto-2.md"})
	if got := readFile(t, filepath.Join(dir, "task-1-cto-1.md")); !strings.Contains(got, "## Decision: guided_retry") || !strings.Contains(got, guidance) {
		t.Errorf("task-1-cto-1.md:\n%s", got)
	}
	evs := planEvents(t, filepath.Join(dir, "events.jsonl"))
	if got, want := reviewsFinished(evs), []string{"code-review 1 FAIL", "code-review 2 FAIL", "code-review 3 FAIL",
		"cto-review 1 guided_retry", "code-review 4 PASS", "code-review 5 PASS"}; !slices.Equal(got, want) {
		t.Errorf("events.jsonl: reviews\n  %q\nwant\n  %q", got, want)
	}
	// Passed: the plan moves on to task 2; the task awaits its commit.
	if st := readState(t, dir); st.next() != "complete-task" {
		t.Errorf("state.json: next_phase %q after the pass, want complete-task", st.next())
	}
	if out, _ := r.taskie("query", "--task", "1"); !strings.Contains(out, "committing") && !strings.Contains(out, "completed") {
		t.Errorf("taskie query --task 1: %s; want committing (passed, its commit not made yet)", out)
	}
	if out, code := r.taskie("recover", "--check", "p"); code != 0 {
		t.Errorf("taskie recover --check p: exit %d:\n%s", code, out)
	}
	matchStops(t, r.stopLog, of(stopDecisions(t, filepath.Join(r.proj, ".taskie", "logs", "p.log")), tr.SessionID))
	noToolErrors(t, r.srv)
}

// TestRealClientHumanEscalation: two CTO attempts without a pass (reviews
// 1–3 FAIL, CTO 1, reviews 4–6 FAIL, CTO 2, review 7 FAIL) hand the task
// to a human: the next stop runs no review and allows with what a human
// decides, naming `taskie task resolve`; `taskie continue` says the same.
func TestRealClientHumanEscalation(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	bin := queue(t, root, 40*time.Second)
	ctx, cancel := deadline(t)
	defer cancel()
	r := newRig(ctx, t, claude, root, bin, true, claudeapi.Script{
		Verdicts: []string{"FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "PASS"},
		CTO: []claudeapi.CTOAnswer{{Decision: "guided_retry", Guidance: "Handle the empty name."},
			{Decision: "guided_retry", Guidance: "Handle the empty name, really."}},
		NoFindings: true,
	})
	r.extra = []string{"--plugin-dir", filepath.Join(root, "plugin")}
	newProject(t, bin, r.proj)
	noRatchet(r)
	dir := r.planDir("p")

	tr := r.turn("never passes", "Implement task 1 of the taskie plan p.",
		claudeapi.Call("Bash", map[string]any{"command": "taskie start 1 --auto", "description": "Start task 1"}),
		claudeapi.Call("Write", map[string]any{"file_path": filepath.Join(r.proj, "hello.go"), "content": helloGo}),
		claudeapi.Text("Task 1 is implemented in hello.go."))

	ds := of(stopDecisions(t, filepath.Join(r.proj, ".taskie", "logs", "p.log")), tr.SessionID)
	wantWhy := []string{"code-review 1: FAIL", "code-review 2: FAIL", "code-review 3: FAIL", "cto-review 1 of task 1: guided_retry",
		"code-review 4: FAIL", "code-review 5: FAIL", "code-review 6: FAIL", "cto-review 2 of task 1: guided_retry",
		"code-review 7: FAIL", "human-escalation"}
	checkDecisions(t, ds, wantWhy, []string{"block", "block", "block", "block", "block", "block", "block", "block", "block", "allow"})

	// The last stop: no review, an allow that says what a human decides.
	msgs := r.stopSystemMessages(tr)
	if len(msgs) == 0 {
		t.Fatalf("the turn ended with no systemMessage from taskie")
	}
	last := msgs[len(msgs)-1]
	for _, want := range []string{"human_escalation", "taskie task resolve 1 --actor human", "taskie task abandon 1 --actor human"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last stop's message lacks %q:\n%s", want, last)
		}
	}
	t.Logf("the last stop said: %s", last)
	wantFiles(t, dir, []string{"task-1-review-7.md", "task-1-cto-1.md", "task-1-cto-2.md"}, []string{"task-1-review-8.md", "task-1-cto-3.md"})
	if n := len(firstPerSession(r.srv.Calls(claudeapi.Reviewer))); n != 9 {
		t.Errorf("%d reviewer sessions, want 9 (seven code reviews, two CTO reviews)", n)
	}
	if out, _ := r.taskie("query", "--task", "1"); !strings.Contains(out, "human_escalation") {
		t.Errorf("taskie query --task 1: %s; want human_escalation", out)
	}
	if out, _ := r.taskie("continue"); !strings.Contains(out, "taskie task resolve 1 --actor human") {
		t.Errorf("taskie continue does not name the human's decision:\n%s", out)
	}
	matchStops(t, r.stopLog, ds)
	noToolErrors(t, r.srv)
}

// noRatchet keeps every FAIL a failure: from ratchet_after on, a review
// with no open blocker would count as clean whatever its verdict.
func noRatchet(r *rig) {
	r.t.Helper()
	if out, code := r.taskie("config", "set", "ratchet_after", "20"); code != 0 {
		r.t.Fatalf("taskie config set ratchet_after 20: exit %d: %s", code, out)
	}
}

// checkDecisions compares taskie's Stop decisions of one session with the
// wanted reasons (a prefix each) and decisions.
func checkDecisions(t *testing.T, ds []decision, why, decisions []string) {
	t.Helper()
	ok := len(ds) == len(why)
	for i := 0; ok && i < len(ds); i++ {
		ok = strings.HasPrefix(ds[i].Why, why[i]) && ds[i].Decision == decisions[i]
	}
	if !ok {
		t.Errorf("taskie's Stop decisions:\n  %s\nwant:\n  %q\n  %q", summary(ds), decisions, why)
	}
}

// agentSaid reports whether an agent request of session got the reply
// (its Summary).
func agentSaid(srv *claudeapi.Server, session, reply string) bool {
	for _, rec := range sessionCalls(srv, session) {
		if strings.HasPrefix(rec.Reply, reply) {
			return true
		}
	}
	return false
}

// reviewsFinished lists the REVIEW_FINISHED events: "code-review 1 FAIL",
// "cto-review 1 guided_retry", ….
func reviewsFinished(evs []event) []string {
	var out []string
	for _, e := range evs {
		if e.Event != "REVIEW_FINISHED" {
			continue
		}
		what := e.Meta["verdict"]
		if d, ok := e.Meta["decision"]; ok {
			what = d
		}
		out = append(out, fmt.Sprintf("%v %v %v", e.Meta["review"], e.Meta["iteration"], what))
	}
	return out
}

func models(recs []claudeapi.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Model)
	}
	return out
}
