package review

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// fakeDir holds the fake reviewer built as "claude" and "codex".
var fakeDir string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if code, ok := childMain(); ok {
		return code // this process is a hook started by a test
	}
	dir, err := os.MkdirTemp("", "taskie-fakereviewer-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	claude := filepath.Join(dir, "claude"+exeSuffix())
	build := exec.Command("go", "build", "-o", claude, "github.com/taskie-dev/taskie/internal/testtools/fakereviewer")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the fake reviewer: %v\n%s", err, out)
		return 1
	}
	b, err := os.ReadFile(claude)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "codex"+exeSuffix()), b, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fakeDir = dir
	return m.Run()
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// fakeLog is one line of FAKE_REVIEW_LOG.
type fakeLog struct {
	Name          string   `json:"name"`
	Args          []string `json:"args"`
	Model         string   `json:"model"`
	Effort        string   `json:"effort"`
	PID           int      `json:"pid"`
	EnvClaudeCode bool     `json:"env_CLAUDECODE"`
	EnvEntrypoint bool     `json:"env_CLAUDE_CODE_ENTRYPOINT"`
	EnvSkip       string   `json:"env_TASKIE_HOOK_SKIP"`
	StdinLen      int      `json:"stdin_len"`
	ReviewFile    string   `json:"review_file"`
	Step          string   `json:"step"`
	Cwd           string   `json:"cwd"`
	ChildPID      int      `json:"child_pid"`
	PromptIDs     []string `json:"prompt_ids"`
}

type fixture struct {
	root, planDir, log string
}

// newFixture makes a project with one plan, puts the fake first on PATH
// and gives it steps. CLAUDECODE is set as inside a real session: the fake
// refuses to run if it leaks through.
func newFixture(t *testing.T, steps ...string) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{root: root, planDir: filepath.Join(root, ".taskie", "plans", "p1"), log: filepath.Join(t.TempDir(), "log.jsonl")}
	if err := os.MkdirAll(f.planDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plan.md", "tasks.md", "task-1.md"} {
		writeFile(t, filepath.Join(f.planDir, name), "# "+name+"\n")
	}
	script := filepath.Join(t.TempDir(), "script")
	writeFile(t, script, strings.Join(steps, "\n")+"\n")
	t.Setenv("PATH", fakeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_REVIEW_SCRIPT", script)
	t.Setenv("FAKE_REVIEW_STATE", script+".state")
	t.Setenv("FAKE_REVIEW_LOG", f.log)
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
	t.Setenv("TASKIE_HOOK_SKIP", "")
	// No trust store, no Claude Code config: the reviewer gets no Bash.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	return f
}

func (f *fixture) request(iteration int) Request {
	return Request{
		Kind: domain.CodeReview, PlanID: "p1", Task: 1, Iteration: iteration, Model: "model-strong",
		Root: f.root, PlanDir: f.planDir,
		ReviewFile: filepath.Join(f.planDir, fmt.Sprintf("task-1-review-%d.md", iteration)),
		TaskFiles:  []string{"task-1.md"},
		Timeout:    30 * time.Second,
	}
}

func (f *fixture) logs(t *testing.T) []fakeLog {
	t.Helper()
	file, err := os.Open(f.log)
	if err != nil {
		t.Fatalf("fake reviewer log: %v", err)
	}
	defer file.Close()
	var logs []fakeLog
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var l fakeLog
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("bad log line %q: %v", sc.Text(), err)
		}
		logs = append(logs, l)
	}
	return logs
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
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

func mustNew(t *testing.T, name string) Reviewer {
	t.Helper()
	r, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantFailure asserts err is a *Failure of kind with all of msgs in its
// message and the reviewer's output kept.
func wantFailure(t *testing.T, res Result, err error, kind string, msgs ...string) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v (%T), want a *Failure of kind %s", err, err, kind)
	}
	if f.Kind != kind {
		t.Errorf("Failure.Kind = %q, want %q (msg: %s)", f.Kind, kind, f.Msg)
	}
	for _, m := range msgs {
		if !strings.Contains(f.Msg, m) {
			t.Errorf("Failure.Msg = %q, want it to contain %q", f.Msg, m)
		}
	}
	if string(res.Raw) != string(f.Raw) {
		t.Errorf("Result.Raw = %q, Failure.Raw = %q; want the same output", res.Raw, f.Raw)
	}
	return f
}

var adapterNames = []string{"claude", "codex"}

