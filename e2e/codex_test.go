//go:build unix

package e2e

// The real Codex CLI (`codex exec`, @openai/codex 0.169.0) driving taskie,
// against e2e/codexapi, a scripted Responses API server on 127.0.0.1. The
// tests skip when `codex` is not on PATH; e2e/install-codex.sh installs it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/codexapi"
	"github.com/taskie-dev/taskie/internal/install"
)

// codexRunLimit bounds each Codex test (or subtest) from the moment it
// has a lane (queue).
const codexRunLimit = 2 * time.Minute

const codexInstallHint = "install it with `bash e2e/install-codex.sh` (written against @openai/codex 0.169.0)"

// codexModel is the model the fake provider claims to serve.
const codexModel = "gpt-5.5"

const codexHelloGo = `package hello

// Greet returns a greeting for name.
func Greet(name string) string {
	if name == "" {
		name = "world"
	}
	return "Hello, " + name + "!"
}
`

// TestCodexCodeReviewLoop drives one task through taskie's code review
// loop inside ONE `codex exec` turn: the agent runs `taskie start 1 --auto`
// and writes hello.go through Codex's exec_command tool (a login shell);
// the Stop hook, installed and trusted by `taskie install codex`, runs three
// `codex exec` reviewers (FAIL, PASS, PASS); after each of the first two
// blocks the agent reads the review, writes the post-review file and runs
// the `taskie done` command the block names; the plan advances after two
// clean reviews in a row. Once per block format (exit 2 and JSON), and once
// installed with --no-trust, where Codex must skip the hook: the proof that
// the trust entries are what makes it run.
func TestCodexCodeReviewLoop(t *testing.T) {
	t.Parallel()
	codex := requireCodex(t)
	root := codexRepoRoot(t)
	for _, format := range []string{"exit2", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			bin := queue(t, root, 9*time.Second)
			ctx, cancel := codexDeadline(t)
			defer cancel()
			codexLoop(ctx, t, codex, bin, format)
		})
	}
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		bin := queue(t, root, 3*time.Second)
		ctx, cancel := codexDeadline(t)
		defer cancel()
		codexUntrusted(ctx, t, codex, bin)
	})
}

