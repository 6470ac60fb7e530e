package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/ledger/ledgerlog"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/state"
)

// readLedger folds the plan's event log for the review ledger (docs/ledger.md);
// a torn line is skipped, as everywhere.
func readLedger(p *project.Plan) (*ledgerlog.Reader, error) {
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
func ledgerStatusOf(p *project.Plan, st *state.State) ledgerStatus {
	ls := ledgerStatus{NeedsHuman: st != nil && st.NeedsHuman}
	if cfg, err := config.Load(p.Repo.TaskieDir()); err == nil {
		ls.BudgetUSD = cfg.BudgetUSD
	}
	r, err := readLedger(p)
	if err != nil {
		return ls
	}
	ls.SpentUSD, ls.Reviews = r.SpentUSD, r.Reviews
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
}
