// Package ledgertest holds the scripted review cycles that the ledger's
// tests and the hook's end-to-end test both run: per iteration, a
// reviewer's answer and what the post-review does with its findings, with
// how the cycle must end under the ledger's rules (docs/ledger.md) and under the
// old rule (the verdict alone, two PASS in a row, max_reviews).
package ledgertest

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// Step is one iteration of a script: the reviewer's answer, then what the
// post-review does.
type Step struct {
	Answer  ledger.Answer
	Fix     []string          // marked fixed
	FixAll  bool              // every open finding marked fixed
	Decline map[string]string // declined, with the reason
}

// Scenario is a scripted reviewer and post-review.
type Scenario struct {
	Name     string
	Settings ledger.Settings
	CostUSD  float64           // per review
	Step     func(it int) Step // the script, by iteration (1-based)
	Want     Outcome           // with the ledger
	WantOld  Outcome           // verdict only
}

// How a cycle ended.
const (
	EndPassed     = "passed"
	EndNeedsHuman = "needs human"
	EndBudget     = "budget spent"
	EndCap        = "cap reached"
)

// Outcome is how a cycle ended: after how many reviews, why, and how many
// findings at or above major were open after the last review.
type Outcome struct {
	Iterations int
	End        string
	Open       int
}

func (o Outcome) String() string {
	s := fmt.Sprintf("%d %s", o.Iterations, o.End)
	if o.Open > 0 {
		s += fmt.Sprintf(", %d open ≥ major", o.Open)
	}
	return s
}

// steps scripts a fixed sequence; the last step repeats.
func steps(ss ...Step) func(int) Step {
	return func(it int) Step { return ss[min(it, len(ss))-1] }
}

func ans(v domain.Verdict, fs ...ledger.ReportedFinding) ledger.Answer {
	return ledger.Answer{Verdict: v, Review: "review", Findings: append([]ledger.ReportedFinding{}, fs...)}
}

func newFinding(sev domain.Severity, title, file string, line int) ledger.ReportedFinding {
	return ledger.ReportedFinding{Severity: sev, Title: title, File: file, Line: line, Status: ledger.Open}
}

// report is a reviewer's report on a finding on record, at its severity:
// a report at another severity changes it.
func report(id string, sev domain.Severity, st ledger.Status) ledger.ReportedFinding {
	return ledger.ReportedFinding{ID: id, Severity: sev, Status: st}
}

