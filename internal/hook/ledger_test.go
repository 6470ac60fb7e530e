package hook

import (
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// reopenedTwice is a cycle whose F1 came back twice after being fixed,
// with F2 open.
func reopenedTwice() ledger.Ledger {
	var l ledger.Ledger
	fold := func(evs ...ledger.Event) {
		for _, e := range evs {
			l = ledger.Fold(l, e)
		}
	}
	fix := func() {
		e, err := ledger.Fix(l, "F1", "cleared on write")
		if err != nil {
			panic(err)
		}
		fold(e)
	}
	fold(ledger.Record(l, 1, ledger.Answer{Verdict: domain.Fail, Findings: []ledger.ReportedFinding{
		{Severity: domain.Major, Title: "cache never invalidated", File: "cache.go", Line: 30, Status: ledger.Open},
		{Severity: domain.Minor, Title: "naming", Status: ledger.Open}}})...)
	for it := 2; it <= 3; it++ {
		fix()
		fold(ledger.Record(l, it, ledger.Answer{Verdict: domain.Fail, Findings: []ledger.ReportedFinding{{ID: "F1", Severity: domain.Major, Status: ledger.Open}}})...)
	}
	return l
}

func TestBlockMessageFindings(t *testing.T) {
	for _, review := range []domain.Phase{domain.PlanReview, domain.TasksReview, domain.CodeReview, domain.AllCodeReview} {
		d := BlockData{Plan: "p", Task: 3, Review: review, Verdict: domain.Pass, Iteration: 2, NextIteration: 3, ReviewFile: "R", PostFile: "P",
			StateFile: "S", PlanFlag: " --plan p", Findings: "  - F1 (blocker) a.go:10 — nil map write",
			Judged: "PASS, but not clean: findings at or above major are still open (F1); two clean reviews in a row are needed",
			Budget: "reviews have cost $1.20 of the plan's budget of $1.00"}
		msg := BlockMessage(d)
		for _, want := range []string{"is in: PASS, but not clean: findings at or above major are still open (F1)",
			"Open findings on record (ids are stable for this review cycle):\n  - F1 (blocker) a.go:10 — nil map write\n\nDo the post-",
			"`taskie finding fixed <id> --note \"what changed\" --plan p`", "`taskie finding declined <id> --why \"why not\" --plan p`",
			"Note: reviews have cost $1.20 of the plan's budget of $1.00; no further review will run after this post-review.\nThis is an automated"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s block lacks %q:\n%s", review, want, msg)
			}
		}
		if strings.Contains(msg, "one more clean review is needed") {
			t.Errorf("%s block says a PASS that was not clean counts:\n%s", review, msg)
		}
		d.Findings, d.Judged, d.Budget = "", "", ""
		plain := BlockMessage(d)
		for _, not := range []string{"finding fixed", "Open findings", "Note:"} {
			if strings.Contains(plain, not) {
				t.Errorf("%s block without findings says %q:\n%s", review, not, plain)
			}
		}
		if !strings.Contains(plain, "  R\n\nDo the post-") {
			t.Errorf("%s block without findings changed its layout:\n%s", review, plain)
		}
	}
}

func TestJudged(t *testing.T) {
	blocker := ledger.Assessment{Reason: ledger.ReasonOpenFindings, Tracked: true, Threshold: domain.Major, Blocking: []string{"F1", "F4"}}
	if got := judged(domain.Pass, blocker, 0); got != "PASS, but not clean: findings at or above major are still open (F1, F4); two clean reviews in a row are needed" {
		t.Errorf("PASS with blockers: %q", got)
	}
	if got := judged(domain.Fail, blocker, 0); got != "" {
		t.Errorf("FAIL with blockers: %q, want the usual wording", got)
	}
	ratchet := ledger.Assessment{Clean: true, Reason: ledger.ReasonRatchet, Tracked: true, Ratchet: true, Threshold: domain.Blocker}
	if got := judged(domain.Fail, ratchet, 1); !strings.HasPrefix(got, "FAIL, counted clean by the severity ratchet") || !strings.Contains(got, "(1 of 2 clean in a row)") {
		t.Errorf("ratchet: %q", got)
	}
	if got := judged(domain.Pass, ledger.Assessment{Clean: true, Reason: ledger.ReasonPass}, 1); got != "" {
		t.Errorf("untracked: %q", got)
	}
}

func TestRenderNeedsHumanAndBudget(t *testing.T) {
	s := mk(domain.CodeReview, domain.PostCodeReview, 3, 3, "opus", 0)
	s.NeedsHuman = true
	v := testView(s)
	v.planFlag = " --plan p"
	v.ledger = func(*state.State) ledgerView {
		return ledgerView{series: ledgerlog.Series{Review: domain.CodeReview, Task: 3}, l: reopenedTwice()}
	}
	_, res := decideAndRender(t, okFacts(s), v)
	for _, want := range []string{"taskie: the code-review cycle does not converge (a finding marked fixed or declined was reported open again 2 times)",
		"\"needs_human\": true", "  - F1 (major) cache.go:30 — cache never invalidated (reported open again 2×)\n",
		"`taskie finding declined F1 --why \"…\" --plan p`", "`taskie resume --plan p`", "`taskie findings --plan p`"} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("needs-human message lacks %q:\n%s", want, res.Message)
		}
	}
	if res.Block || strings.Contains(res.Message, "naming") {
		t.Errorf("needs-human = %+v, want an allow listing only the findings going round", res)
	}

	d := workflow.StopDecision{Reason: workflow.RBudget, Review: domain.CodeReview, Task: 3, Iteration: 4,
		Budget: &ledger.BudgetOverrun{SpentUSD: 1.2, BudgetUSD: 1}}
	res = renderSafely(t, d, v)
	if want := "taskie: reviews have cost $1.20 of the plan's budget of $1.00, so code-review 4 did not run. Raise \"budget_usd\" in .taskie/config.json to review again, or move on: `taskie set next_phase complete-task --plan p`."; res.Message != want {
		t.Errorf("budget message:\n%s\nwant\n%s", res.Message, want)
	}
}

// A reminder of an owed post-review lists the cycle's open findings too.
func TestReminderListsFindings(t *testing.T) {
	s := mk(domain.CodeReview, domain.PostCodeReview, 3, 3, "opus", 0)
	v := testView(s)
	v.ledger = func(*state.State) ledgerView { return ledgerView{l: reopenedTwice()} }
	_, res := decideAndRender(t, okFacts(s), v)
	if !res.Block || !strings.Contains(res.Reason, "  - F1 (major) cache.go:30 — cache never invalidated (reported open again 2×)\n  - F2 (minor) — naming") {
		t.Errorf("reminder = %+v, want the open findings listed", res)
	}
}
