//go:build unix

// Package e2e runs taskie with the real Claude Code CLI (`claude`), against
// a scripted, loopback-only Messages API server (e2e/claudeapi). The tests
// skip when `claude` is not on PATH; e2e/install-claude.sh installs it.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/claudeapi"
)

// runLimit bounds each test (or subtest) that runs clients, from the
// moment it has a lane (queue) to run in: every real-client run, reviews
// included. The suite must stay bounded.
const runLimit = 2 * time.Minute

// deadline is runLimit from now, or earlier when `go test -timeout` ends
// sooner (leaving time to end the processes and report). Tests take it as
// soon as queue gave them a lane.
func deadline(t *testing.T) (context.Context, context.CancelFunc) {
	end := time.Now().Add(runLimit)
	if d, ok := t.Deadline(); ok && d.Add(-15*time.Second).Before(end) {
		end = d.Add(-15 * time.Second)
	}
	return context.WithDeadline(context.Background(), end)
}

// TestRealClientCodeReviewLoop drives one task through taskie's code review
// loop inside a real `claude -p` session with the repository's plugin: the
// Stop hook runs three nested `claude -p` reviewers (FAIL, PASS, PASS), the
// agent does a post-review after each of the first two blocks, and the plan
// advances after two clean reviews in a row. It runs once with each block
// output format: exit code 2 with the reason on stderr (the default) and
// the JSON decision on stdout.
func TestRealClientCodeReviewLoop(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	for _, format := range []string{"exit2", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			bin := queue(t, root, 10*time.Second)
			ctx, cancel := deadline(t)
			defer cancel()
			reviewLoop(ctx, t, claude, root, bin, format)
		})
	}
}

func reviewLoop(ctx context.Context, t *testing.T, claude, root, bin, format string) {
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	home := filepath.Join(work, "home")
	stopLog := filepath.Join(work, "stop-inputs.jsonl")
	mkdirs(t, proj, home)
	seedHome(t, home, stopLog)
	newProject(t, bin, proj)
	if format != "exit2" {
		writeFile(t, filepath.Join(proj, ".taskie", "config.json"), fmt.Sprintf(`{"output_format": %q}`, format))
	}

	srv := claudeapi.Start(claudeapi.Script{
		Dir: proj,
		FirstTurn: []claudeapi.Reply{
			claudeapi.Call("Bash", map[string]any{"command": "taskie start 1 --auto", "description": "Start task 1 in taskie"}),
			claudeapi.Call("Write", map[string]any{"file_path": filepath.Join(proj, "hello.go"), "content": helloGo}),
			claudeapi.Text("Task 1 is implemented in hello.go."),
		},
		Verdicts: []string{"FAIL", "PASS", "PASS"},
	}, claudeapi.Options{Log: testLog{t}, DumpDir: dumpDir(t)})
	defer srv.Close()

	env := claudeEnv(t, bin, home, srv.URL())
	start := time.Now()
	stdout, stderr, err := runClaude(ctx, t, claude, proj, env,
		"-p", "Implement task 1 of the taskie plan p.",
		"--plugin-dir", filepath.Join(root, "plugin"),
		"--output-format", "json",
		"--permission-mode", "dontAsk",
		"--allowedTools", "Bash(taskie *)", "Read", "Write",
	)
	t.Logf("claude -p took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	result := parseResult(t, stdout)

	checkPlan(t, filepath.Join(proj, ".taskie", "plans", "p"))
	checkReviewers(t, srv, result.SessionID)
	checkAgent(t, srv, result.SessionID, format)
	checkStopInputs(t, stopLog, result.SessionID)
	checkHookLog(t, filepath.Join(proj, ".taskie", "logs", "p.log"), result.SessionID)
	if len(result.PermissionDenials) > 0 {
		t.Errorf("permission denials: %s", result.PermissionDenials)
	}
}

// checkPlan: three reviews, two post-reviews, the plan advanced to the
// next task with task 1 done, and the review events logged.
func checkPlan(t *testing.T, planDir string) {
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
		CurrentTask      string `json:"current_task"`
	}
	readJSON(t, filepath.Join(planDir, "state.json"), &st)
	if st.Phase != "code-review" || st.NextPhase != "complete-task" || st.ConsecutiveClean != 2 || st.CurrentTask != "1" {
		t.Errorf("state.json: phase %q next_phase %q consecutive_clean %d current_task %q; want code-review, complete-task, 2, 1",
			st.Phase, st.NextPhase, st.ConsecutiveClean, st.CurrentTask)
	}
	wantAwaitingCommit(t, planDir)
	verdicts := reviewVerdicts(t, filepath.Join(planDir, "events.jsonl"))
	if got := strings.Join(verdicts, ","); got != "FAIL,PASS,PASS" {
		t.Errorf("events.jsonl: REVIEW_FINISHED verdicts %q, want FAIL,PASS,PASS", got)
	}
	// The review ledger through the real client: the first reviewer's
	// finding gets id F1; the agent, told so by the block, marks it fixed
	// (`taskie finding fixed F1 --note …`, actor post-review) before it
	// records the post-review; the second reviewer, shown F1 on record,
	// confirms it (actor reviewer, the agent's note kept).
	checkLedger(t, planEvents(t, filepath.Join(planDir, "events.jsonl")))
}

