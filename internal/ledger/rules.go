package ledger

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Non-convergence limits (docs/ledger.md#the-rules).
const (
	// StallWindow: the open count at or above the threshold has not fallen
	// below its level of StallWindow iterations earlier.
	StallWindow = 3
	// ReopenLimit: a finding reported open again this many times after it
	// was fixed or declined is going round.
	ReopenLimit = 2
)

// Settings are the ledger rules' settings (docs/configuration.md, docs/ledger.md). The zero value
// means the defaults.
type Settings struct {
	// BlockSeverity is the least severe open finding that makes a review
	// not clean; "" (or an unknown severity) means
	// domain.DefaultBlockSeverity.
	BlockSeverity domain.Severity
	// RatchetAfter is the iteration from which only blockers keep the cycle
	// going; 0 or less means domain.DefaultRatchetAfter. A value above
	// max_reviews turns the ratchet off.
	RatchetAfter int
	// BudgetUSD caps the plan's review costs; 0 or less means no cap.
	BudgetUSD float64
	// ReviewBudget caps one review's duration; 0 or less means no cap.
	ReviewBudget time.Duration
	// BudgetTokens and BudgetTime cap the plan's review tokens and total
	// review time; the Task ones cap those of one task's reviews. 0 or
	// less means no cap.
	BudgetTokens     int64
	BudgetTime       time.Duration
	TaskBudgetUSD    float64
	TaskBudgetTokens int64
	TaskBudgetTime   time.Duration
}

// Spent is what a set of reviews used: their cost, tokens and run time.
type Spent struct {
	USD    float64
	Tokens int64
	Time   time.Duration
}

// HasBudgets reports whether any budget is set.
func (s Settings) HasBudgets() bool {
	return s.BudgetUSD > 0 || s.ReviewBudget > 0 || s.BudgetTokens > 0 || s.BudgetTime > 0 ||
		s.TaskBudgetUSD > 0 || s.TaskBudgetTokens > 0 || s.TaskBudgetTime > 0
}

func (s Settings) withDefaults() Settings {
	if _, ok := ranks[s.BlockSeverity]; !ok {
		s.BlockSeverity = domain.DefaultBlockSeverity
	}
	if s.RatchetAfter <= 0 {
		s.RatchetAfter = domain.DefaultRatchetAfter
	}
	return s
}

// ranks orders severities, most serious first.
var ranks = map[domain.Severity]int{domain.Blocker: 0, domain.Major: 1, domain.Minor: 2, domain.Nit: 3}

// atOrAbove reports whether sev is at least as serious as threshold.
func atOrAbove(sev, threshold domain.Severity) bool {
	return ranks[severityOf(sev)] <= ranks[severityOf(threshold)]
}

// Reason says why a review is, or is not, clean, or why the cycle needs a
// human.
type Reason string

// Reasons.
const (
	// ReasonPass: clean, verdict PASS and nothing open at or above the
	// threshold (or, with no findings reported, verdict PASS).
	ReasonPass Reason = "pass"
	// ReasonRatchet: clean by the severity ratchet: no open blocker, though
	// the verdict was FAIL.
	ReasonRatchet Reason = "ratchet"
	// ReasonFail: not clean, verdict FAIL.
	ReasonFail Reason = "fail"
	// ReasonNoVerdict: not clean, no readable verdict.
	ReasonNoVerdict Reason = "no-verdict"
	// ReasonOpenFindings: not clean, findings open at or above the
	// threshold, whatever the verdict.
	ReasonOpenFindings Reason = "open-findings"
	// ReasonStalled: needs a human, the open count has not fallen for
	// StallWindow iterations.
	ReasonStalled Reason = "stalled"
	// ReasonReopened: needs a human, a finding was reported open again
	// ReopenLimit times after it was fixed or declined.
	ReasonReopened Reason = "reopened"
)

// Assessment is what the ledger's rules say about one review.
type Assessment struct {
	// Clean: the review counts towards the consecutive clean reviews that
	// end the cycle (domain.CleanToPass).
	Clean  bool
	Reason Reason
	// Tracked: the review reported findings; false when its verdict alone
	// decided.
	Tracked bool
	// Ratchet: the severity ratchet applied (iteration ≥ RatchetAfter).
	Ratchet bool
	// Threshold is the least severe finding that kept the cycle going at
	// this review: BlockSeverity, or blocker under the ratchet.
	Threshold domain.Severity
	// Blocking lists the open findings at or above Threshold.
	Blocking []string
	// NeedsHuman: the cycle is going round; no further review should run
	// until a human decides (Resume). Going lists the findings going round.
	NeedsHuman bool
	Going      []string
	// BudgetExceeded is set when the plan's review budget is spent: no new
	// review should run.
	BudgetExceeded *BudgetOverrun
}

// Assess applies the rules of docs/ledger.md#the-rules to the review at iteration, whose
// answer has been recorded in l (Record, then Fold), with verdict and the
// plan's review costs so far, this review's included. A review that
// reported no findings is judged by its verdict alone, as before the ledger.
func Assess(l Ledger, iteration int, verdict domain.Verdict, s Settings, spentUSD float64) Assessment {
	s = s.withDefaults()
	a := Assessment{Threshold: s.BlockSeverity, BudgetExceeded: CheckBudget(s, spentUSD, 0)}
	r, tracked := l.review(iteration)
	if !tracked {
		a.Clean, a.Reason = verdict == domain.Pass, verdictReason(verdict)
		return a
	}
	a.Tracked, a.Ratchet = true, iteration >= s.RatchetAfter
	if a.Ratchet {
		a.Threshold = domain.Blocker
	}
	a.Blocking = blocking(r.open, a.Threshold)
	switch {
	case len(a.Blocking) > 0:
		a.Reason = ReasonOpenFindings
	case verdict == domain.Pass:
		a.Clean, a.Reason = true, ReasonPass
	case a.Ratchet && verdict != "":
		a.Clean, a.Reason = true, ReasonRatchet
	default:
		a.Reason = verdictReason(verdict)
	}
	if going, why := l.goingRound(iteration, a.Threshold); len(going) > 0 {
		a.NeedsHuman, a.Going, a.Reason = true, going, why
	}
	return a
}

func verdictReason(v domain.Verdict) Reason {
	switch v {
	case domain.Pass:
		return ReasonPass
	case domain.Fail:
		return ReasonFail
	}
	return ReasonNoVerdict
}

func blocking(open []ref, threshold domain.Severity) []string {
	var ids []string
	for _, r := range open {
		if atOrAbove(r.severity, threshold) {
			ids = append(ids, r.id)
		}
	}
	return ids
}

// goingRound returns the findings going round at the review at iteration,
// and why: the open count at or above threshold has not fallen below its
// level StallWindow reviews earlier, or a finding open at or above threshold
// was reopened ReopenLimit times. Only reviews since the last resume count.
func (l Ledger) goingRound(iteration int, threshold domain.Severity) ([]string, Reason) {
	var rs []review
	for _, r := range l.reviews[l.since:] {
		if r.iteration <= iteration {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil, ""
	}
	now := blocking(rs[len(rs)-1].open, threshold)
	if stalled(rs, threshold) {
		return now, ReasonStalled
	}
	var going []string
	for _, id := range now {
		if f, _ := l.Find(id); f.Reopened >= ReopenLimit {
			going = append(going, id)
		}
	}
	return going, ReasonReopened
}

func stalled(rs []review, threshold domain.Severity) bool {
	if len(rs) <= StallWindow {
		return false
	}
	rs = rs[len(rs)-StallWindow-1:]
	base := len(blocking(rs[0].open, threshold))
	return base > 0 && !slices.ContainsFunc(rs[1:], func(r review) bool {
		return len(blocking(r.open, threshold)) < base
	})
}

// BudgetOverrun says which budget is spent, with the figures; only the
// fields of the exceeded budget(s) are set.
type BudgetOverrun struct {
	SpentUSD, BudgetUSD float64
	Took, ReviewBudget  time.Duration
	// The plan's tokens and review time.
	SpentTokens, BudgetTokens int64
	SpentTime, BudgetTime     time.Duration
	// Task is the task whose own budgets are spent ("" when none is).
	Task                              string
	TaskSpentUSD, TaskBudgetUSD       float64
	TaskSpentTokens, TaskBudgetTokens int64
	TaskSpentTime, TaskBudgetTime     time.Duration
}

// String describes the overrun for a message.
func (b BudgetOverrun) String() string {
	var parts []string
	if b.BudgetUSD > 0 {
		parts = append(parts, fmt.Sprintf("reviews have cost $%.2f of the plan's budget of $%.2f", b.SpentUSD, b.BudgetUSD))
	}
	if b.BudgetTokens > 0 {
		parts = append(parts, fmt.Sprintf("reviews have used %d tokens of the plan's budget of %d", b.SpentTokens, b.BudgetTokens))
	}
	if b.BudgetTime > 0 {
		parts = append(parts, fmt.Sprintf("reviews have run %s of the plan's budget of %s", b.SpentTime, b.BudgetTime))
	}
	if b.TaskBudgetUSD > 0 {
		parts = append(parts, fmt.Sprintf("task %s's reviews have cost $%.2f of its budget of $%.2f", b.Task, b.TaskSpentUSD, b.TaskBudgetUSD))
	}
	if b.TaskBudgetTokens > 0 {
		parts = append(parts, fmt.Sprintf("task %s's reviews have used %d tokens of its budget of %d", b.Task, b.TaskSpentTokens, b.TaskBudgetTokens))
	}
	if b.TaskBudgetTime > 0 {
		parts = append(parts, fmt.Sprintf("task %s's reviews have run %s of its budget of %s", b.Task, b.TaskSpentTime, b.TaskBudgetTime))
	}
	if b.ReviewBudget > 0 {
		parts = append(parts, fmt.Sprintf("the last review took %s, its budget is %s", b.Took, b.ReviewBudget))
	}
	return strings.Join(parts, "; ")
}

// Keys names the settings whose budget is spent, for the hint that says
// which one to raise.
func (b BudgetOverrun) Keys() []string {
	var keys []string
	for _, k := range []struct {
		name string
		on   bool
	}{{"budget_usd", b.BudgetUSD > 0}, {"budget_tokens", b.BudgetTokens > 0}, {"budget_time", b.BudgetTime > 0},
		{"task_budget_usd", b.TaskBudgetUSD > 0}, {"task_budget_tokens", b.TaskBudgetTokens > 0},
		{"task_budget_time", b.TaskBudgetTime > 0}, {"review_budget", b.ReviewBudget > 0}} {
		if k.on {
			keys = append(keys, k.name)
		}
	}
	return keys
}

// CheckBudget says whether another review may run, judged on the plan's
// cost and the last review's run time alone (CheckBudgets with no tokens,
// review time or task).
func CheckBudget(s Settings, spentUSD float64, took time.Duration) *BudgetOverrun {
	s.BudgetTokens, s.BudgetTime, s.TaskBudgetUSD, s.TaskBudgetTokens, s.TaskBudgetTime = 0, 0, 0, 0, 0
	return CheckBudgets(s, Spent{USD: spentUSD}, "", Spent{}, took)
}

// CheckBudgets says whether another review may run: not once the plan's
// reviews (plan) or the task's (task, of the review to run; "" for a
// review of no task) have used a budget or more, nor when the last review
// took review_budget or longer (took; 0 when there was none). A budget is
// checked before a review, so the review that crosses it is the only
// overshoot. It returns nil when every budget holds.
func CheckBudgets(s Settings, plan Spent, task string, spent Spent, took time.Duration) *BudgetOverrun {
	var b BudgetOverrun
	if s.BudgetUSD > 0 && plan.USD >= s.BudgetUSD {
		b.SpentUSD, b.BudgetUSD = plan.USD, s.BudgetUSD
	}
	if s.BudgetTokens > 0 && plan.Tokens >= s.BudgetTokens {
		b.SpentTokens, b.BudgetTokens = plan.Tokens, s.BudgetTokens
	}
	if s.BudgetTime > 0 && plan.Time >= s.BudgetTime {
		b.SpentTime, b.BudgetTime = plan.Time, s.BudgetTime
	}
	if task != "" {
		if s.TaskBudgetUSD > 0 && spent.USD >= s.TaskBudgetUSD {
			b.Task, b.TaskSpentUSD, b.TaskBudgetUSD = task, spent.USD, s.TaskBudgetUSD
		}
		if s.TaskBudgetTokens > 0 && spent.Tokens >= s.TaskBudgetTokens {
			b.Task, b.TaskSpentTokens, b.TaskBudgetTokens = task, spent.Tokens, s.TaskBudgetTokens
		}
		if s.TaskBudgetTime > 0 && spent.Time >= s.TaskBudgetTime {
			b.Task, b.TaskSpentTime, b.TaskBudgetTime = task, spent.Time, s.TaskBudgetTime
		}
	}
	if s.ReviewBudget > 0 && took >= s.ReviewBudget {
		b.Took, b.ReviewBudget = took, s.ReviewBudget
	}
	if b == (BudgetOverrun{}) {
		return nil
	}
	return &b
}

// ReviewTimeout returns how long the next review may run: the reviewer's
// timeout, or review_budget when that is shorter.
func ReviewTimeout(s Settings, reviewerTimeout time.Duration) time.Duration {
	if s.ReviewBudget > 0 && s.ReviewBudget < reviewerTimeout {
		return s.ReviewBudget
	}
	return reviewerTimeout
}

// Trend returns the number of open findings, of every severity, after each
// review that reported findings, in order: what the user watches fall.
// Declined findings are not open. (The rules count only findings at or
// above the threshold; the trend shows them all, so a reviewer's nits are
// visible too.)
func Trend(l Ledger) []int {
	n := make([]int, len(l.reviews))
	for i, r := range l.reviews {
		n[i] = len(r.open)
	}
	return n
}

// TrendString writes Trend as "7 → 3 → 1"; "" before any review.
func TrendString(l Ledger) string {
	t := Trend(l)
	s := make([]string, len(t))
	for i, n := range t {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " → ")
}
