package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history/ledgerlog"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

// readLedger folds the plan's event log for the review ledger (docs/ledger.md);
// a torn line is skipped, as everywhere.
func readLedger(p *store.Plan) (*ledgerlog.Reader, error) {
	return ledgerlog.Read(func(fn func(events.Event), warn func(string)) error { return p.Store.Scan(p.ID, fn, warn) }, nil)
}

// ledgerStatus is what `taskie status` shows of the review ledger: the
// current cycle's trend and what the plan's reviews cost (docs/ledger.md).
type ledgerStatus struct {
	// NeedsHuman: the review cycle stopped for a human (taskie resume).
	NeedsHuman bool `json:"needs_human"`
	// Findings is the current cycle's ledger; nil when it has none.
	Findings *findingsStatus `json:"findings,omitempty"`
	// SpentUSD is what the plan's reviews cost; BudgetUSD its budget (0:
	// none).
	SpentUSD  float64 `json:"spent_usd,omitempty"`
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// Reviews counts the plan's finished reviews.
	Reviews int `json:"reviews,omitempty"`
	// The tokens and run time of the plan's reviews, and their budgets
	// (0: none); times in milliseconds.
	SpentTokens  int64 `json:"spent_tokens,omitempty"`
	BudgetTokens int64 `json:"budget_tokens,omitempty"`
	SpentTimeMS  int64 `json:"spent_time_ms,omitempty"`
	BudgetTimeMS int64 `json:"budget_time_ms,omitempty"`
	// Task is what the current task's reviews used, shown when a task
	// budget is set.
	Task *taskBudgetStatus `json:"task_budget,omitempty"`
}

// taskBudgetStatus is one task's review spending against its budgets.
type taskBudgetStatus struct {
	Task         string  `json:"task"`
	SpentUSD     float64 `json:"spent_usd"`
	BudgetUSD    float64 `json:"budget_usd,omitempty"`
	SpentTokens  int64   `json:"spent_tokens"`
	BudgetTokens int64   `json:"budget_tokens,omitempty"`
	SpentTimeMS  int64   `json:"spent_time_ms"`
	BudgetTimeMS int64   `json:"budget_time_ms,omitempty"`
}

// findingsStatus sums up the current cycle's ledger.
type findingsStatus struct {
	Series string `json:"cycle"`
	// Trend is the number of open findings after each review.
	Trend    []int `json:"trend"`
	Open     int   `json:"open"`
	Fixed    int   `json:"fixed"`
	Declined int   `json:"declined"`
}

// ledgerStatusOf reads the ledger part of the status; a log or config that
// cannot be read leaves the figures out rather than failing the status.
func ledgerStatusOf(p *store.Plan, st *state.State) ledgerStatus {
	ls := ledgerStatus{NeedsHuman: st != nil && st.NeedsHuman}
	var bs ledger.Settings
	if cfg, err := config.Load(p.Repo.TaskieDir()); err == nil {
		bs = cfg.Ledger()
		ls.BudgetUSD, ls.BudgetTokens, ls.BudgetTimeMS = bs.BudgetUSD, bs.BudgetTokens, bs.BudgetTime.Milliseconds()
	}
	r, err := readLedger(p)
	if err != nil {
		return ls
	}
	ls.SpentUSD, ls.Reviews = r.SpentUSD, r.Reviews
	ls.SpentTokens, ls.SpentTimeMS = r.Spent.Tokens, r.Spent.Time.Milliseconds()
	if task := currentTask(st); task != "" && (bs.TaskBudgetUSD > 0 || bs.TaskBudgetTokens > 0 || bs.TaskBudgetTime > 0) {
		t := r.ByTask[task]
		ls.Task = &taskBudgetStatus{Task: task, SpentUSD: t.USD, BudgetUSD: bs.TaskBudgetUSD, SpentTokens: t.Tokens,
			BudgetTokens: bs.TaskBudgetTokens, SpentTimeMS: t.Time.Milliseconds(), BudgetTimeMS: bs.TaskBudgetTime.Milliseconds()}
	}
	sr, l, ok := r.Current(st)
	if !ok || len(l.Findings()) == 0 {
		return ls
	}
	fs := &findingsStatus{Series: sr.String(), Trend: ledger.Trend(l)}
	for _, f := range l.Findings() {
		switch f.Status {
		case ledger.Open:
			fs.Open++
		case ledger.Fixed:
			fs.Fixed++
		case ledger.Declined:
			fs.Declined++
		}
	}
	ls.Findings = fs
	return ls
}