// checkLedger checks the F1 events of the review ledger, in log order.
func checkLedger(t *testing.T, evs []event) {
	t.Helper()
	var got []string
	for _, e := range evs {
		id, _ := e.Meta["id"].(string)
		note, _ := e.Meta["note"].(string)
		switch {
		case strings.HasPrefix(e.Event, "FINDING_") && id == "F1":
			got = append(got, fmt.Sprintf("%s by %s: %s", e.Event, e.Actor, note))
		case e.Event == "REVIEW_FINISHED":
			got = append(got, fmt.Sprintf("review %v", e.Meta["iteration"]))
		}
	}
	want := []string{
		"review 1",
		"FINDING_OPENED by reviewer: ",
		"FINDING_FIXED by post-review: " + claudeapi.FixNote,
		"review 2",
		"FINDING_FIXED by reviewer: " + claudeapi.FixNote,
		"review 3",
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("events.jsonl: the review ledger's F1:\n%s\nwant:\n%s", g, w)
	}
}

// checkReviewers: three nested sessions of their own, models alternating
// opus, sonnet, opus, each prompt naming its review file, and no hook
// context in any of them (taskie runs them with hooks disabled).
func checkReviewers(t *testing.T, srv *claudeapi.Server, mainSession string) {
	t.Helper()
	reviews := firstPerSession(srv.Calls(claudeapi.Reviewer))
	var models []string
	for _, r := range reviews {
		models = append(models, r.Model)
	}
	if len(models) != 3 || !strings.Contains(models[0], "opus") || !strings.Contains(models[1], "sonnet") || !strings.Contains(models[2], "opus") {
		t.Errorf("reviewer models %q, want opus, sonnet, opus", models)
	}
	for _, r := range srv.Calls(claudeapi.Reviewer) {
		if r.SessionStartContext != "" {
			t.Errorf("reviewer request #%d got SessionStart hook context (hooks must be off in the reviewer): %q", r.Seq, r.SessionStartContext)
		}
	}
	for _, r := range reviews {
		if r.Session == mainSession {
			t.Errorf("a reviewer request came from the main session %s", r.Session)
		}
		if !regexp.MustCompile(`task-1-review-\d\.md`).MatchString(r.FirstUserText) {
			t.Errorf("reviewer prompt names no review file:\n%s", r.FirstUserText)
		}
	}
}

// checkAgent: the plugin's SessionStart hook told the agent where plan p
// stands; it reacted to exactly two blocks, each a code-review block as
// Claude Code words it for the block format; no tool call failed.
func checkAgent(t *testing.T, srv *claudeapi.Server, mainSession, format string) {
	t.Helper()
	agent := srv.Calls(claudeapi.Agent)
	if len(agent) == 0 {
		t.Fatal("the agent made no request")
	}
	// (The wording is taskie's to change: only check that it came.)
	if ctx := agent[0].SessionStartContext; !strings.Contains(ctx, "taskie") {
		t.Errorf("the agent's first request has no taskie SessionStart context: %q", ctx)
	} else {
		t.Logf("SessionStart context as the model saw it: %q", ctx)
	}
	var feedback []string
	for _, r := range agent {
		if r.Feedback != "" && (len(feedback) == 0 || feedback[len(feedback)-1] != r.Feedback) {
			feedback = append(feedback, r.Feedback)
		}
		if r.Session != mainSession {
			t.Errorf("agent request from session %q, want the main session %q", r.Session, mainSession)
		}
	}
	if len(feedback) != 2 {
		t.Errorf("the agent saw %d distinct Stop hook blocks, want 2", len(feedback))
	}
	// Claude Code names the hook command before a reason taken from stderr
	// (exit 2), not before one taken from a JSON decision.
	prefix := "Stop hook feedback:\n[taskie hook stop]: taskie: "
	if format == "json" {
		prefix = "Stop hook feedback:\ntaskie: "
	}
	for i, f := range feedback {
		want := fmt.Sprintf("task-1-review-%d.md", i+1) // the block names the review file (docs/hook.md)
		if !strings.HasPrefix(f, prefix) || !strings.Contains(f, want) || !strings.Contains(f, "taskie done post-code-review") {
			t.Errorf("block %d does not read like a code-review block (%q, %q):\n%s", i+1, prefix, want, f)
		}
	}
	// The first block lists the open finding by its id and says how to
	// record it; the second (F1 fixed) lists none.
	if len(feedback) == 2 {
		if f := feedback[0]; !strings.Contains(f, "- F1 (major) hello.go — the empty name is not handled") || !strings.Contains(f, "taskie finding fixed") {
			t.Errorf("block 1 does not list F1 and `taskie finding fixed`:\n%s", f)
		}
		if strings.Contains(feedback[1], "- F1 (") {
			t.Errorf("block 2 still lists F1, fixed and confirmed:\n%s", feedback[1])
		}
	}
	if len(feedback) > 0 {
		t.Logf("first Stop hook feedback as the model saw it:\n%s", feedback[0])
	}
	for _, r := range srv.Records() {
		if len(r.ToolErrors) > 0 {
			t.Errorf("request #%d (%s): tool errors: %q", r.Seq, r.Role, r.ToolErrors)
		}
	}
}