func codexLoop(ctx context.Context, t *testing.T, codex, bin, format string) {
	r := newCodexRig(t, codex, bin, format, codexapi.Script{
		FirstTurn: []codexapi.Reply{
			codexapi.Exec("taskie start 1 --auto"),
			codexapi.Exec(`printf 'thread=%s\n' "$CODEX_THREAD_ID"`),
			codexapi.Exec("cat > hello.go <<'EOF'\n" + codexHelloGo + "EOF"),
			codexapi.Text("Task 1 is implemented in hello.go."),
		},
		Verdicts: []string{"FAIL", "PASS", "PASS"},
		// The strict schema's findings: one opened, then fixed, then none.
		Findings: []string{
			`[{"id":"","severity":"major","title":"the empty name is not handled","file":"hello.go","line":4,"status":"open"}]`,
			`[{"id":"F1","severity":"major","title":"the empty name is not handled","file":"hello.go","line":4,"status":"fixed"}]`,
			`[]`,
		},
	})
	out := r.install()
	r.addMarkerHook()
	skills, _ := filepath.Glob(filepath.Join(repoRoot(t), "codex", "skills", "taskie-*"))
	for _, want := range []string{"trusted SessionStart (taskie hook session-start), Stop (taskie hook stop)", fmt.Sprintf("%d skills", len(skills))} {
		if !strings.Contains(out, want) {
			t.Errorf("taskie install codex does not say %q:\n%s", want, out)
		}
	}
	stdout, stderr, err := r.exec(ctx, "Use the taskie-complete-task skill ($taskie-complete-task) to implement task 1 of plan p.")
	if err != nil {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	planDir := filepath.Join(r.proj, ".taskie", "plans", "p")
	checkCodexPlan(t, planDir)
	agent := r.srv.Calls(codexapi.Agent)
	if len(agent) == 0 {
		t.Fatal("no agent request reached the server")
	}
	thread := agent[0].Thread
	for _, a := range agent {
		if a.Thread != thread {
			t.Errorf("request #%d is in thread %s, not %s: the loop left the one turn", a.Seq, a.Thread, thread)
		}
	}
	checkCodexSkills(t, agent[0])
	checkCodexFeedback(t, agent, format)
	checkCodexReviewers(t, r, thread)
	checkCodexThreadID(t, agent, thread, planDir)
	if strings.Contains(stdout+stderr, "command not found") || strings.Contains(stdout+stderr, "exited with code 127") {
		t.Errorf("a command did not find taskie in Codex's login shell:\n%s\n%s", stdout, stderr)
	}
	doctor := r.taskie("doctor")
	for _, want := range []string{`ok +codex hook trust +trusted: SessionStart, Stop`, `ok +login shell PATH`} {
		if !regexp.MustCompile(want).MatchString(doctor) {
			t.Errorf("taskie doctor does not say %q:\n%s", want, doctor)
		}
	}
}

// codexUntrusted: the same project, hooks installed with --no-trust. Codex
// skips the untrusted Stop hook without a word: no review runs, and
// doctor names the problem and the fix.
func codexUntrusted(ctx context.Context, t *testing.T, codex, bin string) {
	r := newCodexRig(t, codex, bin, "exit2", codexapi.Script{
		FirstTurn: []codexapi.Reply{
			codexapi.Exec("taskie start 1 --auto"),
			codexapi.Exec("cat > hello.go <<'EOF'\n" + codexHelloGo + "EOF"),
			codexapi.Text("Task 1 is implemented in hello.go."),
		},
	})
	out := r.install("--no-trust")
	if !strings.Contains(out, "the hooks are not trusted yet") {
		t.Errorf("--no-trust does not tell the user:\n%s", out)
	}
	stdout, stderr, err := r.exec(ctx, "Implement task 1 of plan p.")
	if err != nil {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if n := len(r.srv.Calls(codexapi.Reviewer)); n != 0 {
		t.Errorf("%d reviews ran although the hook is not trusted", n)
	}
	if _, err := os.Stat(filepath.Join(r.proj, ".taskie", "plans", "p", "task-1-review-1.md")); err == nil {
		t.Error("task-1-review-1.md exists: the untrusted hook ran")
	}
	doctor := r.taskie("doctor")
	if !regexp.MustCompile(`FAIL codex hook trust .*Stop hook "taskie hook stop" in .* is not trusted: Codex skips it without a warning`).MatchString(doctor) ||
		!strings.Contains(doctor, "fix: taskie install codex") {
		t.Errorf("taskie doctor does not report the untrusted hook with its fix:\n%s", doctor)
	}
}

// TestCodexReviewsClaudePlan: Codex as the reviewer of a plan a Claude
// Code session works on. The Stop hook gets Claude Code's input (no
// turn_id, a ~/.claude transcript); the reviewer is `codex exec` against
// the scripted server, with no model configured: codex's own default
// model, and reasoning effort "high" for the first review.
func TestCodexReviewsClaudePlan(t *testing.T) {
	t.Parallel()
	codex := requireCodex(t)
	bin := queue(t, codexRepoRoot(t), 2*time.Second)
	ctx, cancel := codexDeadline(t)
	defer cancel()
	r := newCodexRig(t, codex, bin, "exit2", codexapi.Script{Verdicts: []string{"FAIL"}})
	if out := r.taskie("start", "1", "--auto"); !strings.Contains(out, "1") {
		t.Logf("taskie start: %s", out)
	}
	// Not a git repository (and not a project Codex trusts): codex exec
	// refuses to run there without --skip-git-repo-check.
	if err := os.RemoveAll(filepath.Join(r.proj, ".git")); err != nil {
		t.Fatal(err)
	}
	// A trusted hook of the user's that the reviewer's Codex must not run.
	r.addMarkerHook()
	writeCodexFile(t, filepath.Join(r.proj, "hello.go"), codexHelloGo)
	in, _ := json.Marshal(map[string]any{
		"session_id": "claude-session-1", "cwd": r.proj, "hook_event_name": "Stop", "stop_hook_active": false,
		"transcript_path":        filepath.Join(r.home, ".claude", "projects", "-project", "claude-session-1.jsonl"),
		"permission_mode":        "dontAsk",
		"last_assistant_message": "Task 1 is implemented in hello.go.",
	})
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "taskie"), "hook", "stop")
	cmd.Dir, cmd.Env, cmd.Stdin = r.proj, r.env, bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	killMarked(t, r.marker)
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Fatalf("taskie hook stop: exit %d (%v), want 2 (block)\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("a block prints nothing on stdout, got %q", stdout.String())
	}
	for _, want := range []string{"code review 1 of task 1", "FAIL", "task-1-review-1.md", "taskie done post-code-review"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the block message does not say %q:\n%s", want, stderr.String())
		}
	}
	review := readCodexFile(t, filepath.Join(r.proj, ".taskie", "plans", "p", "task-1-review-1.md"))
	if !strings.Contains(review, "hello.go: the empty name is not handled") {
		t.Errorf("task-1-review-1.md is not the reviewer's review:\n%s", review)
	}
	reviews := r.srv.Calls(codexapi.Reviewer)
	if len(reviews) != 1 {
		t.Fatalf("%d reviewer requests, want 1", len(reviews))
	}
	if rv := reviews[0]; rv.Model != codexModel || rv.Effort != "high" {
		t.Errorf("reviewer request: model %q effort %q, want codex's default model %q and effort high", rv.Model, rv.Effort, codexModel)
	}
	if n := len(r.srv.Calls(codexapi.Agent)); n != 0 {
		t.Errorf("%d agent requests: the reviewer must not be offered the agent's tools", n)
	}
	if runs := r.markerSessions(); len(runs) != 0 {
		t.Errorf("the reviewer's Codex ran the user's SessionStart hook (sessions %v): hooks must be off for the reviewer", runs)
	}
	// The only Codex that ran here is the reviewer: it must leave no
	// session for `codex resume`.
	if files := r.sessionFiles(); len(files) != 0 {
		t.Errorf("the reviewer left sessions in %s: %v (it must run --ephemeral)", filepath.Join(r.codexHome, "sessions"), files)
	}
}