// Scenarios returns the scripted cycles of issue 12, (a) to (i).
func Scenarios() []Scenario {
	return []Scenario{
		{
			Name: "(a) findings fixed over iterations converge",
			Step: steps(
				Step{Answer: ans(domain.Fail,
					newFinding(domain.Blocker, "nil map write", "a.go", 10),
					newFinding(domain.Major, "error ignored", "b.go", 20),
					newFinding(domain.Minor, "typo", "c.go", 3)),
					Fix: []string{"F1", "F2"}, Decline: map[string]string{"F3": "generated file"}},
				Step{Answer: ans(domain.Fail, report("F1", domain.Blocker, ledger.Fixed), report("F2", domain.Major, ledger.Open),
					newFinding(domain.Major, "race on cache", "a.go", 40)),
					Fix: []string{"F2", "F4"}},
				Step{Answer: ans(domain.Pass, report("F2", domain.Major, ledger.Fixed), report("F4", domain.Major, ledger.Fixed))},
				Step{Answer: ans(domain.Pass)},
			),
			Want:    Outcome{4, EndPassed, 0},
			WantOld: Outcome{4, EndPassed, 0},
		},
		{
			Name: "(b) a PASS with a blocker open is not clean",
			Step: steps(
				Step{Answer: ans(domain.Pass, newFinding(domain.Blocker, "SQL built by concatenation", "db.go", 5)), Fix: []string{"F1"}},
				Step{Answer: ans(domain.Pass, report("F1", domain.Blocker, ledger.Open)), Fix: []string{"F1"}},
				Step{Answer: ans(domain.Pass, report("F1", domain.Blocker, ledger.Fixed))},
				Step{Answer: ans(domain.Pass)},
			),
			Want:    Outcome{4, EndPassed, 0},
			WantOld: Outcome{2, EndPassed, 1},
		},
		{
			Name: "(c) a reviewer inventing new minor findings forever",
			Step: func(it int) Step {
				return Step{Answer: ans(domain.Fail,
					newFinding(domain.Minor, fmt.Sprintf("naming %d", it), "a.go", it),
					newFinding(domain.Nit, fmt.Sprintf("comment %d", it), "b.go", it)),
					FixAll: true}
			},
			Want:    Outcome{5, EndPassed, 0},
			WantOld: Outcome{8, EndCap, 0},
		},
		{
			Name: "(d) a finding that keeps coming back after fixed",
			Step: steps(
				Step{Answer: ans(domain.Fail, newFinding(domain.Major, "cache never invalidated", "cache.go", 30)), Fix: []string{"F1"}},
				Step{Answer: ans(domain.Fail, report("F1", domain.Major, ledger.Open)), Fix: []string{"F1"}},
			),
			Want:    Outcome{3, EndNeedsHuman, 1},
			WantOld: Outcome{8, EndCap, 1},
		},
		{
			Name:     "(e) the budget stops further reviews",
			Settings: ledger.Settings{BudgetUSD: 1},
			CostUSD:  0.40,
			Step: func(it int) Step {
				return Step{Answer: ans(domain.Fail, newFinding(domain.Blocker, fmt.Sprintf("leak %d", it), "io.go", it)), FixAll: true}
			},
			Want:    Outcome{3, EndBudget, 1},
			WantOld: Outcome{8, EndCap, 1},
		},
		{
			Name: "(f) ids stay stable across iterations",
			Step: steps(
				Step{Answer: ans(domain.Fail, newFinding(domain.Major, "A", "x.go", 1), newFinding(domain.Minor, "B", "y.go", 2)),
					Fix: []string{"F1"}},
				Step{Answer: ans(domain.Fail, report("F1", domain.Major, ledger.Fixed), report("F2", domain.Minor, ledger.Open),
					newFinding(domain.Major, "C", "z.go", 3),
					ledger.ReportedFinding{Severity: domain.Major, Title: "a", File: "x.go", Line: 9, Status: ledger.Fixed},
					ledger.ReportedFinding{ID: "F9", Severity: domain.Major, Title: "D", Status: ledger.Open}),
					Fix: []string{"F3", "F4"}},
				Step{Answer: ans(domain.Pass, report("F3", domain.Major, ledger.Fixed), report("F4", domain.Major, ledger.Fixed), report("F2", domain.Minor, ledger.Open))},
				Step{Answer: ans(domain.Pass, report("F2", domain.Minor, ledger.Open))},
			),
			Want:    Outcome{4, EndPassed, 0},
			WantOld: Outcome{4, EndPassed, 0},
		},
		{
			Name: "(g) no findings: the verdict alone decides",
			Step: steps(
				Step{Answer: ledger.Answer{Verdict: domain.Fail}},
				Step{Answer: ledger.Answer{Verdict: domain.Pass}},
				Step{Answer: ledger.Answer{Verdict: domain.Fail}},
				Step{Answer: ledger.Answer{Verdict: domain.Pass}},
			),
			Want:    Outcome{5, EndPassed, 0},
			WantOld: Outcome{5, EndPassed, 0},
		},
		{
			Name: "(h) a new blocker every review, no budget",
			Step: func(it int) Step {
				return Step{Answer: ans(domain.Fail, newFinding(domain.Blocker, fmt.Sprintf("leak %d", it), "io.go", it)), FixAll: true}
			},
			Want:    Outcome{4, EndNeedsHuman, 1},
			WantOld: Outcome{8, EndCap, 1},
		},
		{
			// The reviewer raises F1 to blocker and keeps passing it; the
			// post-review does nothing about it. Recorded at its first
			// severity, the cycle would pass at review 3 with the blocker
			// open.
			Name: "(i) a minor raised to blocker, never fixed",
			Step: steps(
				Step{Answer: ans(domain.Fail, newFinding(domain.Minor, "slow loop", "a.go", 3))},
				Step{Answer: ans(domain.Pass, report("F1", domain.Blocker, ledger.Open))},
			),
			Want:    Outcome{5, EndNeedsHuman, 1},
			WantOld: Outcome{3, EndPassed, 1},
		},
	}
}

