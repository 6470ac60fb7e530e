//go:build unix

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/claudeapi"
)

// TestRealClientWholePlan drives a one-task plan from `/taskie:new-plan`
// to complete over five `claude -p` runs, one turn each and every one a
// new session: new plan → plan review (PASS, PASS) → create tasks → tasks
// review (PASS, PASS) → task 1 → code review (FAIL, PASS, PASS) → all-code
// review (PASS, PASS) → complete. Every cycle blocks at least once (a
// first PASS asks for one more clean review); nine reviewers in all. The fake model plays the agent
// (its tool calls run `taskie …` and write the files) and the nested
// reviewers; taskie's Stop hook from the plugin does the rest.
func TestRealClientWholePlan(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	bin := queue(t, root, 35*time.Second)
	ctx, cancel := deadline(t)
	defer cancel()
	r := newRig(ctx, t, claude, root, bin, true, claudeapi.Script{
		SeriesVerdicts: map[string][]string{
			"plan-review":     {"PASS", "PASS"},
			"tasks-review":    {"PASS", "PASS"},
			"task-1-review":   {"FAIL", "PASS", "PASS"},
			"all-code-review": {"PASS", "PASS"},
		},
	})
	r.extra = []string{"--plugin-dir", filepath.Join(root, "plugin")}
	gitInit(t, r.proj)
	dir := r.planDir("p")
	bash := func(cmd string) claudeapi.Reply {
		return claudeapi.Call("Bash", map[string]any{"command": cmd, "description": "Run " + cmd})
	}
	write := func(path, content string) claudeapi.Reply {
		return claudeapi.Call("Write", map[string]any{"file_path": path, "content": content})
	}
	read := func(path string) claudeapi.Reply { return claudeapi.Call("Read", map[string]any{"file_path": path}) }
	// The slash command tells the model to read the action file: the agent
	// does, so a path the command names wrongly fails the Read.
	action := func(name string) claudeapi.Reply { return read(filepath.Join(root, "plugin", "actions", name+".md")) }

	// Turn 1: the plan. plan.md exists once `plan new` ran, and Claude
	// Code's Write refuses to overwrite a file it has not read.
	t1 := r.turn("new plan", "/taskie:new-plan p A Go package with Greet(name) in hello.go.",
		action("new-plan"),
		bash("taskie plan new p --auto"),
		read(filepath.Join(dir, "plan.md")),
		write(filepath.Join(dir, "plan.md"), planMD),
		claudeapi.Text("Plan p is written; ending the turn for the plan review."))
	r.afterTurn(t1, "plan-review", "create-tasks", "block", "allow")

	// Turn 2: the tasks, in a new session that takes the plan over.
	t2 := r.turn("create tasks", "/taskie:continue-plan",
		action("continue-plan"),
		bash("taskie continue"),
		write(filepath.Join(dir, "tasks.md"), "| Id | Status | Description |\n|----|--------|-------------|\n| 1 | pending | Greet(name) in hello.go |\n"),
		write(filepath.Join(dir, "task-1.md"), task1MD),
		bash("taskie validate"),
		bash("taskie done create-tasks"),
		claudeapi.Text("Tasks written; ending the turn for the tasks review."))
	r.wantContinue(t2, "action: /taskie:create-tasks")
	r.afterTurn(t2, "tasks-review", "complete-task", "block", "allow")

	// Turn 3: task 1 and its code review.
	t3 := r.turn("task 1", "/taskie:continue-plan",
		action("continue-plan"),
		bash("taskie continue"),
		bash("taskie start 1 --auto"),
		write(filepath.Join(r.proj, "hello.go"), helloGo),
		bash("taskie done next-task"),
		claudeapi.Text("Task 1 is implemented in hello.go."))
	r.wantContinue(t3, "action: /taskie:complete-task")
	r.afterTurn(t3, "code-review", "all-code-review", "block", "block", "allow")

	// Turn 4: task 1's review passed, so the agent commits its work (the
	// commit completes the task: tasks.md says done) and ends its turn for
	// the final review.
	t4 := r.turn("all-code review", "/taskie:continue-plan",
		action("continue-plan"),
		bash("git add -A"),
		bash("git -c user.name=agent -c user.email=agent@example.com commit -qm 'task 1: Greet'"),
		bash("taskie continue"),
		claudeapi.Text("Task 1 is committed and a review is due; ending the turn."))
	r.wantContinue(t4, "next: end-turn")
	r.afterTurn(t4, "all-code-review", "complete", "block", "allow")

	// Turn 5: nothing is left; `taskie continue` records completion.
	t5 := r.turn("complete", "/taskie:continue-plan",
		action("continue-plan"),
		bash("taskie continue"),
		claudeapi.Text("The plan is complete."))
	r.wantContinue(t5, "next: none")
	r.afterTurn(t5, "", "", "allow")

	st := readState(t, dir)
	if st.Phase != "complete" || st.next() != "" {
		t.Errorf("state.json: phase %q, next_phase %q; want complete, null", st.Phase, st.next())
	}
	if tasks := readFile(t, filepath.Join(dir, "tasks.md")); !regexp.MustCompile(`(?m)^\|\s*1\s*\|\s*done\s*\|`).MatchString(tasks) {
		t.Errorf("tasks.md: task 1 is not done:\n%s", tasks)
	}
	wantFiles(t, dir, []string{
		"plan-review-1.md", "plan-review-2.md", "plan-post-review-1.md",
		"tasks-review-1.md", "tasks-review-2.md", "tasks-post-review-1.md",
		"task-1-review-1.md", "task-1-review-2.md", "task-1-review-3.md", "task-1-post-review-1.md", "task-1-post-review-2.md",
		"all-code-review-1.md", "all-code-review-2.md", "all-code-post-review-1.md",
	}, []string{"plan-review-3.md", "plan-post-review-2.md", "tasks-review-3.md", "tasks-post-review-2.md",
		"task-1-review-4.md", "task-1-post-review-3.md", "all-code-review-3.md", "all-code-post-review-2.md"})

	evs := planEvents(t, filepath.Join(dir, "events.jsonl"))
	var verdicts []string
	for _, e := range evs {
		if e.Event == "REVIEW_FINISHED" {
			verdicts = append(verdicts, fmt.Sprintf("%v %v %v", e.Meta["review"], e.Meta["iteration"], e.Meta["verdict"]))
		}
	}
	want := []string{"plan-review 1 PASS", "plan-review 2 PASS", "tasks-review 1 PASS", "tasks-review 2 PASS",
		"code-review 1 FAIL", "code-review 2 PASS", "code-review 3 PASS", "all-code-review 1 PASS", "all-code-review 2 PASS"}
	if !slices.Equal(verdicts, want) {
		t.Errorf("events.jsonl: reviews\n  %q\nwant\n  %q", verdicts, want)
	}
	checkOwners(t, evs, r.turns)
	checkTimestamps(t, evs)

	if out, code := r.taskie("recover", "--check", "p"); code != 0 {
		t.Errorf("taskie recover --check p: exit %d:\n%s", code, out)
	}
	if out, code := r.taskie("validate", "p"); code != 0 {
		t.Errorf("taskie validate p: exit %d:\n%s", code, out)
	}

	ds := stopDecisions(t, filepath.Join(r.proj, ".taskie", "logs", "p.log"))
	matchStops(t, r.stopLog, ds)
	checkPlanReviewers(t, r.srv, r.turns)
	noToolErrors(t, r.srv)
	var times []string
	for _, tr := range r.turns {
		times = append(times, fmt.Sprintf("%s %.1fs", tr.name, tr.took.Seconds()))
	}
	t.Logf("turns: %s", strings.Join(times, ", "))
	t.Logf("taskie hook log:\n%s", readFile(t, filepath.Join(r.proj, ".taskie", "logs", "p.log")))
	t.Logf("events.jsonl:\n%s", readFile(t, filepath.Join(dir, "events.jsonl")))
}

