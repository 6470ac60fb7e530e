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
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// TestLedgerScenariosThroughTheHook runs the review ledger's scripted
// scenarios (package ledgertest, issue 12) through the real Stop hook, the
// fake reviewer and the post-review commands an agent runs, twice: with
// the reviewer reporting its findings (the ledger's rules decide) and with
// the same verdicts and no findings (the verdict alone decides, as before
// the ledger). The escalation ladder acts beside them (ladderWants): with
// the ledger each run must end as the pure simulation says, after as many
// code reviews, with the CTO reviews the ladder adds; verdict only, the
// ladder ends the cycles that never pass before the cap does. The table of
// iterations is logged (go test -v).
func TestLedgerScenariosThroughTheHook(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about a hundred reviews")
	}
	bin := buildFake(t)
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\twith ledger: hook\t(simulated)\twithout: hook\t(simulated, no ladder)")
	for _, sc := range ledgertest.Scenarios() {
		lw, ok := ladderWants[sc.Name]
		if !ok {
			t.Fatalf("%s: no entry in ladderWants: say how the escalation ladder ends it through the hook", sc.Name)
		}
		var with, without hookOutcome
		t.Run(sc.Name+"/with ledger", func(t *testing.T) {
			with = runThroughHook(t, bin, sc, true)
			if want := (hookOutcome{sc.Want, lw.ctoWith}); with != want {
				t.Errorf("through the hook: %s, want %s (the simulation, and the ladder's CTO reviews)", with, want)
			}
		})
		t.Run(sc.Name+"/verdict only", func(t *testing.T) {
			without = runThroughHook(t, bin, sc, false)
			if without != lw.without {
				t.Errorf("through the hook: %s, want %s", without, lw.without)
			}
		})
		fmt.Fprintf(tw, "%s\t%s\t(%s)\t%s\t(%d %s)\n", sc.Name, with, sc.Want, without, sc.WantOld.Iterations, sc.WantOld.End)
	}
	tw.Flush()
	t.Log("iterations per review cycle, through the real hook and simulated:\n" + table.String())
}

// endCTOUsedUp: the escalation ladder handed the task to a human after
// the CTO's two attempts.
const endCTOUsedUp = "with a human (CTO attempts used up)"

// ladderWant is how the escalation ladder (docs/lifecycle.md, "The CTO")
// plays a scenario through the hook. Its rules: the third code review of
// the task that is not clean (counted since the task last moved on or
// since the last CTO attempt) puts it in cto_intervention, and the next
// stop runs a CTO review, which the scripted CTO answers with a guided
// retry (a CTO attempt: the failures count afresh, the cycle goes on);
// after two CTO attempts the next failed review hands the task to a human
// (human_escalation) and the stop after its post-review allows. The
// ledger's own ends (a cycle that does not converge, the budget) come
// first when they fall on the same review.
type ladderWant struct {
	ctoWith int         // CTO reviews with the ledger, whose end stays the simulation's
	without hookOutcome // verdict only
}

// ladderWants, by scenario. Verdict only, a cycle that never passes ends
// at review 7 with a human (reviews 3 and 6 each bring a CTO review, review
// 7 fails after the second attempt), before the cap of 8 the simulation of
// the old rule reaches.
var ladderWants = map[string]ladderWant{
	// Two failed reviews at most: the ladder never acts.
	"(a) findings fixed over iterations converge": {0, hookOutcome{ledgertest.Outcome{Iterations: 4, End: ledgertest.EndPassed}, 0}},
	"(b) a PASS with a blocker open is not clean": {0, hookOutcome{ledgertest.Outcome{Iterations: 2, End: ledgertest.EndPassed}, 0}},
	// With the ledger, review 3 (not clean) brings the CTO review; its guided
	// retry lets the ratchet pass the cycle at review 5. Verdict only, two
	// CTO attempts then a human.
	"(c) a reviewer inventing new minor findings forever": {1, hookOutcome{ledgertest.Outcome{Iterations: 7, End: endCTOUsedUp}, 2}},
	// With the ledger, non-convergence at review 3 comes before the CTO
	// review its third failure would bring. Verdict only, the ladder.
	"(d) a finding that keeps coming back after fixed": {0, hookOutcome{ledgertest.Outcome{Iterations: 7, End: endCTOUsedUp}, 2}},
	// With the ledger, the budget is spent at review 3, before the CTO
	// review. Verdict only (no budget), the ladder.
	"(e) the budget stops further reviews": {0, hookOutcome{ledgertest.Outcome{Iterations: 7, End: endCTOUsedUp}, 2}},
	// Two failed reviews: the ladder never acts.
	"(f) ids stay stable across iterations":      {0, hookOutcome{ledgertest.Outcome{Iterations: 4, End: ledgertest.EndPassed}, 0}},
	"(g) no findings: the verdict alone decides": {0, hookOutcome{ledgertest.Outcome{Iterations: 5, End: ledgertest.EndPassed}, 0}},
	// With the ledger, review 3 brings the CTO review and the ledger finds
	// the cycle stalled at review 4. Verdict only, the ladder.
	"(h) a new blocker every review, no budget": {1, hookOutcome{ledgertest.Outcome{Iterations: 7, End: endCTOUsedUp}, 2}},
	// With the ledger, review 3 (a PASS with the blocker open, not clean)
	// brings the CTO review and the ledger finds the cycle stalled at review
	// 5. Verdict only, one failed review: it passes at review 3.
	"(i) a minor raised to blocker, never fixed": {1, hookOutcome{ledgertest.Outcome{Iterations: 3, End: ledgertest.EndPassed}, 0}},
}

