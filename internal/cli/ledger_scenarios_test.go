package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/ledger/ledgertest"
)

// TestLedgerScenariosThroughTheHook runs the review ledger's scripted
// scenarios (package ledgertest, issue 12) through the real Stop hook, the
// fake reviewer and the post-review commands an agent runs, twice: with
// the reviewer reporting its findings (the ledger's rules decide) and with
// the same verdicts and no findings (the verdict alone decides, as before
// the ledger). Each run must end as the pure simulation says, after as
// many reviews; the table of iterations is logged (go test -v).
func TestLedgerScenariosThroughTheHook(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about a hundred reviews")
	}
	bin := buildFake(t)
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\twith ledger: hook\t(simulated)\twithout: hook\t(simulated)")
	for _, sc := range ledgertest.Scenarios() {
		var with, without ledgertest.Outcome
		t.Run(sc.Name+"/with ledger", func(t *testing.T) {
			with = runThroughHook(t, bin, sc, true)
			if with != sc.Want {
				t.Errorf("through the hook: %s, want %s (the simulation)", with, sc.Want)
			}
		})
		t.Run(sc.Name+"/verdict only", func(t *testing.T) {
			without = runThroughHook(t, bin, sc, false)
			if without.Iterations != sc.WantOld.Iterations || without.End != sc.WantOld.End {
				t.Errorf("through the hook: %s, want %d %s (the simulation)", without, sc.WantOld.Iterations, sc.WantOld.End)
			}
		})
		fmt.Fprintf(tw, "%s\t%s\t(%s)\t%d %s\t(%d %s)\n", sc.Name, with, sc.Want, without.Iterations, without.End, sc.WantOld.Iterations, sc.WantOld.End)
	}
	tw.Flush()
	t.Log("iterations per review cycle, through the real hook and simulated:\n" + table.String())
}

// hookRun is one scenario's project, driven as an agent would.
type hookRun struct {
	t    *testing.T
	root string
	log  string // the fake reviewer's log
}

// runThroughHook plays sc: the fake reviewer answers each review with the
// scenario's answer (without its findings when ledger is false); after a
// block the post-review marks findings fixed or declined, writes its file
// and records it; the cycle ends at the first stop that allows.
func runThroughHook(t *testing.T, bin string, sc ledgertest.Scenario, withLedger bool) ledgertest.Outcome {
	h := newHookRun(t, bin, sc, withLedger)
	open, active := 0, false
	for reviews := 0; ; {
		code, out, errOut := h.taskie("hook", "stop", "--format", "exit2", "<stdin>", h.hookInput(active))
		if n := h.reviews(); n > reviews {
			reviews = n
			open = h.openAtMajor(withLedger)
		}
		if code == ExitOK {
			end := endOf(out)
			if end == ledgertest.EndCap {
				open = h.openAtMajor(withLedger) // the simulation counts after the last post-review
			}
			if end == "" {
				t.Fatalf("after %d reviews the stop allowed with %q, %q: no end of a cycle", reviews, out, errOut)
			}
			return ledgertest.Outcome{Iterations: reviews, End: end, Open: open}
		}
		if code != ExitUsage || reviews > domain.DefaultMaxReviews {
			t.Fatalf("stop after %d reviews: exit %d, %q %q", reviews, code, out, errOut)
		}
		h.postReview(sc.Step(reviews), reviews, withLedger)
		active = true
	}
}