// afterTurn checks one turn: the plugin command reached the model, taskie
// logged the wanted Stop decisions for this session (the last an allow,
// with its reason), the agent saw one block per block decision, and the
// plan went through review (if not "") to next_phase next (""=null).
func (r *rig) afterTurn(tr turnResult, review, next string, decisions ...string) {
	t := r.t
	t.Helper()
	calls := sessionCalls(r.srv, tr.SessionID)
	if len(calls) == 0 {
		t.Fatalf("turn %q: no agent request from session %s", tr.name, tr.SessionID)
	}
	cmd := "continue-plan"
	if len(r.turns) == 1 {
		cmd = "new-plan"
	}
	if want := filepath.Join(r.root, "plugin", "actions", cmd+".md"); !strings.Contains(calls[0].FirstUserText, want) ||
		strings.Contains(calls[0].FirstUserText, "${CLAUDE_PLUGIN_ROOT}") {
		t.Errorf("turn %q: the prompt did not become the plugin's /taskie:%s command:\n%s", tr.name, cmd, calls[0].FirstUserText)
	} else if len(r.turns) <= 2 {
		_, cmdText, _ := strings.Cut(calls[0].FirstUserText, "</command-name>")
		t.Logf("turn %q: the slash command as the model got it: %.500q", tr.name, cmdText)
	}
	if len(r.turns) > 1 && !strings.Contains(calls[0].SessionStartContext, "taskie") {
		t.Errorf("turn %q: no taskie SessionStart context: %q", tr.name, calls[0].SessionStartContext)
	}
	ds := of(stopDecisions(t, filepath.Join(r.proj, ".taskie", "logs", "p.log")), tr.SessionID)
	var got []string
	blocks := 0
	for _, d := range ds {
		got = append(got, d.Decision)
		if d.Decision == "block" {
			blocks++
		}
		if d.Why == "" {
			t.Errorf("turn %q: taskie logged a %s with no reason", tr.name, d.Decision)
		}
	}
	if !slices.Equal(got, decisions) {
		t.Errorf("turn %q: taskie's Stop decisions %s; want %q", tr.name, summary(ds), decisions)
	}
	if review != "" && len(ds) > 0 && !strings.HasPrefix(ds[len(ds)-1].Why, review+" ") {
		t.Errorf("turn %q: the last stop (%s) was not a %s", tr.name, summary(ds[len(ds)-1:]), review)
	}
	if fb := feedbacks(r.srv, tr.SessionID); len(fb) != blocks {
		t.Errorf("turn %q: the agent saw %d Stop hook blocks, taskie logged %d", tr.name, len(fb), blocks)
	} else {
		for i, f := range fb {
			// "code review 1 of task 1", "final all-code review 2 of plan", …
			if review != "" && !strings.Contains(f, strings.TrimSuffix(review, "-review")+" review ") {
				t.Errorf("turn %q: block %d is not about the %s:\n%s", tr.name, i+1, review, f)
			}
		}
	}
	// Never silent: a turn that ends while the plan awaits something
	// ends on an allow that says what comes next.
	if msgs := r.stopSystemMessages(tr); next != "" && (len(msgs) == 0 || !strings.Contains(msgs[len(msgs)-1], "taskie")) {
		t.Errorf("turn %q ended with next_phase %q and no systemMessage from taskie (%q)", tr.name, next, msgs)
	} else if len(msgs) > 0 {
		t.Logf("turn %q: the last allowed stop said: %s", tr.name, msgs[len(msgs)-1])
	}
	st := readState(t, r.planDir("p"))
	if st.next() != next {
		t.Errorf("turn %q: next_phase %q after the turn, want %q (phase %q)", tr.name, st.next(), next, st.Phase)
	}
	t.Logf("turn %q (session %.8s): %s; state now phase %s, next %q", tr.name, tr.SessionID, summary(ds), st.Phase, st.next())
}

