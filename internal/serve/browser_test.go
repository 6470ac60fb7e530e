package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/taskie-dev/taskie/internal/serve"
)

// fixture has four plans, each with one thing that needs a human: an
// escalated task (esc), a review cycle that needs a human (human), a spent
// budget (spent), an expired lease (lease; its task is also past its
// timeout). esc's task 2 is escalated by the test while the page is open.
const fixture = `
-- .taskie/config.json --
{"budget_usd": 1}
-- .taskie/plans/esc/plan.md --
# Plan
-- .taskie/plans/esc/tasks.md --
| Id | Status | Title |
|----|--------|-------|
| 1 | in-progress | one |
| 2 | pending | two |
-- .taskie/plans/esc/task-1.md --
# Task 1
-- .taskie/plans/esc/task-2.md --
# Task 2
-- .taskie/plans/esc/state.json --
{"max_reviews": 8, "current_task": "1", "phase": "continue-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}
-- .taskie/plans/human/plan.md --
# Plan
-- .taskie/plans/human/tasks.md --
| Id | Status | Title |
|----|--------|-------|
| 1 | in-progress | one |
-- .taskie/plans/human/task-1.md --
# Task 1
-- .taskie/plans/human/task-1-review-3.md --
# Code review 3 <script>alert("x")</script>

**Verdict: FAIL**

- F1 *major*: the lock is taken twice in ` + "`Commit`" + `
- F2 minor: <img src=x onerror=alert(1)>

` + "```go" + `
mu.Lock(); mu.Lock()
` + "```" + `
-- .taskie/plans/human/state.json --
{"max_reviews": 8, "current_task": "1", "phase": "post-code-review", "phase_iteration": 3, "next_phase": "code-review", "review_model": "opus", "consecutive_clean": 0, "tdd": false, "needs_human": true}
-- .taskie/plans/human/events.jsonl --
{"ts":"2026-05-01T08:30:00Z","plan":"human","task":"1","event":"REVIEW_FINISHED","actor":"hook","meta":{"cost_usd":0.25,"duration_ms":30000,"iteration":1,"model":"opus","review":"code-review","verdict":"FAIL"}}
{"ts":"2026-05-01T09:00:00Z","plan":"human","task":"1","event":"REVIEW_FINISHED","actor":"hook","meta":{"cost_usd":0.15,"duration_ms":30000,"iteration":2,"model":"opus","review":"code-review","verdict":"FAIL"}}
{"ts":"2026-05-01T09:20:00Z","plan":"human","task":"1","event":"REVIEW_FINISHED","actor":"hook","meta":{"cost_usd":0.2,"duration_ms":30000,"iteration":3,"model":"opus","review":"code-review","verdict":"FAIL"}}
{"ts":"2026-05-01T09:30:00Z","plan":"human","task":"1","event":"FINDINGS_NEED_HUMAN","actor":"hook","meta":{"going":["F1"]}}
-- .taskie/plans/spent/plan.md --
# Plan
-- .taskie/plans/spent/tasks.md --
| Id | Status | Title |
|----|--------|-------|
| 1 | in-progress | one |
-- .taskie/plans/spent/task-1.md --
# Task 1
-- .taskie/plans/spent/state.json --
{"max_reviews": 8, "current_task": "1", "phase": "continue-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}
-- .taskie/plans/spent/events.jsonl --
{"ts":"2026-05-01T09:40:00Z","plan":"spent","task":"1","event":"REVIEW_FINISHED","actor":"hook","meta":{"cost_usd":1.25,"duration_ms":45000,"iteration":1,"model":"opus","review":"code-review","verdict":"FAIL"}}
-- .taskie/plans/lease/plan.md --
# Plan
-- .taskie/plans/lease/tasks.md --
| Id | Status | Title |
|----|--------|-------|
| 1 | pending | one |
| 2 | pending | two |
-- .taskie/plans/lease/task-1.md --
# Task 1
-- .taskie/plans/lease/state.json --
{"max_reviews": 8, "current_task": null, "phase": "next-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}
`

