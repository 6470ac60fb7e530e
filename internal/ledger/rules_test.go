package ledger

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

// cycle records answer i as the review at iteration i+1, with an optional
// post-review between reviews that marks every open finding fixed.
func cycle(fixAll bool, answers ...Answer) Ledger {
	var l Ledger
	for i, a := range answers {
		l = fold(l, Record(l, i+1, a)...)
		if !fixAll {
			continue
		}
		for _, f := range l.Findings() {
			if f.Status == Open {
				e, _ := Fix(l, f.ID, "")
				l = Fold(l, e)
			}
		}
	}
	return l
}

func answer(v domain.Verdict, fs ...ReportedFinding) Answer {
	return Answer{Verdict: v, Findings: append([]ReportedFinding{}, fs...)}
}

func newf(sev domain.Severity, title string) ReportedFinding {
	return ReportedFinding{Severity: sev, Title: title, Status: Open}
}

func reopen(id string, sev domain.Severity) ReportedFinding {
	return ReportedFinding{ID: id, Severity: sev, Status: Open}
}

// newBlockers gives n reviews each reporting one new blocker per count.
func newBlockers(counts ...int) []Answer {
	var as []Answer
	k := 0
	for _, n := range counts {
		var fs []ReportedFinding
		for range n {
			k++
			fs = append(fs, newf(domain.Blocker, fmt.Sprintf("b%d", k)))
		}
		as = append(as, answer(domain.Fail, fs...))
	}
	return as
}