// wantContinue checks what `taskie continue` told the agent of a turn.
func (r *rig) wantContinue(tr turnResult, want string) {
	r.t.Helper()
	out, ok := bashOutput(r.srv, tr.SessionID, "taskie continue")
	if !ok || !strings.Contains(out, want) {
		r.t.Errorf("turn %q: `taskie continue` said %q, want %q in it", tr.name, out, want)
	}
}

// checkOwners: turns 2–4 each continue a plan that the session of the
// turn before drove (turn 5 finds it complete, with nothing to drive).
// docs/hook.md: taking a plan over is recorded, session_id
// changing with an OWNER_CHANGED event — whoever changes it (the hook, or
// a taskie command that claims the plan for its session).
func checkOwners(t *testing.T, evs []event, turns []turnResult) {
	t.Helper()
	var previous []string
	owner, announced := "", ""
	for i, e := range evs {
		if e.Event == "OWNER_CHANGED" {
			previous = append(previous, fmt.Sprint(e.Meta["previous"]))
			announced = e.To // an OWNER_CHANGED event of the same commit, before its state event
		}
		sid, ok := e.Set["session_id"].(string)
		if !ok {
			continue
		}
		if owner != "" && sid != owner && e.Event != "OWNER_CHANGED" && announced != sid {
			t.Errorf("events.jsonl line %d: session_id changed from %s to %s by a %s event (actor %s, %q), not an OWNER_CHANGED event",
				i+1, owner, sid, e.Event, e.Actor, e.Reason)
		}
		owner = sid
	}
	t.Logf("OWNER_CHANGED events, previous owners: %q", previous)
	for i := 1; i <= 3 && i < len(turns); i++ {
		if !slices.Contains(previous, turns[i-1].SessionID) {
			t.Errorf("turn %q took plan p over from turn %q (session %s) with no OWNER_CHANGED event naming it",
				turns[i].name, turns[i-1].name, turns[i-1].SessionID)
		}
	}
	if owner != turns[len(turns)-1].SessionID && owner != turns[len(turns)-2].SessionID {
		t.Errorf("plan p's owner at the end is %s, not a session of the last turns", owner)
	}
}

