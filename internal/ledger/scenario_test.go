package ledger_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// A scenario is a scripted reviewer and a scripted post-review, run through
// the ledger's rules and through the old rule (verdict only, two PASS in a
// row), with the same answers.

// step is one iteration of a script: the reviewer's answer, then what the
// post-review does.
type step struct {
	answer  ledger.Answer
	fix     []string          // marked fixed
	fixAll  bool              // every open finding marked fixed
	decline map[string]string // declined, with the reason
}

type scenario struct {
	name     string
	settings ledger.Settings
	costUSD  float64           // per review
	step     func(it int) step // the script, by iteration
	want     outcome           // with the ledger
	wantOld  outcome           // verdict only
	check    func(t *testing.T, l ledger.Ledger)
}

// outcome is how a cycle ended.
type outcome struct {
	Iterations int
	End        string // passed, needs human, budget spent, cap reached
	Open       int    // findings at or above major open at the end
}

func (o outcome) String() string {
	s := fmt.Sprintf("%d %s", o.Iterations, o.End)
	if o.Open > 0 {
		s += fmt.Sprintf(", %d open ≥ major", o.Open)
	}
	return s
}

// steps scripts a fixed sequence; the last step repeats.
func steps(ss ...step) func(int) step {
	return func(it int) step { return ss[min(it, len(ss))-1] }
}

func ans(v domain.Verdict, fs ...ledger.ReportedFinding) ledger.Answer {
	return ledger.Answer{Verdict: v, Review: "review", Findings: append([]ledger.ReportedFinding{}, fs...)}
}

func newFinding(sev domain.Severity, title, file string, line int) ledger.ReportedFinding {
	return ledger.ReportedFinding{Severity: sev, Title: title, File: file, Line: line, Status: ledger.Open}
}

func report(id string, st ledger.Status) ledger.ReportedFinding {
	return ledger.ReportedFinding{ID: id, Severity: domain.Major, Status: st}
}

// runLedger runs a cycle under SPEC §19: Record, Assess, stop on two clean
// reviews in a row, a human needed, the budget, or max_reviews.
func runLedger(sc scenario, logf func(string, ...any)) (outcome, ledger.Ledger) {
	var l ledger.Ledger
	spent, clean := 0.0, 0
	for it := 1; it <= domain.DefaultMaxReviews; it++ {
		st := sc.step(it)
		spent += sc.costUSD
		for _, e := range ledger.Record(l, it, st.answer) {
			l = ledger.Fold(l, e)
		}
		a := ledger.Assess(l, it, st.answer.Verdict, sc.settings, spent)
		logf("%s: iteration %d: %s clean=%v reason=%s going=%v trend=%s",
			sc.name, it, st.answer.Verdict, a.Clean, a.Reason, a.Going, ledger.TrendString(l))
		switch {
		case a.NeedsHuman:
			return outcome{it, "needs human", openAtMajor(l)}, l
		case !a.Clean:
			clean = 0
		case clean+1 == domain.CleanToPass:
			return outcome{it, "passed", openAtMajor(l)}, l
		default:
			clean++
		}
		if a.BudgetExceeded != nil {
			return outcome{it, "budget spent", openAtMajor(l)}, l
		}
		l = postReview(l, st)
	}
	return outcome{domain.DefaultMaxReviews, "cap reached", openAtMajor(l)}, l
}

// postReview applies a step's post-review; an error is a bug in the script.
func postReview(l ledger.Ledger, st step) ledger.Ledger {
	fix := st.fix
	if st.fixAll {
		for _, f := range l.Findings() {
			if f.Status == ledger.Open {
				fix = append(fix, f.ID)
			}
		}
	}
	for _, id := range fix {
		e, err := ledger.Fix(l, id, "done")
		if err != nil {
			panic("post-review: " + err.Error())
		}
		l = ledger.Fold(l, e)
	}
	for id, why := range st.decline {
		e, err := ledger.Decline(l, id, why)
		if err != nil {
			panic("post-review: " + err.Error())
		}
		l = ledger.Fold(l, e)
	}
	return l
}

// runOld runs the same script under the old rule: the verdict alone, two
// PASS in a row, max_reviews. The findings open at its end are what the
// same answers would have put in the ledger.
func runOld(sc scenario) outcome {
	passes := 0
	for it := 1; it <= domain.DefaultMaxReviews; it++ {
		if sc.step(it).answer.Verdict != domain.Pass {
			passes = 0
			continue
		}
		if passes++; passes == domain.CleanToPass {
			return outcome{it, "passed", openAfter(sc, it)}
		}
	}
	return outcome{domain.DefaultMaxReviews, "cap reached", openAfter(sc, domain.DefaultMaxReviews)}
}

