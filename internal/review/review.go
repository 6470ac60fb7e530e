// Package review runs an independent reviewer (claude or codex) on a plan,
// its tasks or its code, and returns the reviewer's verdict (docs/hook.md#the-reviewer).
package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// Request describes one review run. The kinds of review are the four
// review phases (domain.PlanReview, TasksReview, CodeReview, AllCodeReview).
type Request struct {
	Kind       domain.Phase  // the review phase
	PlanID     string        // plan id
	Task       domain.TaskID // code-review: the task id
	Iteration  int           // 1-based review iteration
	Model      domain.Model  // model passed to the reviewer
	Root       string        // project root: the reviewer's working directory
	PlanDir    string        // absolute plan directory
	ReviewFile string        // absolute path of the review file the reviewer must write
	TaskFiles  []string      // task files named in tasks.md (base names), for tasks-review and all-code-review
	Timeout    time.Duration // 0 = domain.DefaultReviewerTimeout
	Tools      []string      // allowed tools for claude; nil = domain.DefaultAllowedTools
	Command    []string      // reviewer executable + leading args; nil = adapter default
	Effort     string        // codex: model_reasoning_effort ("high", "medium", …); "" = codex's default; claude ignores it
	// Findings lists the findings on record in this review cycle, to be
	// re-checked (ledger.ForReviewer); "" when there are none.
	Findings string

	// A CTO review (Kind CTOReview) reads the whole cycle: Cycle names its
	// review and post-review files (base names, in order), History the
	// ledger's history of each finding, Escalation why the task is in
	// cto_intervention. It writes no file: taskie writes the guidance.
	Cycle      []string
	History    string
	Escalation string

	// HoldLock, when set, is an open file whose open file description
	// holds the plan's review lock (a flock). The reviewer inherits it, so
	// the reviewer and every child that inherits the descriptor keep the
	// lock for as long as they live: a reviewer orphaned by a killed hook
	// can never be joined by a second one. The lock must be a flock(2)
	// (fsafe.Lock on unix), not an fcntl lock, which a child does not
	// inherit. Release it by closing the file: an explicit unlock (LOCK_UN)
	// frees the shared lock for the reviewer's leftovers too. Unix only:
	// Windows ignores it and kills the reviewer's tree with the hook
	// instead (see runProcess in proc_windows.go).
	HoldLock *os.File
	// Lease, when set, is told the reviewer's process group and deadline
	// as soon as the reviewer runs, for the holder of HoldLock to record
	// (WriteLease): a later stop ends the review from it if this process
	// dies.
	Lease func(Lease) `json:"-"`
}

// Usage is the tokens a reviewer reported: claude's "usage", codex's
// turn.completed events or its "tokens used" line. Zero when not reported.
type Usage struct {
	Input, Output, CacheRead, CacheCreation int64
}

// Total is every token counted, cached ones included.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheCreation }

// Result is a successful review.
type Result struct {
	Verdict domain.Verdict // domain.Pass or domain.Fail
	Text    string         // review text from the structured output
	// Findings are the reported findings (docs/ledger.md); nil when the answer
	// had no "findings", so that the verdict alone decides.
	Findings   []ledger.ReportedFinding
	CostUSD    float64      // claude: total_cost_usd
	Usage      Usage        // the tokens the reviewer reported using
	DurationMS int64        // claude: duration_ms; else measured wall time
	SessionID  string       // claude: session_id
	Model      domain.Model // the requested model
	WroteFile  bool         // true when taskie wrote ReviewFile itself from Text
	Raw        []byte       // the reviewer's raw stdout+stderr (for the failure log)
	// CTO is a CTO review's decision (Kind CTOReview); nil for a review.
	CTO *CTODecision
}

// Answer returns the review as the ledger reads it.
func (r Result) Answer() ledger.Answer {
	return ledger.Answer{Verdict: r.Verdict, Review: r.Text, Findings: r.Findings}
}

// Reviewer runs one review.
type Reviewer interface {
	Review(ctx context.Context, req Request) (Result, error)
}

var adapters = map[string]func() Reviewer{
	"claude": func() Reviewer { return claudeReviewer{} },
	"codex":  func() Reviewer { return codexReviewer{} },
}

// New returns the reviewer adapter called name; "" means claude.
func New(name string) (Reviewer, error) {
	if name == "" {
		name = "claude"
	}
	if mk, ok := adapters[name]; ok {
		return mk(), nil
	}
	return nil, fmt.Errorf("unknown reviewer %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the valid reviewer names, sorted.
func Names() []string {
	names := make([]string, 0, len(adapters))
	for n := range adapters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Failure kinds.
const (
	FailNotFound = "not-found" // reviewer executable missing
	FailExit     = "exit"      // reviewer could not start or exited non-zero
	FailTimeout  = "timeout"   // reviewer killed after the timeout
	FailOutput   = "output"    // no usable verdict in the output
	FailNoReview = "no-review" // neither a review file nor review text, or the file cannot be written
	FailEmpty    = "empty"     // the review file and the review text are both blank
)

// Failure is a failed review. Raw keeps the reviewer's output for the log.
type Failure struct {
	Kind string
	Msg  string
	Raw  []byte
}

func (f *Failure) Error() string {
	if f.Msg == "" {
		return "review failed: " + f.Kind
	}
	return f.Msg
}

func failf(kind string, raw []byte, format string, args ...any) *Failure {
	return &Failure{Kind: kind, Msg: fmt.Sprintf(format, args...), Raw: raw}
}

// normalize fills defaults and makes paths absolute against Root, so the
// prompt and the file checks agree on one path.
func normalize(req Request) Request {
	if req.Timeout <= 0 {
		req.Timeout = domain.DefaultReviewerTimeout
	}
	if req.Tools == nil {
		req.Tools = domain.DefaultAllowedTools()
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(req.Root, p)
	}
	req.PlanDir = abs(req.PlanDir)
	req.ReviewFile = abs(req.ReviewFile)
	return req
}

// check rejects requests that cannot produce a review.
func check(req Request) error {
	switch req.Kind {
	case domain.PlanReview, domain.TasksReview, domain.AllCodeReview:
	case domain.CodeReview:
		if req.Task == 0 {
			return fmt.Errorf("code-review needs a task id")
		}
	case CTOReview:
		if req.Task == 0 {
			return fmt.Errorf("a CTO review needs a task id")
		}
		if req.PlanDir == "" {
			return fmt.Errorf("%s: no plan directory given", req.Kind)
		}
		return nil // it writes no file
	default:
		return fmt.Errorf("unknown review kind %q", req.Kind)
	}
	if req.ReviewFile == "" {
		return fmt.Errorf("%s: no review file given", req.Kind)
	}
	if req.PlanDir == "" {
		return fmt.Errorf("%s: no plan directory given", req.Kind)
	}
	return nil
}