func TestAssess(t *testing.T) {
	tests := []struct {
		name      string
		l         Ledger
		iteration int
		verdict   domain.Verdict
		s         Settings
		spent     float64
		want      Assessment
	}{
		{
			name: "no findings reported: PASS alone is clean", iteration: 1, verdict: domain.Pass,
			l:    cycle(false, Answer{Verdict: domain.Pass}),
			want: Assessment{Clean: true, Reason: ReasonPass, Threshold: domain.Major},
		},
		{
			name: "no findings reported: FAIL alone is not, even past the ratchet", iteration: 5, verdict: domain.Fail,
			want: Assessment{Reason: ReasonFail, Threshold: domain.Major},
		},
		{
			name: "no findings reported: no verdict", iteration: 1,
			want: Assessment{Reason: ReasonNoVerdict, Threshold: domain.Major},
		},
		{
			name: "PASS, open minor: clean", iteration: 1, verdict: domain.Pass,
			l:    cycle(false, answer(domain.Pass, newf(domain.Minor, "m"))),
			want: Assessment{Clean: true, Reason: ReasonPass, Tracked: true, Threshold: domain.Major},
		},
		{
			name: "PASS with a blocker open: not clean", iteration: 1, verdict: domain.Pass,
			l:    cycle(false, answer(domain.Pass, newf(domain.Blocker, "b"), newf(domain.Nit, "n"))),
			want: Assessment{Reason: ReasonOpenFindings, Tracked: true, Threshold: domain.Major, Blocking: []string{"F1"}},
		},
		{
			name: "a minor raised to blocker on a PASS: not clean", iteration: 2, verdict: domain.Pass,
			l: cycle(false, answer(domain.Fail, ReportedFinding{Severity: domain.Minor, Title: "slow loop", File: "a.go", Line: 3, Status: Open}),
				answer(domain.Pass, ReportedFinding{ID: "F1", Severity: domain.Blocker, Title: "slow loop", File: "a.go", Line: 3, Status: Open})),
			want: Assessment{Reason: ReasonOpenFindings, Tracked: true, Threshold: domain.Major, Blocking: []string{"F1"}},
		},
		{
			name: "a major lowered to minor on a PASS: clean", iteration: 2, verdict: domain.Pass,
			l: cycle(false, answer(domain.Fail, newf(domain.Major, "M")),
				answer(domain.Pass, reopen("F1", domain.Minor))),
			want: Assessment{Clean: true, Reason: ReasonPass, Tracked: true, Threshold: domain.Major},
		},
		{
			name: "FAIL, nothing open at the threshold: not clean before the ratchet", iteration: 3, verdict: domain.Fail,
			l:    cycle(false, answer(domain.Fail), answer(domain.Fail), answer(domain.Fail, newf(domain.Minor, "m"))),
			want: Assessment{Reason: ReasonFail, Tracked: true, Threshold: domain.Major},
		},
		{
			name: "ratchet: FAIL with a major open is clean", iteration: 4, verdict: domain.Fail,
			l:    cycle(false, answer(domain.Fail), answer(domain.Fail), answer(domain.Fail), answer(domain.Fail, newf(domain.Major, "M"))),
			want: Assessment{Clean: true, Reason: ReasonRatchet, Tracked: true, Ratchet: true, Threshold: domain.Blocker},
		},
		{
			name: "ratchet: PASS with a blocker open is not", iteration: 4, verdict: domain.Pass,
			l:    cycle(false, answer(domain.Fail), answer(domain.Fail), answer(domain.Fail), answer(domain.Pass, newf(domain.Blocker, "B"))),
			want: Assessment{Reason: ReasonOpenFindings, Tracked: true, Ratchet: true, Threshold: domain.Blocker, Blocking: []string{"F1"}},
		},
		{
			name: "ratchet needs a verdict", iteration: 4,
			l:    cycle(false, answer(domain.Fail), answer(domain.Fail), answer(domain.Fail), answer("")),
			want: Assessment{Reason: ReasonNoVerdict, Tracked: true, Ratchet: true, Threshold: domain.Blocker},
		},
		{
			name: "block_severity minor", iteration: 1, verdict: domain.Pass, s: Settings{BlockSeverity: domain.Minor},
			l:    cycle(false, answer(domain.Pass, newf(domain.Minor, "m"))),
			want: Assessment{Reason: ReasonOpenFindings, Tracked: true, Threshold: domain.Minor, Blocking: []string{"F1"}},
		},
		{
			name: "ratchet_after 2", iteration: 2, verdict: domain.Fail, s: Settings{RatchetAfter: 2},
			l:    cycle(false, answer(domain.Fail), answer(domain.Fail, newf(domain.Major, "M"))),
			want: Assessment{Clean: true, Reason: ReasonRatchet, Tracked: true, Ratchet: true, Threshold: domain.Blocker},
		},
		{
			name: "budget spent", iteration: 1, verdict: domain.Pass, s: Settings{BudgetUSD: 1}, spent: 1,
			want: Assessment{Clean: true, Reason: ReasonPass, Threshold: domain.Major,
				BudgetExceeded: &BudgetOverrun{SpentUSD: 1, BudgetUSD: 1}},
		},
		{
			name: "budget not spent", iteration: 1, verdict: domain.Pass, s: Settings{BudgetUSD: 1}, spent: 0.99,
			want: Assessment{Clean: true, Reason: ReasonPass, Threshold: domain.Major},
		},
		{
			name: "reopened twice: needs a human", iteration: 3, verdict: domain.Fail,
			l: cycle(true, answer(domain.Fail, newf(domain.Major, "M"), newf(domain.Blocker, "B")),
				answer(domain.Fail, reopen("F1", domain.Major)), answer(domain.Fail, reopen("F1", domain.Major))),
			want: Assessment{Reason: ReasonReopened, Tracked: true, Threshold: domain.Major, Blocking: []string{"F1"},
				NeedsHuman: true, Going: []string{"F1"}},
		},
		{
			name: "a minor reopened twice does not need a human", iteration: 3, verdict: domain.Fail,
			l: cycle(true, answer(domain.Fail, newf(domain.Minor, "m")),
				answer(domain.Fail, reopen("F1", domain.Minor)), answer(domain.Fail, reopen("F1", domain.Minor))),
			want: Assessment{Reason: ReasonFail, Tracked: true, Threshold: domain.Major},
		},
		{
			name: "blockers not falling for 3 iterations: needs a human", iteration: 4, verdict: domain.Fail,
			l: cycle(true, newBlockers(1, 1, 1, 1)...),
			want: Assessment{Reason: ReasonStalled, Tracked: true, Ratchet: true, Threshold: domain.Blocker,
				Blocking: []string{"F4"}, NeedsHuman: true, Going: []string{"F4"}},
		},
		{
			name: "going up and down is not falling", iteration: 4, verdict: domain.Fail,
			l: cycle(true, newBlockers(1, 2, 1, 2)...),
			want: Assessment{Reason: ReasonStalled, Tracked: true, Ratchet: true, Threshold: domain.Blocker,
				Blocking: []string{"F5", "F6"}, NeedsHuman: true, Going: []string{"F5", "F6"}},
		},
		{
			name: "a fall in the window is progress", iteration: 4, verdict: domain.Fail,
			l: cycle(true, newBlockers(2, 2, 1, 2)...),
			want: Assessment{Reason: ReasonOpenFindings, Tracked: true, Ratchet: true, Threshold: domain.Blocker,
				Blocking: []string{"F6", "F7"}},
		},
		{
			name: "three iterations are not enough to stall", iteration: 3, verdict: domain.Fail,
			l:    cycle(true, newBlockers(1, 1, 1)...),
			want: Assessment{Reason: ReasonOpenFindings, Tracked: true, Threshold: domain.Major, Blocking: []string{"F3"}},
		},
		{
			name: "majors stall when the ratchet is off", iteration: 4, verdict: domain.Fail, s: Settings{RatchetAfter: 9},
			l: cycle(true, answer(domain.Fail, newf(domain.Major, "a")), answer(domain.Fail, newf(domain.Major, "b")),
				answer(domain.Fail, newf(domain.Major, "c")), answer(domain.Fail, newf(domain.Major, "d"))),
			want: Assessment{Reason: ReasonStalled, Tracked: true, Threshold: domain.Major,
				Blocking: []string{"F4"}, NeedsHuman: true, Going: []string{"F4"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Assess(tc.l, tc.iteration, tc.verdict, tc.s, tc.spent)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestResumeCountsAfresh: after a human's decision the same history does
// not stop the cycle again, and reopen counts start over.
func TestResumeCountsAfresh(t *testing.T) {
	l := cycle(true, newBlockers(1, 1, 1, 1)...)
	if a := Assess(l, 4, domain.Fail, Settings{}, 0); !a.NeedsHuman {
		t.Fatalf("before resume: %+v, want NeedsHuman", a)
	}
	l = Fold(l, Resume(l, "keep going"))
	l = fold(l, Record(l, 5, answer(domain.Fail, newf(domain.Blocker, "b5")))...)
	if a := Assess(l, 5, domain.Fail, Settings{}, 0); a.NeedsHuman {
		t.Errorf("after resume: %+v, want no NeedsHuman", a)
	}

	r := cycle(true, answer(domain.Fail, newf(domain.Major, "M")),
		answer(domain.Fail, reopen("F1", domain.Major)), answer(domain.Fail, reopen("F1", domain.Major)))
	r = Fold(r, Resume(r, ""))
	if a := Assess(r, 3, domain.Fail, Settings{}, 0); a.NeedsHuman {
		t.Errorf("reopened finding after resume: %+v, want no NeedsHuman", a)
	}
}

func TestSettings(t *testing.T) {
	want := Settings{BlockSeverity: domain.Major, RatchetAfter: 4}
	if diff := cmp.Diff(want, Settings{BlockSeverity: "urgent", RatchetAfter: -1}.withDefaults()); diff != "" {
		t.Errorf("withDefaults (-want +got):\n%s", diff)
	}
}

func TestCheckBudget(t *testing.T) {
	s := Settings{BudgetUSD: 2, ReviewBudget: 10 * time.Minute}
	tests := []struct {
		name  string
		s     Settings
		spent float64
		took  time.Duration
		want  *BudgetOverrun
		text  string
	}{
		{name: "no budgets", s: Settings{}, spent: 1e6, took: time.Hour},
		{name: "within", s: s, spent: 1.99, took: 9 * time.Minute},
		{name: "money spent", s: s, spent: 2.5, took: time.Minute,
			want: &BudgetOverrun{SpentUSD: 2.5, BudgetUSD: 2},
			text: "reviews have cost $2.50 of the plan's budget of $2.00"},
		{name: "review too long", s: s, spent: 1, took: 10 * time.Minute,
			want: &BudgetOverrun{Took: 10 * time.Minute, ReviewBudget: 10 * time.Minute},
			text: "the last review took 10m0s, its budget is 10m0s"},
		{name: "both", s: s, spent: 3, took: 11 * time.Minute,
			want: &BudgetOverrun{SpentUSD: 3, BudgetUSD: 2, Took: 11 * time.Minute, ReviewBudget: 10 * time.Minute},
			text: "reviews have cost $3.00 of the plan's budget of $2.00; the last review took 11m0s, its budget is 10m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckBudget(tc.s, tc.spent, tc.took)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if got != nil && got.String() != tc.text {
				t.Errorf("String() = %q, want %q", got.String(), tc.text)
			}
		})
	}
}

func TestReviewTimeout(t *testing.T) {
	for _, tc := range []struct {
		budget, timeout, want time.Duration
	}{
		{0, 25 * time.Minute, 25 * time.Minute},
		{10 * time.Minute, 25 * time.Minute, 10 * time.Minute},
		{time.Hour, 25 * time.Minute, 25 * time.Minute},
	} {
		if got := ReviewTimeout(Settings{ReviewBudget: tc.budget}, tc.timeout); got != tc.want {
			t.Errorf("ReviewTimeout(budget %s, timeout %s) = %s, want %s", tc.budget, tc.timeout, got, tc.want)
		}
	}
}

func TestTrend(t *testing.T) {
	if got := TrendString(Ledger{}); got != "" {
		t.Errorf("empty trend = %q", got)
	}
	l := cycle(false,
		answer(domain.Fail, newf(domain.Major, "a"), newf(domain.Minor, "b"), newf(domain.Nit, "c")),
		Answer{Verdict: domain.Fail}, // no findings: not a point of the trend
		answer(domain.Fail, ReportedFinding{ID: "F1", Status: Fixed}, ReportedFinding{ID: "F2", Status: Fixed}),
	)
	l = Fold(l, Event{Kind: KindDeclined, ID: "F3", Note: "style", Actor: ActorPostReview})
	l = fold(l, Record(l, 4, answer(domain.Pass))...)
	if diff := cmp.Diff([]int{3, 1, 0}, Trend(l)); diff != "" {
		t.Errorf("Trend (-want +got):\n%s", diff)
	}
	if got, want := TrendString(l), "3 → 1 → 0"; got != want {
		t.Errorf("TrendString = %q, want %q", got, want)
	}
}

func TestCheckBudgets(t *testing.T) {
	plan := Settings{BudgetTokens: 10000, BudgetTime: 30 * time.Minute}
	task := Settings{TaskBudgetUSD: 1, TaskBudgetTokens: 3000, TaskBudgetTime: 10 * time.Minute}
	tests := []struct {
		name       string
		s          Settings
		plan       Spent
		task       string
		spent      Spent
		want       *BudgetOverrun
		wantString string
	}{
		{name: "no budget", s: Settings{}, plan: Spent{USD: 99, Tokens: 1e9, Time: time.Hour}, task: "1", spent: Spent{USD: 99}},
		{name: "plan tokens under", s: plan, plan: Spent{Tokens: 9999}},
		{name: "plan tokens reached", s: plan, plan: Spent{Tokens: 10000},
			want:       &BudgetOverrun{SpentTokens: 10000, BudgetTokens: 10000},
			wantString: "reviews have used 10000 tokens of the plan's budget of 10000"},
		{name: "plan time over", s: plan, plan: Spent{Time: 31 * time.Minute},
			want:       &BudgetOverrun{SpentTime: 31 * time.Minute, BudgetTime: 30 * time.Minute},
			wantString: "reviews have run 31m0s of the plan's budget of 30m0s"},
		{name: "task under every budget", s: task, task: "2", spent: Spent{USD: 0.99, Tokens: 2999, Time: 9 * time.Minute}},
		{name: "task tokens reached", s: task, task: "2", spent: Spent{Tokens: 3000},
			want:       &BudgetOverrun{Task: "2", TaskSpentTokens: 3000, TaskBudgetTokens: 3000},
			wantString: "task 2's reviews have used 3000 tokens of its budget of 3000"},
		{name: "task dollars and time", s: task, task: "2", spent: Spent{USD: 1.5, Time: 10 * time.Minute},
			want:       &BudgetOverrun{Task: "2", TaskSpentUSD: 1.5, TaskBudgetUSD: 1, TaskSpentTime: 10 * time.Minute, TaskBudgetTime: 10 * time.Minute},
			wantString: "task 2's reviews have cost $1.50 of its budget of $1.00; task 2's reviews have run 10m0s of its budget of 10m0s"},
		{name: "task budgets ignore a review of no task", s: task, task: "", spent: Spent{USD: 5, Tokens: 5000}},
		{name: "the plan's tokens are not the task's", s: task, plan: Spent{Tokens: 50000}, task: "3", spent: Spent{Tokens: 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckBudgets(tc.s, tc.plan, tc.task, tc.spent, 0)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckBudgets (-want +got):\n%s", diff)
			}
			if got != nil && got.String() != tc.wantString {
				t.Errorf("String = %q, want %q", got.String(), tc.wantString)
			}
		})
	}
}