// openAfter replays the script's answers and post-reviews up to iteration n.
func openAfter(sc scenario, n int) int {
	var l ledger.Ledger
	for it := 1; it <= n; it++ {
		st := sc.step(it)
		for _, e := range ledger.Record(l, it, st.answer) {
			l = ledger.Fold(l, e)
		}
		if it < n {
			l = postReview(l, st)
		}
	}
	return openAtMajor(l)
}

func openAtMajor(l ledger.Ledger) int {
	n := 0
	for _, f := range l.Findings() {
		if f.Status == ledger.Open && (f.Severity == domain.Blocker || f.Severity == domain.Major) {
			n++
		}
	}
	return n
}

func scenarios() []scenario {
	return []scenario{
		{
			name: "(a) findings fixed over iterations converge",
			step: steps(
				step{answer: ans(domain.Fail,
					newFinding(domain.Blocker, "nil map write", "a.go", 10),
					newFinding(domain.Major, "error ignored", "b.go", 20),
					newFinding(domain.Minor, "typo", "c.go", 3)),
					fix: []string{"F1", "F2"}, decline: map[string]string{"F3": "generated file"}},
				step{answer: ans(domain.Fail, report("F1", ledger.Fixed), report("F2", ledger.Open),
					newFinding(domain.Major, "race on cache", "a.go", 40)),
					fix: []string{"F2", "F4"}},
				step{answer: ans(domain.Pass, report("F2", ledger.Fixed), report("F4", ledger.Fixed))},
				step{answer: ans(domain.Pass)},
			),
			want:    outcome{4, "passed", 0},
			wantOld: outcome{4, "passed", 0},
			check: func(t *testing.T, l ledger.Ledger) {
				if got, want := ledger.TrendString(l), "3 → 2 → 0 → 0"; got != want {
					t.Errorf("trend = %q, want %q", got, want)
				}
			},
		},
		{
			name: "(b) a PASS with a blocker open is not clean",
			step: steps(
				step{answer: ans(domain.Pass, newFinding(domain.Blocker, "SQL built by concatenation", "db.go", 5)), fix: []string{"F1"}},
				step{answer: ans(domain.Pass, report("F1", ledger.Open)), fix: []string{"F1"}},
				step{answer: ans(domain.Pass, report("F1", ledger.Fixed))},
				step{answer: ans(domain.Pass)},
			),
			want:    outcome{4, "passed", 0},
			wantOld: outcome{2, "passed", 1},
		},
		{
			name: "(c) a reviewer inventing new minor findings forever",
			step: func(it int) step {
				return step{answer: ans(domain.Fail,
					newFinding(domain.Minor, fmt.Sprintf("naming %d", it), "a.go", it),
					newFinding(domain.Nit, fmt.Sprintf("comment %d", it), "b.go", it)),
					fixAll: true}
			},
			want:    outcome{5, "passed", 0},
			wantOld: outcome{8, "cap reached", 0},
		},
		{
			name: "(d) a finding that keeps coming back after fixed",
			step: steps(
				step{answer: ans(domain.Fail, newFinding(domain.Major, "cache never invalidated", "cache.go", 30)), fix: []string{"F1"}},
				step{answer: ans(domain.Fail, report("F1", ledger.Open)), fix: []string{"F1"}},
			),
			want:    outcome{3, "needs human", 1},
			wantOld: outcome{8, "cap reached", 1},
			check: func(t *testing.T, l ledger.Ledger) {
				a := ledger.Assess(l, 3, domain.Fail, ledger.Settings{}, 0)
				if diff := cmp.Diff([]string{"F1"}, a.Going); diff != "" {
					t.Errorf("going (-want +got):\n%s", diff)
				}
				if got := ledger.Describe(l, a.Going); !strings.Contains(got, "reported open again 2×") {
					t.Errorf("Describe = %q", got)
				}
			},
		},
		{
			name:     "(e) the budget stops further reviews",
			settings: ledger.Settings{BudgetUSD: 1},
			costUSD:  0.40,
			step: func(it int) step {
				return step{answer: ans(domain.Fail, newFinding(domain.Blocker, fmt.Sprintf("leak %d", it), "io.go", it)), fixAll: true}
			},
			want:    outcome{3, "budget spent", 1},
			wantOld: outcome{8, "cap reached", 1},
		},
		{
			name: "(f) ids stay stable across iterations",
			step: steps(
				step{answer: ans(domain.Fail, newFinding(domain.Major, "A", "x.go", 1), newFinding(domain.Minor, "B", "y.go", 2)),
					fix: []string{"F1"}},
				step{answer: ans(domain.Fail, report("F1", ledger.Fixed), report("F2", ledger.Open),
					newFinding(domain.Major, "C", "z.go", 3),
					ledger.ReportedFinding{Severity: domain.Major, Title: "a", File: "x.go", Line: 9, Status: ledger.Fixed},
					ledger.ReportedFinding{ID: "F9", Severity: domain.Major, Title: "D", Status: ledger.Open}),
					fix: []string{"F3", "F4"}},
				step{answer: ans(domain.Pass, report("F3", ledger.Fixed), report("F4", ledger.Fixed), report("F2", ledger.Open))},
				step{answer: ans(domain.Pass, report("F2", ledger.Open))},
			),
			want:    outcome{4, "passed", 0},
			wantOld: outcome{4, "passed", 0},
			check: func(t *testing.T, l ledger.Ledger) {
				var got []string
				for _, f := range l.Findings() {
					got = append(got, f.ID+"="+f.Title+":"+string(f.Status))
				}
				want := []string{"F1=A:fixed", "F2=B:open", "F3=C:fixed", "F4=D:fixed"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("ids (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "(g) no findings: the verdict alone decides",
			step: steps(
				step{answer: ledger.Answer{Verdict: domain.Fail}},
				step{answer: ledger.Answer{Verdict: domain.Pass}},
				step{answer: ledger.Answer{Verdict: domain.Fail}},
				step{answer: ledger.Answer{Verdict: domain.Pass}},
			),
			want:    outcome{5, "passed", 0},
			wantOld: outcome{5, "passed", 0},
			check: func(t *testing.T, l ledger.Ledger) {
				if len(l.Findings()) != 0 || ledger.TrendString(l) != "" {
					t.Errorf("ledger not empty: %v %q", l.Findings(), ledger.TrendString(l))
				}
			},
		},
		{
			name: "(h) a new blocker every review, no budget",
			step: func(it int) step {
				return step{answer: ans(domain.Fail, newFinding(domain.Blocker, fmt.Sprintf("leak %d", it), "io.go", it)), fixAll: true}
			},
			want:    outcome{4, "needs human", 1},
			wantOld: outcome{8, "cap reached", 1},
		},
	}
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			got, l := runLedger(sc, t.Logf)
			if diff := cmp.Diff(sc.want, got); diff != "" {
				t.Errorf("with ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sc.wantOld, runOld(sc)); diff != "" {
				t.Errorf("without ledger (-want +got):\n%s", diff)
			}
			if sc.check != nil {
				sc.check(t, l)
			}
		})
	}
	var b strings.Builder
	writeTable(&b)
	t.Log("\n" + b.String())
}

// writeTable runs every scenario both ways and writes the comparison.
func writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\twith ledger\twithout (verdict only)")
	for _, sc := range scenarios() {
		got, _ := runLedger(sc, func(string, ...any) {})
		fmt.Fprintf(tw, "%s\t%s\t%s\n", sc.name, got, runOld(sc))
	}
	tw.Flush()
}

// Example_scenarios compares, on the scripted reviewers of the tests, how
// many iterations a review cycle takes with the ledger's rules (SPEC §19)
// and with the old rule (the verdict alone, two PASS in a row, at most
// max_reviews = 8), both fed the same answers. "open ≥ major" counts the
// findings at or above major still open when the cycle ended.
func Example_scenarios() {
	writeTable(os.Stdout)
	// Output:
	// scenario                                             with ledger                     without (verdict only)
	// (a) findings fixed over iterations converge          4 passed                        4 passed
	// (b) a PASS with a blocker open is not clean          4 passed                        2 passed, 1 open ≥ major
	// (c) a reviewer inventing new minor findings forever  5 passed                        8 cap reached
	// (d) a finding that keeps coming back after fixed     3 needs human, 1 open ≥ major   8 cap reached, 1 open ≥ major
	// (e) the budget stops further reviews                 3 budget spent, 1 open ≥ major  8 cap reached, 1 open ≥ major
	// (f) ids stay stable across iterations                4 passed                        4 passed
	// (g) no findings: the verdict alone decides           5 passed                        5 passed
	// (h) a new blocker every review, no budget            4 needs human, 1 open ≥ major   8 cap reached, 1 open ≥ major
}
