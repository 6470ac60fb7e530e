// Package ledger keeps the review ledger of one review cycle (docs/ledger.md):
// the findings reviewers report, numbered F1, F2, … for the cycle, what the
// post-review did with each, and the rules that decide from them whether a
// review is clean, whether the cycle is going round in circles, and whether
// the budget allows another review.
//
// The package is pure: no I/O, no clock. A Ledger is folded from Events
// (Fold); Record, Fix, Decline and Resume return the events to append, and
// replaying the appended events through Fold rebuilds the same Ledger.
//
// A review, in order: CheckBudget and ReviewTimeout before it runs;
// ForReviewer in its prompt and SchemaJSON as its schema; DecodeAnswer,
// Record (append and fold the events) and Assess after it. The post-review
// calls Fix and Decline; a human's decision after Assessment.NeedsHuman is
// recorded with Resume. A ledger holds one cycle: a new cycle (phase_iteration
// back to 0) starts from an empty Ledger, and a replay folds only that
// cycle's events.
package ledger

import (
	"slices"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
)

// Kind is an event kind; the values are the event names written to the
// event log.
type Kind string

// Event kinds.
const (
	// KindOpened records a new finding; its ID is the ledger's (F1, F2, …).
	KindOpened Kind = events.FindingOpened
	// KindFixed records a finding fixed: by the post-review (unconfirmed)
	// or by a reviewer reporting it fixed (Actor ActorReviewer).
	KindFixed Kind = events.FindingFixed
	// KindDeclined records the post-review declining a finding; Note is why.
	KindDeclined Kind = events.FindingDeclined
	// KindReopened records a reviewer reporting open a finding that was
	// fixed or declined.
	KindReopened Kind = events.FindingReopened
	// KindSeverity records a reviewer reporting an open finding with
	// another severity, From the old one to Severity. Raising and lowering
	// are both recorded: the rules judge a finding by its latest severity.
	KindSeverity Kind = events.FindingSeverity
	// KindReviewed closes one review's events: the review at Iteration,
	// with Verdict, reported findings. A review without findings has none.
	KindReviewed Kind = events.FindingsReviewed
	// KindResumed records a human's decision after the cycle asked for one;
	// non-convergence is counted afresh from there.
	KindResumed Kind = events.FindingsResumed
)

// Actors. Fold treats every actor but ActorReviewer as the post-review.
const (
	ActorReviewer   = "reviewer"
	ActorPostReview = "post-review"
	ActorHuman      = "human"
)

// Event is one change to the ledger.
type Event struct {
	Kind      Kind            `json:"kind"`
	ID        string          `json:"id,omitempty"`
	Iteration int             `json:"iteration"`
	Severity  domain.Severity `json:"severity,omitempty"`
	Title     string          `json:"title,omitempty"`
	File      string          `json:"file,omitempty"`
	Line      int             `json:"line,omitempty"`
	Note      string          `json:"note,omitempty"`
	Actor     string          `json:"actor,omitempty"`
	// Verdict is the review's verdict, on KindReviewed only.
	Verdict domain.Verdict `json:"verdict,omitempty"`
	// From is the severity before the change, on KindSeverity only.
	From domain.Severity `json:"from,omitempty"`
}

// Finding is one finding of the cycle as the ledger knows it.
type Finding struct {
	ID       string          `json:"id"`
	Severity domain.Severity `json:"severity"`
	Title    string          `json:"title"`
	File     string          `json:"file,omitempty"`
	Line     int             `json:"line,omitempty"`
	Status   Status          `json:"status"`
	// Opened is the iteration of the review that first reported it.
	Opened int `json:"opened"`
	// Note is the fix note, the reason it was declined, or the reviewer's
	// note on reopening — whatever came with the last change.
	Note string `json:"note,omitempty"`
	// By is the actor of the last change.
	By string `json:"by,omitempty"`
	// Reopened counts the times a reviewer reported it open again after it
	// was fixed or declined, since the last resume.
	Reopened int `json:"reopened,omitempty"`
}

// Confirmed reports whether a fixed finding was reported fixed by a
// reviewer, not only marked fixed by the post-review.
func (f Finding) Confirmed() bool { return f.Status == Fixed && f.By == ActorReviewer }