// hookRun is one scenario's project, driven as an agent would.
type hookRun struct {
	t    *testing.T
	root string
	log  string // the fake reviewer's log
}

// runThroughHook plays sc: the fake reviewer answers each code review
// with the scenario's answer (without its findings when ledger is false)
// and a CTO review with a guided retry; after a code review's block the
// post-review marks findings fixed or declined, writes its file and
// records it, after a CTO review's block the agent follows the guidance
// and stops again; the cycle ends at the first stop that allows.
func runThroughHook(t *testing.T, bin string, sc ledgertest.Scenario, withLedger bool) hookOutcome {
	h := newHookRun(t, bin, sc, withLedger)
	open, active := 0, false
	for reviews, cto := 0, 0; ; {
		h.nextAnswer(sc, reviews+1, withLedger)
		code, out, errOut := h.taskie("hook", "stop", "--format", "exit2", "<stdin>", h.hookInput(active))
		n, c := h.reviews()
		ranCTO := c > cto
		if n > reviews {
			open = h.openAtMajor(withLedger)
		}
		reviews, cto = n, c
		if code == ExitOK {
			end := endOf(out)
			if end == ledgertest.EndCap {
				open = h.openAtMajor(withLedger) // the simulation counts after the last post-review
			}
			if end == "" {
				t.Fatalf("after %d reviews and %d CTO reviews the stop allowed with %q, %q: no end of a cycle", reviews, cto, out, errOut)
			}
			if got := h.lifeState(); (end == ledgertest.EndNeedsHuman || end == endCTOUsedUp) && got != lifecycle.HumanEscalation {
				t.Errorf("the cycle ended %s with task 1 in %s, want %s", end, got, lifecycle.HumanEscalation)
			}
			return hookOutcome{ledgertest.Outcome{Iterations: reviews, End: end, Open: open}, cto}
		}
		if code != ExitUsage || reviews > domain.DefaultMaxReviews || cto > 2 {
			t.Fatalf("stop after %d reviews and %d CTO reviews: exit %d, %q %q", reviews, cto, code, out, errOut)
		}
		if !ranCTO {
			h.postReview(sc.Step(reviews), reviews, withLedger)
		} else if !strings.Contains(errOut, ctoGuidance) {
			t.Fatalf("the CTO review's block does not carry its guidance: %q", errOut)
		}
		active = true
	}
}

// hookOutcome is how a cycle ended through the hook, with the CTO reviews
// the escalation ladder ran on the way.
type hookOutcome struct {
	ledgertest.Outcome
	CTO int
}

func (o hookOutcome) String() string {
	if o.CTO == 0 {
		return o.Outcome.String()
	}
	return fmt.Sprintf("%s (+%d CTO)", o.Outcome, o.CTO)
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

// nextAnswer scripts the fake reviewer's next run: a guided retry when the
// task is in cto_intervention (the stop runs a CTO review), the answer of
// code review it otherwise. The script has that one step, which the fake
// repeats.
func (h *hookRun) nextAnswer(sc ledgertest.Scenario, it int, withLedger bool) {
	h.t.Helper()
	if h.lifeState() == lifecycle.CTOIntervention {
		h.write("verdicts", "CTO-RETRY "+ctoGuidance+"\n")
		return
	}
	a := sc.Step(it).Answer
	line := string(a.Verdict)
	if withLedger && a.Findings != nil {
		b, err := json.Marshal(a.Findings)
		if err != nil {
			h.t.Fatal(err)
		}
		line += " " + string(b)
	}
	h.write("verdicts", line+"\n")
}

// ctoGuidance is the scripted CTO's guidance for a guided retry.
const ctoGuidance = "Keep going: fix what the reviews report."

// lifeState is task 1's lifecycle state in state.json.
func (h *hookRun) lifeState() lifecycle.State {
	h.t.Helper()
	path := filepath.Join(h.root, ".taskie", "plans", "p", "state.json")
	b, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatal(err)
	}
	s, err := state.Decode(path, b)
	if err != nil {
		h.t.Fatal(err)
	}
	st, _ := workflow.TaskLife(s)
	return st
}

// reviews counts the reviewer's runs: code reviews and CTO reviews.
func (h *hookRun) reviews() (code, cto int) {
	b, err := os.ReadFile(h.log)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return 0, 0
	}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec struct{ Step string }
		if err := json.Unmarshal(line, &rec); err != nil {
			h.t.Fatalf("%s: %v", h.log, err)
		}
		if strings.HasPrefix(rec.Step, "CTO-") {
			cto++
		} else {
			code++
		}
	}
	return code, cto
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
	case strings.Contains(strings.ToLower(msg), "max review limit"):
		return ledgertest.EndCap
	case strings.Contains(msg, "human_escalation") && strings.Contains(msg, "the CTO's attempts did not get it through"):
		return endCTOUsedUp
	}
	return ""
}