// chromium finds a Chromium (or Chrome) binary; "" when there is none.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// TestBrowserDashboard drives `taskie serve` with a real headless
// Chromium: the needs-you items on the fleet page are those of `taskie
// query --needs-you --json`, a change made with the CLI shows on the open
// page within 2 s, and every page is screenshotted.
func TestBrowserDashboard(t *testing.T) {
	exe := chromium()
	if exe == "" {
		t.Skip("SKIPPED LOUDLY: no Chromium found (chromium, chromium-browser, google-chrome, headless-shell): the dashboard's browser test did not run; install Debian's chromium (.ci/run does)")
	}
	if testing.Short() {
		t.Skip("-short: the browser test builds taskie and starts Chromium")
	}
	tmp := t.TempDir()
	shots := tmp
	if d := os.Getenv("TASKIE_SCREENSHOT_DIR"); d != "" {
		shots = d // kept after the test, to look at
	}
	bin := filepath.Join(tmp, "taskie")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/taskie")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building taskie: %v\n%s", err, out)
	}
	repo := filepath.Join(tmp, "repo")
	for _, f := range txtar.Parse([]byte(fixture)).Files {
		p := filepath.Join(repo, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(now string, args ...string) []byte {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir = repo
		c.Env = append(os.Environ(), "TASKIE_NOW="+now, "TASKIE_TEST_CLOCK=1", "NO_COLOR=1")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			t.Fatalf("taskie %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return out
	}
	const at9, at10 = "2026-05-01T09:00:00Z", "2026-05-01T10:00:00Z"
	run(at9, "task", "move", "1", "assigned", "--plan", "esc")
	run(at9, "task", "escalate", "1", "--plan", "esc")
	run(at9, "task", "escalate", "1", "--plan", "esc", "--actor", "cto")
	run(at9, "claim", "1", "--as", "agent-a", "--ttl", "10m", "--plan", "lease")
	run(at9, "task", "move", "2", "assigned", "--plan", "esc")
	run(at9, "task", "escalate", "2", "--plan", "esc")

	// The server, on a free port; its first stdout line is the URL.
	srv := exec.Command(bin, "serve")
	srv.Dir = repo
	srv.Env = append(os.Environ(), "TASKIE_NOW="+at10, "TASKIE_TEST_CLOCK=1")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("taskie serve's stderr:\n%s", srvErr.Bytes())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL taskie serve prints: %v (stderr: %s)", err, srvErr.Bytes())
	}
	home := strings.TrimSpace(line)
	base, token, ok := strings.Cut(home, "/?token=")
	if !ok || token == "" {
		t.Fatalf("taskie serve printed %q: want http://127.0.0.1:PORT/?token=…", home)
	}
	page := func(path string) string { return base + path + "?token=" + token }

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	actx, cancelA := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(filepath.Join(tmp, "chromium")))...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelB()

	// Bytes the browser received for the fleet page (HTML, CSS, JS).
	var weight atomic.Int64
	var counting atomic.Bool
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventLoadingFinished); ok && counting.Load() {
			weight.Add(int64(e.EncodedDataLength))
		}
	}); err != nil {
		t.Fatalf("starting Chromium (%s): %v", exe, err)
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		p := filepath.Join(shots, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	onPage := func() []serve.Need {
		t.Helper()
		js := `Array.from(document.querySelectorAll("main li.need")).map(li => ({plan: li.dataset.plan, task: li.dataset.task,
			kind: li.dataset.kind, reason: li.querySelector(".reason").textContent, since: li.dataset.since,
			clear: li.querySelector(".clear .cmd").textContent}))`
		got, err := chromedp.Run(bctx, chromedp.Evaluate[[]serve.Need](js))
		if err != nil {
			t.Fatalf("reading the needs-you items: %v", err)
		}
		return got
	}
	fromCLI := func() []serve.Need {
		t.Helper()
		var want []serve.Need
		if err := json.Unmarshal(run(at10, "query", "--needs-you", "--json"), &want); err != nil {
			t.Fatal(err)
		}
		return want
	}

	// The fleet page: the needs-you items are the CLI's, in its order.
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("starting Chromium (%s): %v", exe, err)
	}
	counting.Store(true)
	if err := chromedp.Do(bctx, chromedp.Navigate(page("/")), chromedp.WaitVisible(chromedp.CSS("main ol.needs")),
		chromedp.Poll[chromedp.Void](`document.getElementById("live").textContent.includes("up to date")`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("opening the fleet page: %v", err)
	}
	counting.Store(false)
	t.Logf("page weight: the fleet page transferred %d bytes (HTML, CSS and JS; no other request)", weight.Load())
	want := fromCLI()
	if len(want) < 5 {
		t.Fatalf("the fixture should need a human at least five times, the CLI says %d", len(want))
	}
	if diff := cmp.Diff(want, onPage()); diff != "" {
		t.Fatalf("fleet page's needs-you items differ from `taskie query --needs-you --json` (-cli +page):\n%s", diff)
	}
	shot("fleet")

	// A change made with the CLI shows on the open page within 2 s.
	run(at9, "task", "escalate", "2", "--plan", "esc", "--actor", "cto")
	changed := time.Now()
	sel := `document.querySelector('main li.need[data-plan="esc"][data-task="2"][data-kind="human_escalation"]') !== null`
	if err := chromedp.Do(bctx, chromedp.Poll[chromedp.Void](sel, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(2*time.Second))); err != nil {
		t.Fatalf("task 2's escalation did not show on the open fleet page within 2 s: %v", err)
	}
	t.Logf("live update: task 2's escalation showed on the open page %v after the CLI command returned", time.Since(changed).Round(time.Millisecond))
	if diff := cmp.Diff(fromCLI(), onPage()); diff != "" {
		t.Fatalf("after the change, the page's needs-you items differ from the CLI's (-cli +page):\n%s", diff)
	}
	shot("fleet-after-change")

	// The plan pages, the task page, a review file; on a phone too.
	if err := chromedp.Do(bctx, chromedp.Navigate(page("/plan/lease")), chromedp.WaitVisible(chromedp.CSS("table.tasks"))); err != nil {
		t.Fatalf("opening plan lease: %v", err)
	}
	rows, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("table.tasks tbody tr").length`))
	if err != nil {
		t.Fatal(err)
	}
	if rows != 2 {
		t.Errorf("plan lease's table has %d rows, want 2", rows)
	}
	shot("plan-lease")
	if err := chromedp.Do(bctx, chromedp.Navigate(page("/plan/human")), chromedp.WaitVisible(chromedp.CSS("svg.lifecycle")), chromedp.WaitVisible(chromedp.CSS("svg.chart"))); err != nil {
		t.Fatalf("opening plan human: %v", err)
	}
	shot("plan-human")
	if err := chromedp.Do(bctx, chromedp.Navigate(page("/plan/esc/task/1")), chromedp.WaitVisible(chromedp.CSS("ol.timeline"))); err != nil {
		t.Fatalf("opening task 1 of plan esc: %v", err)
	}
	shot("task-esc-1")
	if err := chromedp.Do(bctx, chromedp.Navigate(page("/plan/human/review/task-1-review-3.md")), chromedp.WaitVisible(chromedp.CSS("article.review pre"))); err != nil {
		t.Fatalf("opening a review file: %v", err)
	}
	scripts, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("article script, article img").length`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("article.review h2")))
	if err != nil {
		t.Fatal(err)
	}
	if scripts != 0 || !strings.Contains(text, `<script>alert("x")</script>`) {
		t.Errorf("the review file's HTML must stay text: %d script/img elements, heading %q", scripts, text)
	}
	shot("review")
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(page("/plan/human")),
		chromedp.WaitVisible(chromedp.CSS("table.tasks"))); err != nil {
		t.Fatalf("opening plan human on a phone-sized screen: %v", err)
	}
	overflow, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Errorf("on a 390 px wide screen the page scrolls sideways (only its tables may)")
	}
	shot("plan-human-phone")

	// A request without the token is refused.
	resp, err := chromedp.Run(bctx, chromedp.NavigateResponse(base+"/plan/esc"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 403 {
		t.Errorf("a request without the token got %d, want 403", resp.Status)
	}
}