// ---------------------------------------------------------------- checks

// checkCodexPlan: three reviews, two post-reviews, the plan advanced to
// the next task with task 1 done, and the review events logged.
func checkCodexPlan(t *testing.T, planDir string) {
	t.Helper()
	for _, f := range []string{"task-1-review-1.md", "task-1-review-2.md", "task-1-review-3.md",
		"task-1-post-review-1.md", "task-1-post-review-2.md"} {
		if _, err := os.Stat(filepath.Join(planDir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	for _, f := range []string{"task-1-review-4.md", "task-1-post-review-3.md"} {
		if _, err := os.Stat(filepath.Join(planDir, f)); err == nil {
			t.Errorf("unexpected %s: the loop should end after two clean reviews", f)
		}
	}
	var st struct {
		Phase            string `json:"phase"`
		NextPhase        string `json:"next_phase"`
		ConsecutiveClean int    `json:"consecutive_clean"`
		CurrentTask      any    `json:"current_task"`
	}
	if err := json.Unmarshal([]byte(readCodexFile(t, filepath.Join(planDir, "state.json"))), &st); err != nil {
		t.Fatal(err)
	}
	if st.Phase != "code-review" || st.NextPhase != "complete-task" || st.ConsecutiveClean != 2 || fmt.Sprint(st.CurrentTask) != "1" {
		t.Errorf("state.json: phase %q next_phase %q consecutive_clean %d current_task %v; want code-review, complete-task, 2, 1",
			st.Phase, st.NextPhase, st.ConsecutiveClean, st.CurrentTask)
	}
	// Its reviews passed: the task waits for its commit (docs/lifecycle.md),
	// in-progress in tasks.md until the commit is seen.
	if tasks := readCodexFile(t, filepath.Join(planDir, "tasks.md")); !regexp.MustCompile(`(?m)^\|\s*1\s*\|\s*in-progress\s*\|`).MatchString(tasks) {
		t.Errorf("tasks.md: row 1 is not in-progress (awaiting its commit):\n%s", tasks)
	}
	if st := readCodexFile(t, filepath.Join(planDir, "state.json")); !strings.Contains(st, `"state":"committing"`) && !strings.Contains(st, `"state": "committing"`) {
		t.Errorf("state.json: task 1 is not in committing:\n%s", st)
	}
	var verdicts []string
	opened := 0
	for _, line := range strings.Split(readCodexFile(t, filepath.Join(planDir, "events.jsonl")), "\n") {
		var ev struct {
			Event string         `json:"event"`
			Meta  map[string]any `json:"meta"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		switch ev.Event {
		case "REVIEW_FINISHED":
			verdicts = append(verdicts, fmt.Sprint(ev.Meta["verdict"]))
		case "FINDING_OPENED":
			opened++
		}
	}
	if got := strings.Join(verdicts, ","); got != "FAIL,PASS,PASS" {
		t.Errorf("events.jsonl: REVIEW_FINISHED verdicts %q, want FAIL,PASS,PASS", got)
	}
	// The first review's structured findings reached the ledger.
	if opened != 1 {
		t.Errorf("events.jsonl: %d FINDING_OPENED events, want 1 (the first review's finding)", opened)
	}
}

// checkCodexSkills: Codex lists taskie's skills to the model, the
// $taskie-complete-task mention in the prompt brought that skill's text in,
// and the SessionStart hook told the session where the plan stands.
func checkCodexSkills(t *testing.T, first codexapi.Record) {
	t.Helper()
	for _, want := range []string{"taskie-continue-plan", "taskie-complete-task", "taskie-post-code-review"} {
		if !strings.Contains(first.Developer, want) {
			t.Errorf("Codex does not list the skill %s to the model", want)
		}
	}
	if !strings.Contains(first.User+first.Developer, "This is the taskie action `complete-task`, as a Codex skill") {
		t.Error("the $taskie-complete-task mention did not bring the skill's instructions into the turn")
	}
	// The trusted SessionStart hook ran: its summary is in the context.
	if !strings.Contains(first.Developer, `taskie plan p: phase create-tasks`) {
		t.Error("the SessionStart hook's plan summary is not in the turn's context")
	}
}

// checkCodexFeedback: two blocks reached the agent within the turn, each
// the taskie message for its review, in Codex's words for actions.
func checkCodexFeedback(t *testing.T, agent []codexapi.Record, format string) {
	t.Helper()
	var blocks []string
	for _, a := range agent {
		if a.Feedback != "" && (len(blocks) == 0 || blocks[len(blocks)-1] != a.Feedback) {
			blocks = append(blocks, a.Feedback)
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("%s: %d distinct Stop hook blocks reached the agent, want 2 (FAIL, then the first PASS):\n%s", format, len(blocks), strings.Join(blocks, "\n---\n"))
	}
	for i, want := range []string{"code review 1 of task 1 (plan \"p\") is in: FAIL", "code review 2 of task 1 (plan \"p\") is in: PASS: passed; one more clean review is needed"} {
		if !strings.Contains(blocks[i], want) {
			t.Errorf("block %d does not say %q:\n%s", i+1, want, blocks[i])
		}
		if strings.Contains(blocks[i], "/taskie:") {
			t.Errorf("block %d names a Claude Code command, which Codex does not have:\n%s", i+1, blocks[i])
		}
	}
	for _, a := range agent {
		if strings.Contains(a.LastOutput, "command not found") || strings.Contains(a.LastOutput, "exited with code 127") {
			t.Errorf("request #%d: the previous command failed in Codex's login shell:\n%s", a.Seq, a.LastOutput)
		}
	}
}

// checkCodexReviewers: three `codex exec` reviewers, each asked for the
// verdict schema, efforts alternating high, medium, high (no model
// configured: codex's own default model); none ran the user's hooks (the
// marker hook ran for the agent's session only, which also shows it
// works), and none left a session behind for `codex resume` (the agent's
// own session is the only one on disk).
func checkCodexReviewers(t *testing.T, r *codexRig, thread string) {
	t.Helper()
	reviews := r.srv.Calls(codexapi.Reviewer)
	var efforts []string
	for _, rv := range reviews {
		efforts = append(efforts, rv.Effort)
		if rv.Model != codexModel {
			t.Errorf("reviewer request #%d: model %q, want codex's default %q", rv.Seq, rv.Model, codexModel)
		}
	}
	if got := strings.Join(efforts, ","); got != "high,medium,high" {
		t.Errorf("reviewer efforts %q, want high,medium,high (three reviews)", got)
	}
	runs := r.markerSessions()
	if !slices.Contains(runs, thread) {
		t.Errorf("the marker SessionStart hook did not run for the agent's session %s (runs: %v): the check below proves nothing", thread, runs)
	}
	for _, s := range runs {
		if s != thread {
			t.Errorf("the marker SessionStart hook ran in session %s, not the agent's: a reviewer's Codex ran the user's hooks", s)
		}
	}
	files := r.sessionFiles()
	if len(files) == 0 {
		t.Errorf("no session file in %s: the check for reviewer sessions proves nothing", filepath.Join(r.codexHome, "sessions"))
	}
	for _, f := range files {
		if !strings.Contains(filepath.Base(f), thread) {
			t.Errorf("session file %s is not the agent's (%s): a reviewer did not run --ephemeral", f, thread)
		}
	}
}

// checkCodexThreadID: CODEX_THREAD_ID in the agent's shell is the thread
// (session) id Codex sends, and the plan is owned by that session.
func checkCodexThreadID(t *testing.T, agent []codexapi.Record, thread, planDir string) {
	t.Helper()
	var got string
	for _, a := range agent {
		if m := regexp.MustCompile(`thread=(\S*)`).FindStringSubmatch(a.LastOutput); m != nil {
			got = m[1]
		}
	}
	if got == "" || got != thread {
		t.Errorf("CODEX_THREAD_ID in the agent's shell is %q, want the thread id %q", got, thread)
	}
	var st struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal([]byte(readCodexFile(t, filepath.Join(planDir, "state.json"))), &st)
	if st.SessionID != thread {
		t.Errorf("state.json session_id %q, want the Codex thread %q (the hook's session_id)", st.SessionID, thread)
	}
}

// ---------------------------------------------------------------- rig

// codexRig is one test's world: a HOME with a login profile and a
// CODEX_HOME whose config.toml points at the scripted server, a git
// project with plan p (task 1 ready), and the environment to run in.
type codexRig struct {
	t                           *testing.T
	codex, bin, home, codexHome string
	proj                        string
	srv                         *codexapi.Server
	env                         []string
	marker                      string // in env: ends the rig's processes (killMarked)
}

func newCodexRig(t *testing.T, codex, bin, format string, script codexapi.Script) *codexRig {
	t.Helper()
	work := t.TempDir()
	r := &codexRig{t: t, codex: codex, bin: bin, home: filepath.Join(work, "home"), proj: filepath.Join(work, "project")}
	r.codexHome = filepath.Join(r.home, ".codex")
	for _, d := range []string{r.codexHome, r.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script.Dir = r.proj
	r.srv = codexapi.Start(script, codexapi.Options{Log: codexTestLog{t}, DumpDir: dumpDir(t)})
	t.Cleanup(r.srv.Close)
	// The user's own Codex settings: the reviewer that taskie starts reads
	// the provider from here (the agent gets it as -c flags too).
	writeCodexFile(t, filepath.Join(r.codexHome, "config.toml"), fmt.Sprintf(`# The user's Codex settings: taskie install codex must keep them as they are.
model = %q
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "scripted Responses API"
base_url = %q
wire_api = "responses"
env_key = "OPENAI_API_KEY"
`, codexModel, r.srv.BaseURL()))
	// Codex runs the hooks with its own PATH (r.env below: taskie first)
	// and the agent's commands in a snapshot of a login shell, which starts
	// from the system PATH (Debian's /etc/profile): the profile puts taskie
	// (and the codex the reviewer runs) on that one, as a user must. Both
	// are needed, and taskie doctor checks both; a rig with taskie on only
	// one of them would hide the other's failure.
	writeCodexFile(t, filepath.Join(r.home, ".profile"), fmt.Sprintf("export PATH=%q:%q:\"$PATH\"\n", bin, filepath.Dir(codex)))
	// A TMPDIR and a marker of the rig's own: the tests run in parallel.
	tmp := t.TempDir()
	r.marker = newMarker(t)
	r.env = []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + r.home,
		"CODEX_HOME=" + r.codexHome,
		"OPENAI_API_KEY=sk-e2e-dummy-key",
		"SHELL=/bin/bash",
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid",
		r.marker,
	}
	r.newProject(format)
	return r
}

// newProject makes a git repository with plan p: two pending tasks, the
// plan waiting for task 1, reviews by Codex.
func (r *codexRig) newProject(format string) {
	r.run("git", "init", "-q")
	r.taskie("init")
	r.taskie("plan", "new", "p")
	planDir := filepath.Join(r.proj, ".taskie", "plans", "p")
	writeCodexFile(r.t, filepath.Join(planDir, "plan.md"), "# Plan: p\n\nA greeting library in Go.\n")
	writeCodexFile(r.t, filepath.Join(planDir, "tasks.md"),
		"| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | greet |\n| 2 | pending | farewell |\n")
	writeCodexFile(r.t, filepath.Join(planDir, "task-1.md"), "# Task 1: greet\n\nWrite hello.go with Greet(name).\n")
	writeCodexFile(r.t, filepath.Join(planDir, "task-2.md"), "# Task 2: farewell\n\nWrite bye.go with Bye(name).\n")
	r.taskie("done", "create-tasks")
	writeCodexFile(r.t, filepath.Join(r.proj, ".taskie", "config.json"), fmt.Sprintf(`{"reviewer": "codex", "output_format": %q}`, format))
	r.run("git", "add", "-A")
	r.run("git", "commit", "-q", "-m", "plan p")
}

func (r *codexRig) run(name string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = r.proj, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// taskie runs the built taskie in the project; doctor may exit 1.
func (r *codexRig) taskie(args ...string) string {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(r.bin, "taskie"), args...)
	cmd.Dir, cmd.Env = r.proj, r.env
	out, err := cmd.CombinedOutput()
	if err != nil && !(len(args) > 0 && args[0] == "doctor") {
		r.t.Fatalf("taskie %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// markerCommand is the user's own SessionStart hook the tests add: it
// keeps each hook input (whose session_id names the session) in a file.
const markerCommand = `cat > "$(mktemp "$CODEX_HOME/marker-runs/run.XXXXXX")"`

// addMarkerHook adds markerCommand to the rig's hooks.json as a
// SessionStart hook, trusted in config.toml as the user would trust it,
// after whatever is there.
func (r *codexRig) addMarkerHook() {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Join(r.codexHome, "marker-runs"), 0o755); err != nil {
		r.t.Fatal(err)
	}
	path := filepath.Join(install.CodexHome(r.home, r.codexHome), "hooks.json")
	doc := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &doc); err != nil {
			r.t.Fatal(err)
		}
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		doc["hooks"] = hooks
	}
	groups, _ := hooks["SessionStart"].([]any)
	timeout := int64(10)
	handler := map[string]any{"type": "command", "command": markerCommand, "timeout": timeout}
	hooks["SessionStart"] = append(groups, map[string]any{"hooks": []any{handler}})
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		r.t.Fatal(err)
	}
	writeCodexFile(r.t, path, string(data)+"\n")
	key := install.CodexHookKey(path, "SessionStart", len(groups), 0)
	hash := install.CodexHookHash("SessionStart", nil, install.CodexHandler{Type: "command", Command: markerCommand, Timeout: &timeout})
	config := filepath.Join(r.codexHome, "config.toml")
	old := readCodexFile(r.t, config)
	writeCodexFile(r.t, config, old+fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", key, hash))
}

// markerSessions are the session ids the marker hook ran for.
func (r *codexRig) markerSessions() []string {
	r.t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.codexHome, "marker-runs", "run.*"))
	var out []string
	for _, f := range files {
		var in struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(readCodexFile(r.t, f)), &in); err != nil {
			r.t.Errorf("marker hook input %s: %v", f, err)
			continue
		}
		out = append(out, in.SessionID)
	}
	return out
}

// sessionFiles lists the files Codex keeps for `codex resume`.
func (r *codexRig) sessionFiles() []string {
	var out []string
	_ = filepath.WalkDir(filepath.Join(r.codexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// install runs `taskie install codex` into the rig's CODEX_HOME.
func (r *codexRig) install(flags ...string) string {
	r.t.Helper()
	return r.taskie(append([]string{"install", "codex"}, flags...)...)
}

// exec runs one `codex exec` turn in the project, in its own process
// group, until it ends or ctx does; leftovers are ended on the way out.
func (r *codexRig) exec(ctx context.Context, prompt string) (string, string, error) {
	r.t.Helper()
	provider := fmt.Sprintf(`model_providers.fake={name="scripted Responses API",base_url=%q,wire_api="responses",env_key="OPENAI_API_KEY"}`, r.srv.BaseURL())
	cmd := exec.CommandContext(ctx, r.codex, "exec",
		"-c", provider, "-c", "model_provider=fake", "-m", codexModel,
		// No sandbox: bubblewrap needs user namespaces, which containers
		// and CI often lack; the agent must write the project's files.
		"-s", "danger-full-access",
		prompt)
	cmd.Dir, cmd.Env = r.proj, r.env
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	r.t.Logf("codex exec took %s", time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		err = fmt.Errorf("still running at the deadline (%s for the whole test), killed: %w", codexRunLimit, err)
	}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	killMarked(r.t, r.marker)
	return stdout.String(), stderr.String(), err
}

// ---------------------------------------------------------------- helpers

func requireCodex(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		skipTest(t, "the real Codex client tests do not run with -short")
	}
	p, err := exec.LookPath("codex")
	if err != nil {
		skipTest(t, "`codex` (the real Codex CLI) is not on PATH; "+codexInstallHint)
	}
	t.Logf("using %s: %s", p, clientVersion(p))
	return p
}

func codexDeadline(t *testing.T) (context.Context, context.CancelFunc) {
	end := time.Now().Add(codexRunLimit)
	if d, ok := t.Deadline(); ok && d.Add(-15*time.Second).Before(end) {
		end = d.Add(-15 * time.Second)
	}
	return context.WithDeadline(context.Background(), end)
}

func codexRepoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "codex", "hooks.json")); err != nil {
		t.Fatalf("repository root not found from the e2e directory: %v", err)
	}
	return root
}

type codexTestLog struct{ t *testing.T }

func (l codexTestLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func writeCodexFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readCodexFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