func TestReviewVerdictWrittenByReviewer(t *testing.T) {
	for _, name := range adapterNames {
		for _, step := range []string{"PASS", "FAIL"} {
			t.Run(name+"/"+step, func(t *testing.T) {
				f := newFixture(t, step)
				req := f.request(1)
				res, err := mustNew(t, name).Review(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != domain.Verdict(step) || res.WroteFile || res.Model != "model-strong" {
					t.Errorf("got verdict %q, WroteFile %v, model %q; want %s, false, model-strong", res.Verdict, res.WroteFile, res.Model, step)
				}
				body := readFile(t, req.ReviewFile)
				if !strings.Contains(body, "step "+step) || res.Text != body {
					t.Errorf("review file = %q, Text = %q; want the fake's %s review in both", body, res.Text, step)
				}
				if len(res.Raw) == 0 || res.DurationMS <= 0 {
					t.Errorf("Raw = %q, DurationMS = %d; want output and a duration", res.Raw, res.DurationMS)
				}
				if name == "claude" && (res.SessionID != "fake-1" || res.CostUSD != 0.0123 || res.DurationMS != 1234) {
					t.Errorf("session %q cost %v duration %d; want fake-1 0.0123 1234", res.SessionID, res.CostUSD, res.DurationMS)
				}
			})
		}
	}
}

// TestReviewInvocation checks argv, environment, stdin and working
// directory as seen by the reviewer.
func TestReviewInvocation(t *testing.T) {
	for _, name := range adapterNames {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "PASS")
			req := f.request(1)
			if _, err := mustNew(t, name).Review(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			logs := f.logs(t)
			if len(logs) != 1 {
				t.Fatalf("reviewer ran %d times, want 1", len(logs))
			}
			l := logs[0]
			if l.Name != name || l.Model != "model-strong" || l.ReviewFile != req.ReviewFile {
				t.Errorf("name %q model %q review file %q; want %s, model-strong, %s", l.Name, l.Model, l.ReviewFile, name, req.ReviewFile)
			}
			if l.EnvClaudeCode || l.EnvEntrypoint || l.EnvSkip != "1" {
				t.Errorf("env CLAUDECODE=%v CLAUDE_CODE_ENTRYPOINT=%v TASKIE_HOOK_SKIP=%q; want false false 1", l.EnvClaudeCode, l.EnvEntrypoint, l.EnvSkip)
			}
			prompt, _ := Prompt(req)
			if l.StdinLen != len(prompt) {
				t.Errorf("stdin_len = %d, want the prompt's %d", l.StdinLen, len(prompt))
			}
			if !sameDir(l.Cwd, f.root) {
				t.Errorf("cwd = %q, want %q", l.Cwd, f.root)
			}
			var want [][]string
			if name == "claude" {
				want = [][]string{{"-p"}, {"--model", "model-strong"}, {"--output-format", "json"}, {"--json-schema", Schema()},
					{"--permission-mode", "dontAsk"}, {"--allowedTools", "Read,Grep,Glob,Edit(/" + filepath.ToSlash(req.ReviewFile) + ")"},
					{"--strict-mcp-config", "--setting-sources", "user", "--settings", `{"disableAllHooks":true}`}, {"--disallowedTools", "Bash"}}
				if slices.Contains(l.Args, "--mcp-config") {
					t.Error("claude got --mcp-config")
				}
				if slices.Contains(l.Args, "--dangerously-skip-permissions") {
					t.Error("claude got --dangerously-skip-permissions")
				}
			} else {
				want = [][]string{{"exec", "--skip-git-repo-check", "--ephemeral", "--disable", "hooks", "--sandbox", "read-only", "--ignore-rules",
					"-c", codexUntrusted(f.root), "-c", "project_doc_max_bytes=0", "-m", "model-strong", "--output-schema"}, {"-o"}}
				if l.Args[len(l.Args)-1] != "-" {
					t.Errorf("codex args %q do not end with -", l.Args)
				}
			}
			for _, w := range want {
				if !containsSeq(l.Args, w) {
					t.Errorf("args %q lack %q", l.Args, w)
				}
			}
		})
	}
}