// currentTask is the plan's current task as the log names it; "" for none.
func currentTask(st *state.State) string {
	if st == nil || st.Task() == 0 {
		return ""
	}
	return st.Task().String()
}

// msText is a run time for the status lines, to the second.
func msText(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// print writes the ledger lines of `taskie status`.
func (ls ledgerStatus) print(w io.Writer) {
	if f := ls.Findings; f != nil {
		trend := make([]string, len(f.Trend))
		for i, n := range f.Trend {
			trend[i] = fmt.Sprint(n)
		}
		fmt.Fprintf(w, "findings: %s open (%s; now %d open, %d fixed, %d declined; `taskie findings`)\n",
			strings.Join(trend, " → "), f.Series, f.Open, f.Fixed, f.Declined)
	}
	if ls.NeedsHuman {
		fmt.Fprintln(w, "human:   the review cycle does not converge; decide, then `taskie resume`")
	}
	ls.printBudgets(w)
	if t := ls.Task; t != nil {
		fmt.Fprintf(w, "task:    %s\n", t.line())
	}
}

// printBudgets writes what the plan's reviews spent against its budgets.
func (ls ledgerStatus) printBudgets(w io.Writer) {
	if ls.Reviews > 0 || ls.BudgetUSD > 0 {
		spent := fmt.Sprintf("$%.2f on %d review(s)", ls.SpentUSD, ls.Reviews)
		if ls.BudgetUSD > 0 {
			spent += fmt.Sprintf(", budget $%.2f", ls.BudgetUSD)
			if ls.SpentUSD >= ls.BudgetUSD {
				spent += " (spent: no further review)"
			}
		}
		fmt.Fprintf(w, "spent:   %s\n", spent)
	}
	if ls.SpentTokens > 0 || ls.BudgetTokens > 0 {
		line := fmt.Sprintf("%d used by the plan's reviews", ls.SpentTokens)
		if ls.BudgetTokens > 0 {
			line += fmt.Sprintf(", budget %d", ls.BudgetTokens)
			if ls.SpentTokens >= ls.BudgetTokens {
				line += " (spent: no further review)"
			}
		}
		fmt.Fprintf(w, "tokens:  %s\n", line)
	}
	if ls.BudgetTimeMS > 0 {
		line := fmt.Sprintf("%s of review, budget %s", msText(ls.SpentTimeMS), msText(ls.BudgetTimeMS))
		if ls.SpentTimeMS >= ls.BudgetTimeMS {
			line += " (spent: no further review)"
		}
		fmt.Fprintf(w, "time:    %s\n", line)
	}
}

// line is what the current task's reviews spent against its budgets.
func (t *taskBudgetStatus) line() string {
	var parts []string
	spent := false
	if t.BudgetUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f of $%.2f", t.SpentUSD, t.BudgetUSD))
		spent = spent || t.SpentUSD >= t.BudgetUSD
	}
	if t.BudgetTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d tokens", t.SpentTokens, t.BudgetTokens))
		spent = spent || t.SpentTokens >= t.BudgetTokens
	}
	if t.BudgetTimeMS > 0 {
		parts = append(parts, fmt.Sprintf("%s of %s of review", msText(t.SpentTimeMS), msText(t.BudgetTimeMS)))
		spent = spent || t.SpentTimeMS >= t.BudgetTimeMS
	}
	line := fmt.Sprintf("task %s's reviews used %s", t.Task, strings.Join(parts, ", "))
	if spent {
		line += " (spent: no further review of this task)"
	}
	return line
}