// checkTimestamps: every event says when it happened.
func checkTimestamps(t *testing.T, evs []event) {
	t.Helper()
	var bad []string
	for i, e := range evs {
		if ts, err := time.Parse(time.RFC3339, e.TS); err != nil || ts.Year() < 2000 {
			bad = append(bad, fmt.Sprintf("line %d %s %q", i+1, e.Event, e.TS))
		}
	}
	if len(bad) > 0 {
		t.Errorf("events.jsonl: %d of %d events have no real timestamp: %s", len(bad), len(evs), strings.Join(bad, "; "))
	}
}

// checkPlanReviewers: one nested session per review, none of them an
// agent session, and the models alternating opus, sonnet, … in each cycle.
func checkPlanReviewers(t *testing.T, srv *claudeapi.Server, turns []turnResult) {
	t.Helper()
	reviews := firstPerSession(srv.Calls(claudeapi.Reviewer))
	if len(reviews) != 9 {
		t.Errorf("%d reviewer sessions, want 9", len(reviews))
	}
	seen := map[string]bool{}
	for _, r := range reviews {
		for _, tr := range turns {
			if r.Session == tr.SessionID {
				t.Errorf("a reviewer request came from the agent session of turn %q", tr.name)
			}
		}
		file, n := claudeapi.ReviewFile(r.FirstUserText)
		key := filepath.Base(file)
		if seen[key] {
			t.Errorf("%s was reviewed twice", key)
		}
		seen[key] = true
		want := "opus"
		if n%2 == 0 {
			want = "sonnet"
		}
		if !strings.Contains(r.Model, want) {
			t.Errorf("%s: reviewer model %q, want %s", key, r.Model, want)
		}
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

const planMD = `# Plan: p

## Goal
A Go package with Greet(name), in hello.go.

## Context
An empty repository.

## Approach
One function; the empty name greets the world.

## Scope
Greet only.

## Testing
A unit test of Greet.

## Risks and open questions
None.
`

const task1MD = `# Task 1: Greet(name) in hello.go

Write hello.go with Greet(name), as plan.md says.

### Subtask 1.1: Write Greet
- **Status**: pending

## Acceptance Criteria
- [ ] Greet("") returns "hello, world" (unit test)
`