// RunLedger runs a cycle under docs/ledger.md's rules: Record, Assess, stop on two clean
// reviews in a row, a human needed, the budget, or max_reviews. It returns
// how the cycle ended and the ledger after its last review.
func RunLedger(sc Scenario, logf func(string, ...any)) (Outcome, ledger.Ledger) {
	var l ledger.Ledger
	spent, clean := 0.0, 0
	for it := 1; it <= domain.DefaultMaxReviews; it++ {
		st := sc.Step(it)
		spent += sc.CostUSD
		for _, e := range ledger.Record(l, it, st.Answer) {
			l = ledger.Fold(l, e)
		}
		a := ledger.Assess(l, it, st.Answer.Verdict, sc.Settings, spent)
		logf("%s: iteration %d: %s clean=%v reason=%s going=%v trend=%s",
			sc.Name, it, st.Answer.Verdict, a.Clean, a.Reason, a.Going, ledger.TrendString(l))
		switch {
		case a.NeedsHuman:
			return Outcome{it, EndNeedsHuman, OpenAtMajor(l)}, l
		case !a.Clean:
			clean = 0
		case clean+1 == domain.CleanToPass:
			return Outcome{it, EndPassed, OpenAtMajor(l)}, l
		default:
			clean++
		}
		if a.BudgetExceeded != nil {
			return Outcome{it, EndBudget, OpenAtMajor(l)}, l
		}
		l = PostReview(l, st)
	}
	return Outcome{domain.DefaultMaxReviews, EndCap, OpenAtMajor(l)}, l
}

// PostReview applies a step's post-review to l; an id the ledger refuses
// is a bug in the script, and panics.
func PostReview(l ledger.Ledger, st Step) ledger.Ledger {
	for _, id := range FixIDs(l, st) {
		e, err := ledger.Fix(l, id, "done")
		if err != nil {
			panic("post-review: " + err.Error())
		}
		l = ledger.Fold(l, e)
	}
	for _, id := range DeclineIDs(st) {
		e, err := ledger.Decline(l, id, st.Decline[id])
		if err != nil {
			panic("post-review: " + err.Error())
		}
		l = ledger.Fold(l, e)
	}
	return l
}

// FixIDs lists the findings a step's post-review marks fixed.
func FixIDs(l ledger.Ledger, st Step) []string {
	fix := slices.Clone(st.Fix)
	if st.FixAll {
		for _, f := range l.Findings() {
			if f.Status == ledger.Open {
				fix = append(fix, f.ID)
			}
		}
	}
	return fix
}

// DeclineIDs lists the findings a step's post-review declines, in order.
func DeclineIDs(st Step) []string {
	ids := make([]string, 0, len(st.Decline))
	for id := range st.Decline {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// RunOld runs the same script under the old rule: the verdict alone, two
// PASS in a row, max_reviews. The findings open at its end are what the
// same answers would have put in the ledger.
func RunOld(sc Scenario) Outcome {
	passes := 0
	for it := 1; it <= domain.DefaultMaxReviews; it++ {
		if sc.Step(it).Answer.Verdict != domain.Pass {
			passes = 0
			continue
		}
		if passes++; passes == domain.CleanToPass {
			return Outcome{it, EndPassed, openAfter(sc, it)}
		}
	}
	return Outcome{domain.DefaultMaxReviews, EndCap, openAfter(sc, domain.DefaultMaxReviews)}
}

// openAfter replays the script's answers and post-reviews up to iteration n.
func openAfter(sc Scenario, n int) int {
	var l ledger.Ledger
	for it := 1; it <= n; it++ {
		st := sc.Step(it)
		for _, e := range ledger.Record(l, it, st.Answer) {
			l = ledger.Fold(l, e)
		}
		if it < n {
			l = PostReview(l, st)
		}
	}
	return OpenAtMajor(l)
}

// OpenAtMajor counts the open findings at or above major.
func OpenAtMajor(l ledger.Ledger) int {
	n := 0
	for _, f := range l.Findings() {
		if f.Status == ledger.Open && (f.Severity == domain.Blocker || f.Severity == domain.Major) {
			n++
		}
	}
	return n
}

// WriteTable runs every scenario both ways and writes the comparison.
func WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\twith ledger\twithout (verdict only)")
	for _, sc := range Scenarios() {
		got, _ := RunLedger(sc, func(string, ...any) {})
		fmt.Fprintf(tw, "%s\t%s\t%s\n", sc.Name, got, RunOld(sc))
	}
	tw.Flush()
}
