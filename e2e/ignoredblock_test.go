//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/claudeapi"
)

// TestRealClientIgnoredBlock: an agent that ends its turn again after a
// review block, without the post-review, does not loop and gets no second
// review of the same iteration.
//
//   - Turn A: code review 1 (FAIL) blocks; the agent ignores it and stops
//     again with stop_hook_active; taskie allows with a systemMessage (the
//     post-review is still owed) and runs no reviewer. `claude -p` does not
//     print that message: the session transcript shows it. While review 1
//     runs, `taskie status --json` shows it running (docs/hook.md): the fake
//     reviewer is held until the test has seen that.
//   - Turn B, a new session: the post-review is still owed; the first stop
//     of the turn blocks once more with the same review, the agent ignores
//     it again, the next stop allows. No reviewer runs.
//   - Turn C, a new session running /taskie:continue-plan: the agent does
//     the post-review `taskie continue` names; reviews 2 and 3 run (PASS,
//     PASS) and the task is done. Review 1 ran once.
func TestRealClientIgnoredBlock(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	bin := queue(t, root, 15*time.Second)
	ctx, cancel := deadline(t)
	defer cancel()
	// The fake reviewer answers once `taskie status --json` has shown the
	// running review (or, if it never does, after reviewHold per reply:
	// checkRunning then fails).
	seen := make(chan struct{})
	var seenOnce sync.Once
	r := newRig(ctx, t, claude, root, bin, true, claudeapi.Script{
		Verdicts:          []string{"FAIL", "PASS", "PASS"},
		IgnoreBlocks:      true,
		ReviewerGate:      seen,
		ReviewerGateLimit: reviewHold,
	})
	r.extra = []string{"--plugin-dir", filepath.Join(root, "plugin")}
	newProject(t, bin, r.proj)
	dir := r.planDir("p")
	logPath := filepath.Join(r.proj, ".taskie", "logs", "p.log")

	// Turn A, with `taskie status --json` polled while it runs.
	watch := r.watchStatus(func() { seenOnce.Do(func() { close(seen) }) })
	a := r.turn("ignore the block", "Implement task 1 of the taskie plan p.",
		claudeapi.Call("Bash", map[string]any{"command": "taskie start 1 --auto", "description": "Start task 1"}),
		claudeapi.Call("Write", map[string]any{"file_path": filepath.Join(r.proj, "hello.go"), "content": helloGo}),
		claudeapi.Text("Task 1 is implemented in hello.go."))
	began, running := watch()
	r.srv.Update(func(s *claudeapi.Script) { s.ReviewerGate = nil })

	// The stop after the ignored block allows without a review. taskie
	// words it as the owed post-review ("post-review-owed"); the reason
	// "no-progress" ("feedback was not addressed") is the same rule when
	// next_phase is a review again.
	ds := of(stopDecisions(t, logPath), a.SessionID)
	if got := summary(ds); len(ds) != 2 || ds[0].Decision != "block" || ds[0].Why != "code-review 1: FAIL" ||
		ds[1].Decision != "allow" || !ds[1].Active || (ds[1].Why != "post-review-owed" && ds[1].Why != "no-progress") {
		t.Errorf("turn A: taskie's Stop decisions %s; want block (code-review 1: FAIL), then with stop_hook_active allow (post-review-owed or no-progress)", got)
	}
	if fb := feedbacks(r.srv, a.SessionID); len(fb) != 1 || !strings.Contains(fb[0], "task-1-review-1.md") {
		t.Errorf("turn A: the agent saw blocks %q, want the one of code review 1", fb)
	}
	if a.Result != claudeapi.IgnoredBlockText {
		t.Errorf("turn A: the agent's last words %q, want it to have ignored the block", a.Result)
	}
	if n := len(firstPerSession(r.srv.Calls(claudeapi.Reviewer))); n != 1 {
		t.Errorf("turn A: %d reviewer sessions, want 1 (no second review without a post-review)", n)
	}
	st := readState(t, dir)
	if st.Phase != "code-review" || st.next() != "post-code-review" || st.PhaseIteration == nil || *st.PhaseIteration != 1 {
		t.Errorf("turn A: state phase %q next %q; want code-review, post-code-review, iteration 1", st.Phase, st.next())
	}
	checkRunning(t, began, running)
	// `claude -p` prints no systemMessage; the transcript keeps it.
	if msgs := r.stopSystemMessages(a); len(msgs) != 1 || !strings.Contains(msgs[0], "post-code-review") ||
		!(strings.Contains(msgs[0], "still owed") || strings.Contains(msgs[0], "not addressed")) {
		t.Errorf("turn A: the Stop hook's systemMessages %q; want one saying the post-code-review is owed", msgs)
	} else {
		t.Logf("turn A: the allowed stop's systemMessage: %s", msgs[0])
	}
	if out, code := r.taskie("status", "p"); code != 0 || !strings.Contains(out, "post-code-review") {
		t.Errorf("taskie status p: exit %d, does not name the owed post-code-review:\n%s", code, out)
	} else {
		t.Logf("taskie status after turn A:\n%s", out)
	}

	// Turn B: a new session that only ends its turn.
	b := r.turn("ignore the reminder", "Carry on.", claudeapi.Text("Nothing to do here."))
	ds = of(stopDecisions(t, logPath), b.SessionID)
	if got := summary(ds); len(ds) != 2 || ds[0].Decision != "block" || ds[0].Why != "post-review-owed-remind" ||
		ds[1].Decision != "allow" || ds[1].Why != "post-review-owed" {
		t.Errorf("turn B: taskie's Stop decisions %s; want block (post-review-owed-remind), allow (post-review-owed)", got)
	}
	if fb := feedbacks(r.srv, b.SessionID); len(fb) != 1 || !strings.Contains(fb[0], "task-1-review-1.md") || !strings.Contains(fb[0], "task-1-post-review-1.md") {
		t.Errorf("turn B: the agent saw blocks %q, want one naming task-1-review-1.md and task-1-post-review-1.md", fb)
	}
	if n := len(firstPerSession(r.srv.Calls(claudeapi.Reviewer))); n != 1 {
		t.Errorf("turn B: %d reviewer sessions in all, want still 1", n)
	}
	if msgs := r.stopSystemMessages(b); len(msgs) != 1 || !strings.Contains(msgs[0], "post-code-review") {
		t.Errorf("turn B: the Stop hook's systemMessages %q; want one naming the owed post-code-review", msgs)
	}

	// Turn C: the post-review, then the loop goes on to the end.
	r.srv.Update(func(s *claudeapi.Script) { s.IgnoreBlocks = false })
	c := r.turn("post-review", "/taskie:continue-plan",
		claudeapi.Call("Bash", map[string]any{"command": "taskie continue", "description": "Where does the plan stand?"}),
		claudeapi.Call("Read", map[string]any{"file_path": filepath.Join(dir, "task-1-review-1.md")}),
		claudeapi.Call("Write", map[string]any{"file_path": filepath.Join(dir, "task-1-post-review-1.md"),
			"content": "# Post-review\n\nFinding 1: fixed, hello.go handles the empty name.\n"}),
		claudeapi.Call("Bash", map[string]any{"command": "taskie done post-code-review", "description": "Record the post-review"}),
		claudeapi.Text("Post-review 1 done."))
	if out, _ := bashOutput(r.srv, c.SessionID, "taskie continue"); !strings.Contains(out, "post-code-review") || !strings.Contains(out, "task-1-post-review-1.md") {
		t.Errorf("turn C: `taskie continue` said %q; want the post-code-review of review 1", out)
	}
	ds = of(stopDecisions(t, logPath), c.SessionID)
	if got := summary(ds); got != "block (code-review 2: PASS), allow (code-review 3: PASS)" {
		t.Errorf("turn C: taskie's Stop decisions %s; want block (code-review 2: PASS), allow (code-review 3: PASS)", got)
	}

	// Every review ran once; the loop ended.
	var started []string
	for _, e := range planEvents(t, filepath.Join(dir, "events.jsonl")) {
		if e.Event == "REVIEW_STARTED" {
			started = append(started, fmt.Sprintf("%v %v", e.Meta["review"], e.Meta["iteration"]))
		}
	}
	if want := []string{"code-review 1", "code-review 2", "code-review 3"}; !slices.Equal(started, want) {
		t.Errorf("REVIEW_STARTED events %q, want %q", started, want)
	}
	files := map[string]bool{}
	for _, rv := range firstPerSession(r.srv.Calls(claudeapi.Reviewer)) {
		f, _ := claudeapi.ReviewFile(rv.FirstUserText)
		if files[filepath.Base(f)] {
			t.Errorf("%s was reviewed twice", filepath.Base(f))
		}
		files[filepath.Base(f)] = true
	}
	if len(files) != 3 {
		t.Errorf("reviewers wrote %v, want task-1-review-1..3.md", files)
	}
	wantFiles(t, dir, []string{"task-1-review-1.md", "task-1-review-2.md", "task-1-review-3.md", "task-1-post-review-1.md", "task-1-post-review-2.md"},
		[]string{"task-1-review-4.md", "task-1-post-review-3.md"})
	st = readState(t, dir)
	if st.Phase != "code-review" || st.next() != "complete-task" {
		t.Errorf("state phase %q next %q at the end; want code-review, complete-task", st.Phase, st.next())
	}
	wantAwaitingCommit(t, dir)
	matchStops(t, r.stopLog, stopDecisions(t, logPath))
	noToolErrors(t, r.srv)
	t.Logf("turns took %.1fs, %.1fs, %.1fs", a.took.Seconds(), b.took.Seconds(), c.took.Seconds())
	t.Logf("taskie hook log:\n%s", readFile(t, logPath))
}