func TestReviewCustomTools(t *testing.T) {
	f := newFixture(t, "PASS")
	req := f.request(1)
	req.Tools = []string{"Read", "Write"}
	if _, err := mustNew(t, "claude").Review(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := "Read,Edit(/" + filepath.ToSlash(req.ReviewFile) + ")"
	if args := f.logs(t)[0].Args; !containsSeq(args, []string{"--allowedTools", want}) {
		t.Errorf("args %q lack --allowedTools %s", args, want)
	}
}

// TestReviewerTools: the reviewer's tools are boxed whatever the
// configuration lists: writes only to the review file, Bash only when the
// repository is trusted.
func TestReviewerTools(t *testing.T) {
	const file = "/repo/.taskie/plans/p/task-1-review-1.md"
	edit := "Edit(//repo/.taskie/plans/p/task-1-review-1.md)"
	tests := []struct {
		name  string
		tools []string
		bash  bool
		want  []string
	}{
		{"defaults, untrusted", domain.DefaultAllowedTools(), false, []string{"Read", "Grep", "Glob", edit}},
		{"defaults, trusted", domain.DefaultAllowedTools(), true, []string{"Read", "Grep", "Glob", "Bash", edit}},
		{"a narrowed Bash, untrusted", []string{"Read", "Bash(go test *)"}, false, []string{"Read"}},
		{"a narrowed Bash, trusted", []string{"Read", "Bash(go test *)"}, true, []string{"Read", "Bash(go test *)"}},
		{"every write tool is the review file", []string{"Write", "Edit", "MultiEdit"}, false, []string{edit}},
		{"a narrowed Edit stays", []string{"Edit(docs/**)"}, false, []string{"Edit(docs/**)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, reviewerTools(tc.tools, file, tc.bash)); diff != "" {
				t.Errorf("reviewerTools (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClaudeBoxFollowsTrust: the Bash decision comes from the repository's
// trust, asked with the review's root.
func TestClaudeBoxFollowsTrust(t *testing.T) {
	for _, bash := range []bool{false, true} {
		t.Run(fmt.Sprint("bash=", bash), func(t *testing.T) {
			f := newFixture(t, "PASS")
			var asked string
			old := reviewerBox
			reviewerBox = func(root string) config.Box { asked = root; return config.Box{Bash: bash} }
			t.Cleanup(func() { reviewerBox = old })
			req := f.request(1)
			if _, err := mustNew(t, "claude").Review(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if asked != f.root {
				t.Errorf("box asked for %q, want %q", asked, f.root)
			}
			args := f.logs(t)[0].Args
			i := slices.Index(args, "--allowedTools")
			if got := strings.Contains(args[i+1], "Bash"); got != bash {
				t.Errorf("--allowedTools %s: Bash %v, want %v", args[i+1], got, bash)
			}
			if denied := containsSeq(args, []string{"--disallowedTools", "Bash"}); denied == bash {
				t.Errorf("args %q: --disallowedTools Bash %v, want %v", args, denied, !bash)
			}
		})
	}
}

// TestReviewScriptAndModels runs successive iterations with alternating
// models, as the hook does.
func TestReviewScriptAndModels(t *testing.T) {
	for _, name := range adapterNames {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "FAIL", "PASS")
			r := mustNew(t, name)
			models := []domain.Model{"strong", "fast", "strong"}
			var verdicts []domain.Verdict
			for i, m := range models {
				req := f.request(i + 1)
				req.Model = m
				res, err := r.Review(context.Background(), req)
				if err != nil {
					t.Fatalf("iteration %d: %v", i+1, err)
				}
				verdicts = append(verdicts, res.Verdict)
			}
			if want := []domain.Verdict{domain.Fail, domain.Pass, domain.Pass}; !slices.Equal(verdicts, want) {
				t.Errorf("verdicts = %q, want %q", verdicts, want)
			}
			var got []domain.Model
			for _, l := range f.logs(t) {
				got = append(got, domain.Model(l.Model))
			}
			if !slices.Equal(got, models) {
				t.Errorf("models seen = %q, want %q", got, models)
			}
		})
	}
}

// TestReviewTaskieWritesFile covers a reviewer that could not write the
// file (codex's read-only sandbox) but returned the text.
func TestReviewTaskieWritesFile(t *testing.T) {
	for _, name := range adapterNames {
		for _, step := range []string{"PASS-NOFILE", "FAIL-NOFILE"} {
			t.Run(name+"/"+step, func(t *testing.T) {
				f := newFixture(t, step)
				req := f.request(1)
				res, err := mustNew(t, name).Review(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if !res.WroteFile || res.Verdict != domain.Verdict(strings.TrimSuffix(step, "-NOFILE")) {
					t.Errorf("WroteFile = %v, verdict %q; want true, %s", res.WroteFile, res.Verdict, step)
				}
				if body := readFile(t, req.ReviewFile); body != res.Text || !strings.Contains(body, "step "+step) {
					t.Errorf("review file = %q, want the review text %q", body, res.Text)
				}
			})
		}
	}
}

func TestReviewExistingFileUntouched(t *testing.T) {
	for _, name := range adapterNames {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "PASS-NOFILE")
			req := f.request(1)
			writeFile(t, req.ReviewFile, "original\n")
			res, err := mustNew(t, name).Review(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.WroteFile || res.Verdict != domain.Pass {
				t.Errorf("WroteFile = %v, verdict %q; want false, PASS", res.WroteFile, res.Verdict)
			}
			if body := readFile(t, req.ReviewFile); body != "original\n" {
				t.Errorf("existing review file overwritten: %q", body)
			}
		})
	}
}

func TestReviewResultFallbacks(t *testing.T) {
	for _, name := range adapterNames {
		for _, step := range []string{"RESULT-OBJ", "RESULT-STR"} {
			t.Run(name+"/"+step, func(t *testing.T) {
				f := newFixture(t, step)
				res, err := mustNew(t, name).Review(context.Background(), f.request(1))
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != domain.Pass || !strings.Contains(res.Text, "step "+step) {
					t.Errorf("verdict %q text %q; want PASS and the fake's review", res.Verdict, res.Text)
				}
			})
		}
	}
}

func TestReviewFailures(t *testing.T) {
	tests := []struct {
		adapter, step, kind string
		msgs                []string
		raw                 string // substring of the kept output
	}{
		{"claude", "EMPTY", FailNoReview, []string{"no review text"}, `"verdict":"PASS"`},
		{"codex", "EMPTY", FailNoReview, []string{"no review text"}, `"verdict":"PASS"`},
		{"claude", "CRASH", FailExit, []string{"code 3", "crashed on purpose"}, "crashed on purpose"},
		{"codex", "CRASH", FailExit, []string{"code 3", "crashed on purpose"}, "crashed on purpose"},
		{"claude", "GARBAGE", FailOutput, []string{"not JSON"}, "not json at all"},
		{"codex", "GARBAGE", FailOutput, []string{"no verdict"}, "not json at all"},
		{"claude", "ERROR", FailOutput, []string{"error_max_turns"}, "error_max_turns"},
		{"claude", "NOTLOGGEDIN", FailExit, []string{"code 1", "Not logged in · Please run /login"}, `"is_error":true`},
		{"codex", "ERROR", FailExit, []string{"code 1", "400 Bad Request"}, "fake turn failure"},
	}
	for _, tc := range tests {
		t.Run(tc.adapter+"/"+tc.step, func(t *testing.T) {
			f := newFixture(t, tc.step)
			req := f.request(1)
			res, err := mustNew(t, tc.adapter).Review(context.Background(), req)
			fl := wantFailure(t, res, err, tc.kind, tc.msgs...)
			if !strings.Contains(string(fl.Raw), tc.raw) {
				t.Errorf("Raw = %q, want it to contain %q", fl.Raw, tc.raw)
			}
			if _, err := os.Stat(req.ReviewFile); err == nil {
				t.Error("a review file exists after a failed review")
			}
		})
	}
}

func TestReviewTimeoutKillsProcessGroup(t *testing.T) {
	for _, name := range adapterNames {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "SLEEP")
			req := f.request(1)
			req.Timeout = time.Second
			start := time.Now()
			res, err := mustNew(t, name).Review(context.Background(), req)
			elapsed := time.Since(start)
			wantFailure(t, res, err, FailTimeout)
			// Past waitDelay would mean the orphaned child kept our pipes open.
			if elapsed > req.Timeout+waitDelay/2 {
				t.Errorf("Review returned after %v, want about %v", elapsed, req.Timeout)
			}
			logs := f.logs(t)
			if len(logs) != 1 {
				t.Fatalf("reviewer ran %d times, want 1", len(logs))
			}
			checkChildGone(t, logs[0].ChildPID)
		})
	}
}

