package hook

import (
	"fmt"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// The review ledger in the Stop hook (docs/ledger.md): the log
// is read once per stop, and only when a review is due or a message needs
// the findings.

// ledgerView is what a message needs of the current cycle's ledger.
type ledgerView struct {
	series   ledgerlog.Series
	l        ledger.Ledger
	settings ledger.Settings
}

// currentLedger returns the ledger of the cycle state s is in.
func (h *stopper) currentLedger(s *state.State) ledgerView {
	sr, l, _ := h.runner().Ledger().Current(s)
	return ledgerView{series: sr, l: l, settings: h.cfg.Ledger()}
}

// openList lists the open findings of l, one a line, for a block message;
// "" when none is open.
func openList(l ledger.Ledger) string {
	var ids []string
	for _, f := range l.Findings() {
		if f.Status == ledger.Open {
			ids = append(ids, f.ID)
		}
	}
	return indent(ledger.Describe(l, ids))
}

func indent(list string) string {
	if list == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(strings.TrimSuffix(list, "\n"), "\n", "\n  ")
}

// judged says how a review counted when the ledger, not the verdict alone,
// decided it; "" when the usual wording fits.
func judged(verdict domain.Verdict, a ledger.Assessment, clean int) string {
	switch {
	case !a.Tracked:
		return ""
	case a.Reason == ledger.ReasonOpenFindings && verdict == domain.Pass:
		return fmt.Sprintf("PASS, but not clean: findings at or above %s are still open (%s); two clean reviews in a row are needed",
			a.Threshold, strings.Join(a.Blocking, ", "))
	case a.Reason == ledger.ReasonRatchet:
		return fmt.Sprintf("FAIL, counted clean by the severity ratchet (from this iteration only blocker findings keep the cycle going); one more clean review is needed (%d of %d clean in a row)",
			clean, domain.CleanToPass)
	}
	return ""
}

// whyGoingRound says why the ledger stopped the cycle.
func whyGoingRound(r ledger.Reason, threshold domain.Severity) string {
	if r == ledger.ReasonStalled {
		return fmt.Sprintf("the findings open at or above %s have not fallen for %d reviews", threshold, ledger.StallWindow)
	}
	return fmt.Sprintf("a finding marked fixed or declined was reported open again %d times", ledger.ReopenLimit)
}

// goingRound lists the findings that keep the cycle from converging: the
// assessment's, or, when those were settled since, every open one.
func goingRound(lv ledgerView) (ledger.Assessment, string) {
	a := ledger.Assess(lv.l, lv.l.Iteration(), "", lv.settings, 0)
	list := indent(ledger.Describe(lv.l, a.Going))
	if list == "" {
		list = openList(lv.l)
	}
	return a, list
}

// needsHumanMessage is the allowed stop of a cycle that needs a human: the
// findings going round and the ways on.
func needsHumanMessage(v view, review domain.Phase, why, list string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "taskie: the %s cycle does not converge (%s), so no further review runs until a human decides (state.json: \"needs_human\": true).", review, why)
	if list != "" {
		b.WriteString(" Findings going round:\n" + list + "\n")
	} else {
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "Decide for each: fix it, or decline it with the reason (`taskie finding declined F1 --why \"…\"%s`); or move on (`taskie set next_phase …`). Then `taskie resume%s` continues the reviews (`taskie findings%s` shows the ledger).",
		v.planFlag, v.planFlag, v.planFlag)
	return b.String()
}

// budgetMessage is the allowed stop when the budget forbids a review.
func budgetMessage(v view, d workflow.StopDecision) string {
	what, keys := "the plan's review budget is spent", `"budget_usd" or "review_budget"`
	if d.Budget != nil {
		what = d.Budget.String()
		if k := d.Budget.Keys(); len(k) > 0 {
			keys = strings.Join(quoted(k), " or ")
		}
	}
	tdd := v.s != nil && v.s.TDD
	return fmt.Sprintf("taskie: %s, so %s %d did not run. Raise %s in .taskie/config.json to review again, or move on: `taskie set next_phase %s%s`.",
		what, d.Review, d.Iteration, keys, workflow.AdvanceTarget(d.Review, tdd, v.pendingOther), v.planFlag)
}

// quoted puts each setting name in double quotes.
func quoted(keys []string) []string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = `"` + k + `"`
	}
	return q
}