// statusSample is one `taskie status --json` taken while a turn ran.
type statusSample struct {
	at      time.Time
	running *struct {
		Review    string    `json:"review"`
		Iteration int       `json:"iteration"`
		Model     string    `json:"model"`
		Reviewer  string    `json:"reviewer"`
		Started   time.Time `json:"started"`
		Elapsed   string    `json:"elapsed"`
	}
	raw string
}

// reviewHold bounds how long the fake reviewer of TestRealClientIgnoredBlock
// holds one reply back while it waits for the test to see the review run.
const reviewHold = 10 * time.Second

// watchStatus polls `taskie status --json p` until the returned function
// is called, which returns the samples that showed a running review;
// seen is called on each such sample.
func (r *rig) watchStatus(seen func()) func() (time.Time, []statusSample) {
	began := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var samples []statusSample
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			cmd := exec.Command(filepath.Join(r.bin, "taskie"), "status", "--json", "p")
			cmd.Dir, cmd.Env = r.proj, r.env
			out, err := cmd.Output()
			if err != nil {
				continue // no plan yet
			}
			var v struct {
				Running json.RawMessage `json:"running_review"`
			}
			if json.Unmarshal(out, &v) != nil || len(v.Running) == 0 {
				continue
			}
			s := statusSample{at: time.Now(), raw: string(v.Running)}
			if err := json.Unmarshal(v.Running, &s.running); err == nil && s.running != nil {
				samples = append(samples, s)
				seen()
			}
		}
	}()
	return func() (time.Time, []statusSample) {
		close(done)
		wg.Wait()
		return began, samples
	}
}

// checkRunning: while review 1 ran, `taskie status` showed it, started
// during the turn.
func checkRunning(t *testing.T, turnStart time.Time, samples []statusSample) {
	t.Helper()
	if len(samples) == 0 {
		t.Errorf("`taskie status --json` never showed the running review (docs/hook.md)")
		return
	}
	s := samples[0]
	t.Logf("taskie status --json while the review ran: %s", s.raw)
	if v := s.running; v.Review != "code-review" || v.Iteration != 1 || v.Model != "opus" || v.Reviewer != "claude" {
		t.Errorf("running review %s; want code-review, iteration 1, opus, claude", s.raw)
	}
	if st := s.running.Started; st.Before(turnStart.Add(-time.Second)) || st.After(s.at.Add(time.Second)) {
		t.Errorf("running review started at %s (elapsed %s): not during the turn (%s … %s)",
			st.Format(time.RFC3339), s.running.Elapsed, turnStart.Format(time.RFC3339), s.at.Format(time.RFC3339))
	}
}