// checkStopInputs reads the Stop hook inputs recorded by the probe hook in
// the user settings: all from the main session (the nested reviewers run
// with hooks disabled), the first with stop_hook_active false and the
// later ones true.
func checkStopInputs(t *testing.T, stopLog, mainSession string) {
	t.Helper()
	inputs := stopInputs(t, stopLog)
	if len(inputs) != 3 {
		t.Errorf("recorded %d Stop hook inputs, want 3 (first stop, then one after each post-review)", len(inputs))
	}
	for i, in := range inputs {
		if in.SessionID != mainSession {
			t.Errorf("Stop input %d from session %q, want only the main session %q (hooks must be off in the reviewer)", i, in.SessionID, mainSession)
		}
		if want := i > 0; in.StopHookActive != want {
			t.Errorf("Stop input %d: stop_hook_active %v, want %v", i, in.StopHookActive, want)
		}
	}
	for i, in := range inputs {
		t.Logf("Stop hook input %d: %s", i+1, in.raw)
	}
}

// checkHookLog reads taskie's own log of its Stop hook decisions: block,
// block, allow, all for the main session.
func checkHookLog(t *testing.T, path, mainSession string) {
	t.Helper()
	var decisions []string
	hookLog := readFile(t, path)
	for _, line := range strings.Split(strings.TrimSpace(hookLog), "\n") {
		var d struct {
			Msg      string `json:"msg"`
			Session  string `json:"session"`
			Decision string `json:"decision"`
		}
		if json.Unmarshal([]byte(line), &d) == nil && d.Msg == "stop" {
			decisions = append(decisions, d.Decision)
			if d.Session != mainSession {
				t.Errorf("taskie logged a Stop decision for session %q, want only %q", d.Session, mainSession)
			}
		}
	}
	if got := strings.Join(decisions, ","); got != "block,block,allow" {
		t.Errorf("taskie's Stop decisions %q, want block,block,allow", got)
	}
	t.Logf("taskie hook log:\n%s", hookLog)
}

// TestRealClientPluginValidates runs `claude plugin validate` on the plugin.
func TestRealClientPluginValidates(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	queue(t, root, 2*time.Second)
	ctx, cancel := deadline(t)
	defer cancel()
	home := t.TempDir()
	// Not used for validation, but without a base URL the CLI looks up the
	// real API's host name: keep every connection on the loopback.
	srv := claudeapi.Start(claudeapi.Script{}, claudeapi.Options{Log: testLog{t}})
	defer srv.Close()
	stdout, stderr, err := runClaude(ctx, t, claude, root, claudeEnv(t, "", home, srv.URL()), "plugin", "validate", filepath.Join(root, "plugin"))
	t.Logf("claude plugin validate:\n%s%s", stdout, stderr)
	if err != nil {
		t.Fatalf("claude plugin validate %s: %v", filepath.Join(root, "plugin"), err)
	}
}

const helloGo = `package hello

// Greet greets name, or the world when name is empty.
func Greet(name string) string {
	if name == "" {
		name = "world"
	}
	return "hello, " + name
}
`

// requireClaude skips unless the real CLI is on PATH (and not -short).
func requireClaude(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		skipTest(t, "the real Claude Code client tests do not run with -short")
	}
	p, err := exec.LookPath("claude")
	if err != nil {
		skipTest(t, "`claude` (the real Claude Code client) is not on PATH; "+installHint)
	}
	t.Logf("using %s: %s", p, clientVersion(p))
	return p
}