func TestReviewParentContextCancelled(t *testing.T) {
	f := newFixture(t, "SLEEP")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := mustNew(t, "claude").Review(ctx, f.request(1))
	wantFailure(t, res, err, FailTimeout)
	checkChildGone(t, f.logs(t)[0].ChildPID)
}

func TestReviewNotFound(t *testing.T) {
	hints := map[string]string{"claude": "install Claude Code", "codex": "install the Codex CLI"}
	for _, name := range adapterNames {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "PASS")
			t.Setenv("PATH", t.TempDir())
			res, err := mustNew(t, name).Review(context.Background(), f.request(1))
			wantFailure(t, res, err, FailNotFound, hints[name], `"reviewer" in .taskie/config.json`)
		})
	}
}

func TestReviewCommandOverride(t *testing.T) {
	f := newFixture(t, "FAIL")
	t.Setenv("PATH", t.TempDir())
	req := f.request(1)
	req.Command = []string{filepath.Join(fakeDir, "claude"+exeSuffix())}
	res, err := mustNew(t, "claude").Review(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != domain.Fail {
		t.Errorf("verdict = %q, want FAIL", res.Verdict)
	}
}

func TestReviewBadRequest(t *testing.T) {
	f := newFixture(t, "PASS")
	req := f.request(1)
	req.Kind = "bogus"
	res, err := mustNew(t, "claude").Review(context.Background(), req)
	wantFailure(t, res, err, FailExit, "bogus")
	if _, statErr := os.Stat(f.log); statErr == nil {
		t.Error("reviewer ran for an invalid request")
	}
}

// TestFakeEnforcesRealChecks shows the hygiene assertions above can fail:
// the fake refuses a leaked CLAUDECODE and gives no verdict without a schema.
func TestFakeEnforcesRealChecks(t *testing.T) {
	f := newFixture(t, "PASS")
	claude := filepath.Join(fakeDir, "claude"+exeSuffix())

	cmd := exec.Command(claude, "-p", "--output-format", "json", "--json-schema", Schema())
	cmd.Stdin = strings.NewReader("prompt")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "cannot be launched inside another Claude Code session") {
		t.Errorf("fake with CLAUDECODE set: err %v, output %q; want exit 1 and the nesting error", err, out)
	}

	cmd = exec.Command(claude, "-p", "--output-format", "json")
	cmd.Env = reviewerEnv(os.Environ())
	cmd.Dir = f.root
	cmd.Stdin = strings.NewReader("write `" + f.request(1).ReviewFile + "`")
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("fake without --json-schema: %v", err)
	}
	if _, err := ParseClaude(stdout); err == nil {
		t.Errorf("ParseClaude found a verdict in output without structured_output: %s", stdout)
	}
}