func newHookRun(t *testing.T, bin string, sc ledgertest.Scenario, withLedger bool) *hookRun {
	t.Helper()
	h := &hookRun{t: t, root: t.TempDir(), log: filepath.Join(t.TempDir(), "reviews.jsonl")}
	files := map[string]string{
		"plan.md":    "# Plan\n",
		"tasks.md":   "| Id | Status | Title |\n|----|--------|-------|\n| 1 | in-progress | one |\n| 2 | pending | two |\n",
		"task-1.md":  "# Task 1\n",
		"task-2.md":  "# Task 2\n",
		"state.json": `{"max_reviews": 8, "current_task": "1", "phase": "next-task", "phase_iteration": 0, "next_phase": "code-review", "review_model": "opus", "consecutive_clean": 0, "tdd": false}`,
	}
	for name, content := range files {
		h.write(filepath.Join(".taskie", "plans", "p", name), content)
	}
	if withLedger && sc.Settings.BudgetUSD > 0 {
		h.write(filepath.Join(".taskie", "config.json"), fmt.Sprintf(`{"budget_usd": %g}`, sc.Settings.BudgetUSD))
	}
	var script strings.Builder
	for it := 1; it <= domain.DefaultMaxReviews; it++ {
		a := sc.Step(it).Answer
		script.WriteString(string(a.Verdict))
		if withLedger && a.Findings != nil {
			b, err := json.Marshal(a.Findings)
			if err != nil {
				t.Fatal(err)
			}
			script.WriteString(" " + string(b))
		}
		script.WriteString("\n")
	}
	h.write("verdicts", script.String())
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_REVIEW_SCRIPT", filepath.Join(h.root, "verdicts"))
	t.Setenv("FAKE_REVIEW_STATE", filepath.Join(t.TempDir(), "n"))
	t.Setenv("FAKE_REVIEW_LOG", h.log)
	t.Setenv("FAKE_REVIEW_COST", strconv.FormatFloat(sc.CostUSD, 'f', -1, 64))
	t.Setenv("FAKE_REVIEW_DELAY", "")
	for _, k := range []string{"TASKIE_HOOK_SKIP", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "TASKIE_SESSION_ID", "CODEX_THREAD_ID"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	return h
}

func (h *hookRun) write(rel, content string) {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// taskie runs a command in-process in the project; "<stdin>" and the
// argument after it give its standard input.
func (h *hookRun) taskie(args ...string) (code int, stdout, stderr string) {
	var in string
	if i := len(args) - 2; i >= 0 && args[i] == "<stdin>" {
		in, args = args[i+1], args[:i]
	}
	var out, errOut bytes.Buffer
	code = Run(append([]string{"-C", h.root}, args...), Streams{In: strings.NewReader(in), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// must runs a command that has to succeed.
func (h *hookRun) must(args ...string) string {
	h.t.Helper()
	code, out, errOut := h.taskie(args...)
	if code != ExitOK {
		h.t.Fatalf("taskie %s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (h *hookRun) hookInput(active bool) string {
	b, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": h.root, "stop_hook_active": active, "hook_event_name": "Stop"})
	return string(b)
}

// reviews counts the reviewer runs.
func (h *hookRun) reviews() int {
	b, err := os.ReadFile(h.log)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// findings reads `taskie findings --open --json`.
func (h *hookRun) findings() []ledger.Finding {
	var v findingsView
	if err := json.Unmarshal([]byte(h.must("findings", "--open", "--json")), &v); err != nil {
		h.t.Fatal(err)
	}
	return v.Findings
}

func (h *hookRun) openAtMajor(withLedger bool) int {
	if !withLedger {
		return 0
	}
	n := 0
	for _, f := range h.findings() {
		if f.Severity == domain.Blocker || f.Severity == domain.Major {
			n++
		}
	}
	return n
}

// postReview does what the block asks: record each finding, write the
// post-review file, `taskie done post-code-review`.
func (h *hookRun) postReview(st ledgertest.Step, it int, withLedger bool) {
	if withLedger {
		fix := st.Fix
		if st.FixAll {
			for _, f := range h.findings() {
				fix = append(fix, f.ID)
			}
		}
		for _, id := range fix {
			h.must("finding", "fixed", id, "--note", "done")
		}
		for _, id := range ledgertest.DeclineIDs(st) {
			h.must("finding", "declined", id, "--why", st.Decline[id])
		}
	}
	h.write(filepath.Join(".taskie", "plans", "p", fmt.Sprintf("task-1-post-review-%d.md", it)), "# Post-review\nDone.\n")
	h.must("done", "post-code-review")
}

// endOf reads how a cycle ended from the allowed stop's message.
func endOf(stdout string) string {
	var m struct {
		SystemMessage string `json:"systemMessage"`
	}
	_ = json.Unmarshal([]byte(stdout), &m)
	switch msg := m.SystemMessage; {
	case strings.Contains(msg, "passed (two clean reviews in a row)"):
		return ledgertest.EndPassed
	case strings.Contains(msg, "does not converge"):
		return ledgertest.EndNeedsHuman
	case strings.Contains(msg, "budget"):
		return ledgertest.EndBudget
	case strings.Contains(msg, "Max review limit"):
		return ledgertest.EndCap
	}
	return ""
}