// versions caches the `--version` answer of each client, asked once.
var versions sync.Map // path → func() string

func clientVersion(path string) string {
	v, _ := versions.LoadOrStore(path, sync.OnceValue(func() string {
		out, _ := exec.Command(path, "--version").Output()
		return strings.TrimSpace(string(out))
	}))
	return v.(func() string)()
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "plugin", "hooks", "hooks.json")); err != nil {
		t.Fatalf("repository root not found from the e2e directory: %v", err)
	}
	return root
}

// newProject makes a git repository with plan p: two pending tasks, and
// the plan waiting for the agent to start task 1.
func newProject(t *testing.T, bin, proj string) {
	t.Helper()
	run := func(name string, args ...string) {
		t.Helper()
		if name == "taskie" {
			name = filepath.Join(bin, "taskie")
		}
		cmd := exec.Command(name, args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid",
			"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run("git", "init", "-q")
	run("taskie", "init")
	run("taskie", "plan", "new", "p")
	planDir := filepath.Join(proj, ".taskie", "plans", "p")
	writeFile(t, filepath.Join(planDir, "plan.md"), "# Plan: p\n\nA greeting library in Go.\n")
	writeFile(t, filepath.Join(planDir, "tasks.md"),
		"| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | greet |\n| 2 | pending | farewell |\n")
	writeFile(t, filepath.Join(planDir, "task-1.md"), "# Task 1: greet\n\nWrite hello.go with Greet(name).\n")
	writeFile(t, filepath.Join(planDir, "task-2.md"), "# Task 2: farewell\n\nWrite bye.go with Bye(name).\n")
	run("taskie", "done", "create-tasks")
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "plan p")
}

// seedHome gives the CLI an empty user configuration of its own, plus a
// probe Stop hook that appends every Stop hook input to stopLog. The
// nested reviewers share this HOME, so the probe also shows whether their
// hooks were really off.
func seedHome(t *testing.T, home, stopLog string) {
	t.Helper()
	settings := map[string]any{
		"hooks": map[string]any{
			"Stop": []any{map[string]any{"hooks": []any{map[string]any{
				"type": "command", "command": fmt.Sprintf("cat >> '%s'; echo >> '%s'", stopLog, stopLog),
			}}}},
		},
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	mkdirs(t, filepath.Join(home, ".claude"))
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), string(b))
}

// claudeEnv is the whole environment of the CLI: nothing of the host's
// Claude or taskie configuration leaks in (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP
// included), and no traffic leaves the loopback interface. Each call has a
// TMPDIR and a process marker of its own (the CLI keeps per-project files
// under $TMPDIR/claude-<uid>/), and ends the marked processes when t ends.
func claudeEnv(t *testing.T, bin, home, baseURL string) []string {
	t.Helper()
	path := os.Getenv("PATH")
	if bin != "" {
		path = bin + string(os.PathListSeparator) + path
	}
	tmp := t.TempDir()
	m := newMarker(t)
	env := []string{
		"PATH=" + path,
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
		"ANTHROPIC_API_KEY=sk-ant-e2e-dummy-key",
		// Telemetry, error reports, update checks and the like would
		// otherwise try the network.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		// Marks every process of this run, for cleanup (killMarked).
		m,
	}
	if baseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+baseURL)
	}
	return env
}

// markerKey names the environment entry that marks the processes of one
// test: the nested reviewers inherit it even though taskie puts them in
// process groups of their own, so a timed-out run can still find and end
// them. Every test (and subtest) that starts clients has a marker of its
// own, so that its cleanup ends its own processes only and the tests can
// run in parallel.
const markerKey = "TASKIE_E2E_RUN"

var markers atomic.Int64

// newMarker returns a new marker entry (unique to this test process and
// this call) and ends the processes that carry it when t ends, before t's
// temporary directories are removed.
func newMarker(t *testing.T) string {
	t.Helper()
	m := fmt.Sprintf("%s=%d-%d-%d", markerKey, os.Getpid(), time.Now().UnixNano(), markers.Add(1))
	t.Cleanup(func() { killMarked(t, m) })
	return m
}

// markerOf is env's marker entry.
func markerOf(t *testing.T, env []string) string {
	t.Helper()
	for _, e := range env {
		if strings.HasPrefix(e, markerKey+"=") {
			return e
		}
	}
	t.Fatalf("the environment has no %s marker: its processes could not be ended", markerKey)
	return ""
}

