package hook

import (
	"bytes"
	"embed"
	"fmt"
	"sync"
	"text/template"

	"github.com/taskie-dev/taskie/internal/domain"
)

//go:embed messages/*.tmpl
var messageFS embed.FS

// messages are parsed on first use: most stops never block.
var messages = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(messageFS, "messages/*.tmpl"))
})

// BlockData fills a block message template.
type BlockData struct {
	Plan                            string
	Task                            domain.TaskID // 0: none (plan-wide reviews)
	Review                          domain.Phase
	Model                           domain.Model
	Verdict                         domain.Verdict // "": no readable verdict
	Iteration, NextIteration, Clean int
	ReviewFile, PostFile, StateFile string // paths relative to the project root
	PlanFlag                        string // " --plan ID" when the project has several plans
	Reminder                        bool   // the block repeats one this session never received
	// Judged says how the review counted when the review ledger, not the
	// verdict alone, decided it (a PASS with a blocker open, the ratchet).
	Judged string
	// Findings lists the cycle's open findings, one a line with its id;
	// "" when the reviewer tracks none.
	Findings string
	// Budget says the plan's review budget is spent: no review follows.
	Budget string
	// CTO says this review's failure put the task in cto_intervention:
	// the next stop runs the CTO review, not another code review.
	CTO bool
}

// Outcome says how the review went, in words.
func (d BlockData) Outcome() string {
	if d.Reminder {
		return "its post-review is still owed (this repeats a block this session did not receive)"
	}
	if d.Judged != "" {
		return d.Judged
	}
	if d.Verdict == domain.Pass {
		return fmt.Sprintf("PASS: passed; one more clean review is needed (%d of %d clean in a row)", d.Clean, domain.CleanToPass)
	}
	if d.Verdict == domain.Fail {
		return "FAIL: the reviewer found problems to fix"
	}
	return "no readable verdict (counted as not clean)"
}

// Escape is the way out, printed at the end of every block.
func (d BlockData) Escape() string {
	return fmt.Sprintf("This is an automated, independent review loop. To stop it: `taskie pause%s` (or set \"next_phase\": null in %s).", d.PlanFlag, d.StateFile)
}

// BlockMessage renders the block message (docs/hook.md) for a review.
func BlockMessage(d BlockData) string {
	var b bytes.Buffer
	if err := messages().ExecuteTemplate(&b, string(d.Review)+".tmpl", d); err != nil {
		return fmt.Sprintf("taskie: %s %d: %s. Read %s, address it, write %s, run `taskie done %s`.",
			d.Review, d.Iteration, d.Outcome(), d.ReviewFile, d.PostFile, domain.PostReview(d.Review))
	}
	return b.String()
}
