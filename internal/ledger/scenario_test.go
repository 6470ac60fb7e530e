package ledger_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/ledger/ledgertest"
)

// The scenarios (package ledgertest) are a scripted reviewer and a
// scripted post-review, run through the ledger's rules and through the old
// rule (verdict only, two PASS in a row), with the same answers. The hook's
// end-to-end test (internal/cli) runs the same scripts through the real
// hook and fake reviewer.

// checks are the scenario-specific assertions on the final ledger.
var checks = map[string]func(t *testing.T, l ledger.Ledger){
	"(a) findings fixed over iterations converge": func(t *testing.T, l ledger.Ledger) {
		if got, want := ledger.TrendString(l), "3 → 2 → 0 → 0"; got != want {
			t.Errorf("trend = %q, want %q", got, want)
		}
	},
	"(d) a finding that keeps coming back after fixed": func(t *testing.T, l ledger.Ledger) {
		a := ledger.Assess(l, 3, domain.Fail, ledger.Settings{}, 0)
		if diff := cmp.Diff([]string{"F1"}, a.Going); diff != "" {
			t.Errorf("going (-want +got):\n%s", diff)
		}
		if got := ledger.Describe(l, a.Going); !strings.Contains(got, "reported open again 2×") {
			t.Errorf("Describe = %q", got)
		}
	},
	"(f) ids stay stable across iterations": func(t *testing.T, l ledger.Ledger) {
		var got []string
		for _, f := range l.Findings() {
			got = append(got, f.ID+"="+f.Title+":"+string(f.Status))
		}
		want := []string{"F1=A:fixed", "F2=B:open", "F3=C:fixed", "F4=D:fixed"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	},
	"(i) a minor raised to blocker, never fixed": func(t *testing.T, l ledger.Ledger) {
		if f, _ := l.Find("F1"); f.Severity != domain.Blocker {
			t.Errorf("F1 severity = %s, want blocker (raised by review 2)", f.Severity)
		}
	},
	"(g) no findings: the verdict alone decides": func(t *testing.T, l ledger.Ledger) {
		if len(l.Findings()) != 0 || ledger.TrendString(l) != "" {
			t.Errorf("ledger not empty: %v %q", l.Findings(), ledger.TrendString(l))
		}
	},
}

func TestScenarios(t *testing.T) {
	names := map[string]bool{}
	for _, sc := range ledgertest.Scenarios() {
		names[sc.Name] = true
		t.Run(sc.Name, func(t *testing.T) {
			got, l := ledgertest.RunLedger(sc, t.Logf)
			if diff := cmp.Diff(sc.Want, got); diff != "" {
				t.Errorf("with ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sc.WantOld, ledgertest.RunOld(sc)); diff != "" {
				t.Errorf("without ledger (-want +got):\n%s", diff)
			}
			if check := checks[sc.Name]; check != nil {
				check(t, l)
			}
		})
	}
	for name := range checks {
		if !names[name] {
			t.Errorf("check %q names no scenario", name)
		}
	}
	var b strings.Builder
	ledgertest.WriteTable(&b)
	t.Log("\n" + b.String())
}

// Example_scenarios compares, on the scripted reviewers of the tests, how
// many iterations a review cycle takes with the ledger's rules (docs/ledger.md#the-rules)
// and with the old rule (the verdict alone, two PASS in a row, at most
// max_reviews = 8), both fed the same answers. "open ≥ major" counts the
// findings at or above major still open when the cycle ended.
func Example_scenarios() {
	ledgertest.WriteTable(os.Stdout)
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
	// (i) a minor raised to blocker, never fixed           5 needs human, 1 open ≥ major   3 passed, 1 open ≥ major
}