// Ledger is the state of one review cycle's findings. The zero value is an
// empty ledger. A Ledger is a value: Fold returns a new one and never
// changes its argument.
type Ledger struct {
	findings []Finding
	reviews  []review
	since    int // reviews[since:] count for non-convergence (after a resume)
}

// review is the snapshot taken when a review's events are folded.
type review struct {
	iteration int
	verdict   domain.Verdict
	open      []ref // findings open after the review, in id order
}

type ref struct {
	id       string
	severity domain.Severity
}

// Fold applies e to l and returns the result; replaying a cycle's events
// from an empty Ledger rebuilds it. Events that do not apply (an unknown
// kind or id, an id opened twice) leave the ledger unchanged, so a damaged
// log never stops a replay.
func Fold(l Ledger, e Event) Ledger {
	l = l.clone()
	if e.Kind == KindReviewed {
		l.reviews = append(l.reviews, review{iteration: e.Iteration, verdict: e.Verdict, open: l.openRefs()})
		return l
	}
	if e.Kind == KindResumed {
		l.since = len(l.reviews)
		for i := range l.findings {
			l.findings[i].Reopened = 0
		}
		return l
	}
	i := l.index(e.ID)
	if e.Kind == KindOpened {
		if i < 0 && e.ID != "" {
			l.findings = append(l.findings, newFinding(e))
		}
		return l
	}
	if i >= 0 {
		l.findings[i] = changed(l.findings[i], e)
	}
	return l
}

func newFinding(e Event) Finding {
	return Finding{ID: e.ID, Severity: severityOf(e.Severity), Title: e.Title, File: e.File, Line: e.Line,
		Status: Open, Opened: e.Iteration, Note: e.Note, By: e.Actor}
}

// changed applies a status or severity event to one finding.
func changed(f Finding, e Event) Finding {
	switch e.Kind {
	case KindSeverity:
		// Only the severity: the note and actor of the last status change
		// stay.
		if e.Severity != "" {
			f.Severity = severityOf(e.Severity)
		}
		return f
	case KindFixed:
		f.Status = Fixed
	case KindDeclined:
		f.Status = Declined
	case KindReopened:
		f.Status = Open
		f.Reopened++
		if e.Severity != "" {
			f.Severity = severityOf(e.Severity)
		}
	default:
		return f
	}
	f.Note, f.By = e.Note, e.Actor
	return f
}

func (l Ledger) clone() Ledger {
	l.findings = slices.Clone(l.findings)
	l.reviews = slices.Clone(l.reviews) // each review's refs are never changed
	return l
}

// Findings returns every finding of the cycle, in id order.
func (l Ledger) Findings() []Finding { return slices.Clone(l.findings) }

// Find returns the finding with id ("F3", "f3" and "3" alike).
func (l Ledger) Find(id string) (Finding, bool) {
	if i := l.index(canonicalID(id)); i >= 0 {
		return l.findings[i], true
	}
	return Finding{}, false
}

// Iteration returns the iteration of the last review that reported
// findings; 0 when none has.
func (l Ledger) Iteration() int {
	if len(l.reviews) == 0 {
		return 0
	}
	return l.reviews[len(l.reviews)-1].iteration
}

func (l Ledger) index(id string) int {
	return slices.IndexFunc(l.findings, func(f Finding) bool { return f.ID == id })
}

func (l Ledger) openRefs() []ref {
	var open []ref
	for _, f := range l.findings {
		if f.Status == Open {
			open = append(open, ref{f.ID, f.Severity})
		}
	}
	return open
}

// review returns the snapshot of the review at iteration; the last one if
// the iteration was recorded twice.
func (l Ledger) review(iteration int) (review, bool) {
	for i := len(l.reviews) - 1; i >= 0; i-- {
		if l.reviews[i].iteration == iteration {
			return l.reviews[i], true
		}
	}
	return review{}, false
}

// nextID returns the id for the next new finding: one above the highest.
func (l Ledger) nextID() string {
	n := 0
	for _, f := range l.findings {
		if k, err := strconv.Atoi(strings.TrimPrefix(f.ID, "F")); err == nil {
			n = max(n, k)
		}
	}
	return "F" + strconv.Itoa(n+1)
}

// ids lists the ids of the findings, for messages.
func (l Ledger) ids() string {
	ids := make([]string, len(l.findings))
	for i, f := range l.findings {
		ids[i] = f.ID
	}
	return strings.Join(ids, ", ")
}