func containsSeq(args, seq []string) bool {
	for i := 0; i+len(seq) <= len(args); i++ {
		if slices.Equal(args[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

func sameDir(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ea == eb
}

// Both adapters send the findings schema (codex's strict-mode check of
// nested objects passes), hand the findings on record to the reviewer and
// return the findings it reports; a reviewer that reports none still
// gives its verdict.
func TestAdaptersFindings(t *testing.T) {
	for _, name := range []string{"claude", "codex"} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, `FAIL [{"severity":"blocker","title":"nil map write","file":"a.go","line":10},{"id":"F1","status":"fixed"}]`, "PASS")
			rv, err := New(name)
			if err != nil {
				t.Fatal(err)
			}
			req := f.request(2)
			req.Findings = "## Findings on record\n\nOpen:\n- F1 (major) b.go:3 — error ignored\n"
			res, err := rv.Review(context.Background(), req)
			if err != nil {
				t.Fatalf("review: %v", err)
			}
			want := []ledger.ReportedFinding{
				{Severity: domain.Blocker, Title: "nil map write", File: "a.go", Line: 10, Status: ledger.Open},
				{ID: "F1", Severity: domain.Major, Status: ledger.Fixed},
			}
			if res.Verdict != domain.Fail || !cmp.Equal(want, res.Findings) {
				t.Errorf("verdict %s, findings %+v; want FAIL, %+v", res.Verdict, res.Findings, want)
			}
			res, err = rv.Review(context.Background(), f.request(3))
			if err != nil || res.Verdict != domain.Pass || res.Findings != nil {
				t.Errorf("a review without findings: %+v, %v; want PASS and nil findings", res, err)
			}
			logs := f.logs(t)
			if len(logs) != 2 || !cmp.Equal(logs[0].PromptIDs, []string{"F1"}) || logs[1].PromptIDs != nil {
				t.Errorf("prompt ids %v; want [F1] then none", logs)
			}
		})
	}
}