// runClaude runs the CLI in its own process group until ctx ends; on the
// way out it ends whatever the run left behind.
func runClaude(ctx context.Context, t *testing.T, claude, dir string, env []string, args ...string) (string, string, error) {
	t.Helper()
	m := markerOf(t, env)
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = nil // /dev/null: -p must not wait for input
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running at the deadline (%s for the whole test), killed: %w", runLimit, err)
	}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers in its group
	}
	killMarked(t, m)
	return stdout.String(), stderr.String(), err
}

// killMarked ends every process whose environment holds the entry marker
// exactly (Linux: /proc; elsewhere only the process group is ended).
func killMarked(t *testing.T, marker string) {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !slices.ContainsFunc(bytes.Split(env, []byte{0}), func(e []byte) bool { return string(e) == marker }) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "%d", &pid); err == nil && pid != os.Getpid() {
			t.Logf("ending leftover process %d", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestKillMarkedEndsOnlyItsOwn: a test's cleanup ends the processes that
// carry its marker, and not those of another test running at the same
// time, even one whose marker starts with the same text.
func TestKillMarkedEndsOnlyItsOwn(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: killMarked can only end process groups here")
	}
	// Each process waits for a line and then says it is alive: one ended
	// by a SIGKILL sent before the line came cannot.
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   bytes.Buffer
	}
	start := func(marker string) *proc {
		p := &proc{cmd: exec.Command("/bin/sh", "-c", "read line; echo alive")}
		p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), marker}
		p.cmd.Stdout = &p.out
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
		return p
	}
	alive := func(p *proc) bool {
		_, _ = io.WriteString(p.stdin, "go\n")
		_ = p.stdin.Close()
		_ = p.cmd.Wait()
		return p.out.String() == "alive\n"
	}
	mine := newMarker(t)
	own, other := start(mine), start(mine+"0") // Start returns once they run sh
	killMarked(t, mine)
	if alive(own) {
		t.Error("killMarked did not end the process that carries its marker")
	}
	if !alive(other) {
		t.Errorf("killMarked ended the process of another marker (%s)", mine+"0")
	}
}

// dumpDir is where the server of t saves request bodies: a directory of
// t's own under TASKIE_E2E_DUMP ("" when that is not set), since the
// tests run at once and every server numbers its requests from 1.
func dumpDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("TASKIE_E2E_DUMP")
	if root == "" {
		return ""
	}
	dir := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
	mkdirs(t, dir)
	return dir
}

// result is the part of `claude -p --output-format json` the test reads.
type result struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	IsError           bool            `json:"is_error"`
	Result            string          `json:"result"`
	SessionID         string          `json:"session_id"`
	NumTurns          int             `json:"num_turns"`
	PermissionDenials json.RawMessage `json:"permission_denials"`
}

func parseResult(t *testing.T, stdout string) result {
	t.Helper()
	var r result
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &r); err != nil {
		t.Fatalf("claude -p output is not one JSON result: %v\n%s", err, stdout)
	}
	if r.IsError || r.Subtype != "success" {
		t.Fatalf("claude -p failed: %s", stdout)
	}
	if string(r.PermissionDenials) == "[]" {
		r.PermissionDenials = nil
	}
	t.Logf("claude -p result: session %s, %d turns, final text %q", r.SessionID, r.NumTurns, r.Result)
	return r
}

// stopInput is one recorded Stop hook input.
type stopInput struct {
	SessionID      string `json:"session_id"`
	StopHookActive bool   `json:"stop_hook_active"`
	HookEventName  string `json:"hook_event_name"`
	raw            string
}

func stopInputs(t *testing.T, path string) []stopInput {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []stopInput
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		in := stopInput{raw: line}
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("%s: not JSON: %v: %s", path, err, line)
		}
		out = append(out, in)
	}
	return out
}

// reviewVerdicts lists the verdicts of the REVIEW_FINISHED events.
func reviewVerdicts(t *testing.T, path string) []string {
	t.Helper()
	var verdicts []string
	for _, line := range strings.Split(readFile(t, path), "\n") {
		var ev struct {
			Event string         `json:"event"`
			Meta  map[string]any `json:"meta"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Event != "REVIEW_FINISHED" {
			continue
		}
		v, _ := ev.Meta["verdict"].(string)
		verdicts = append(verdicts, v)
	}
	return verdicts
}

// firstPerSession keeps the first request of each CLI session, in order.
func firstPerSession(rs []claudeapi.Record) []claudeapi.Record {
	seen := map[string]bool{}
	var out []claudeapi.Record
	for _, r := range rs {
		if !seen[r.Session] {
			seen[r.Session] = true
			out = append(out, r)
		}
	}
	return out
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(readFile(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
