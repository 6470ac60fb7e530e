package ledger

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the post-review actions, for the CLI's exit codes.
var (
	// ErrUnknownFinding: the id is not in this cycle's ledger.
	ErrUnknownFinding = errors.New("not in this review cycle's ledger")
	// ErrNoReason: declining a finding needs a reason.
	ErrNoReason = errors.New("declining needs a reason (--why)")
	// ErrAlreadyFixed: the finding is fixed already.
	ErrAlreadyFixed = errors.New("already fixed")
)

// Record turns the answer of the review at iteration into the events to
// append, in order; fold them to get the ledger after the review. An answer
// without findings (nil) gives no events: its verdict alone decides.
//
// For each reported finding:
//   - id "" is a new finding and gets the next id — unless a known finding
//     has the same title and file, in which case it is a report on that one
//     (a reviewer re-finding what is on record, not a new finding);
//   - an id the ledger does not know is a new finding too, with a note;
//   - "fixed" closes an open or declined finding, and confirms one the
//     post-review marked fixed;
//   - "open" on a fixed or declined finding reopens it, at the reported
//     severity;
//   - "open" on an open finding with another severity changes its
//     severity (KindSeverity), up or down: the reviewer's latest judgement
//     is what the rules weigh. A severity left empty (or a word we do not
//     know) on a finding on record keeps the recorded one;
//   - a new finding reported already fixed, and a second report of the same
//     finding in one answer, are ignored.
//
// Findings the answer does not mention stay as they are. The last event is
// always KindReviewed, which snapshots the open findings for the rules.
func Record(l Ledger, iteration int, answer Answer) []Event {
	if answer.Findings == nil {
		return nil
	}
	r := recorder{l: l, iteration: iteration, seen: map[string]bool{}}
	for _, f := range answer.Findings {
		r.report(normalise(f), knownSeverity(f.Severity))
	}
	r.emit(Event{Kind: KindReviewed, Iteration: iteration, Verdict: answer.Verdict, Actor: ActorReviewer})
	return r.events
}

// recorder folds as it goes, so each report sees the ones before it.
type recorder struct {
	l         Ledger
	iteration int
	seen      map[string]bool
	events    []Event
}

func (r *recorder) emit(e Event) {
	r.events = append(r.events, e)
	r.l = Fold(r.l, e)
}

// report records one reported finding; rated is false when the reviewer
// gave no severity we know (normalise made it major).
func (r *recorder) report(f ReportedFinding, rated bool) {
	note := ""
	if f.ID != "" {
		if _, ok := r.l.Find(f.ID); !ok {
			note = fmt.Sprintf("reviewer's id %q is unknown; recorded as new", f.ID)
			f.ID = ""
		}
	}
	if f.ID == "" {
		f.ID = r.match(f)
	}
	if f.ID == "" {
		if f.Status == Open {
			r.open(f, note)
		}
		return
	}
	if !r.seen[f.ID] {
		r.seen[f.ID] = true
		r.update(f, rated)
	}
}

// match returns the id of a known finding with f's title (ignoring case)
// and file, or "".
func (r *recorder) match(f ReportedFinding) string {
	if f.Title == "" {
		return ""
	}
	for _, k := range r.l.findings {
		if strings.EqualFold(k.Title, f.Title) && k.File == f.File {
			return k.ID
		}
	}
	return ""
}

func (r *recorder) open(f ReportedFinding, note string) {
	id := r.l.nextID()
	r.seen[id] = true
	r.emit(Event{Kind: KindOpened, ID: id, Iteration: r.iteration, Severity: f.Severity,
		Title: f.Title, File: f.File, Line: f.Line, Note: note, Actor: ActorReviewer})
}

// update turns a report on a known finding into an event, if it changes
// anything.
func (r *recorder) update(f ReportedFinding, rated bool) {
	k, _ := r.l.Find(f.ID)
	if !rated {
		f.Severity = k.Severity
	}
	e := Event{ID: k.ID, Iteration: r.iteration, Actor: ActorReviewer}
	switch {
	case f.Status == Fixed && (k.Status != Fixed || !k.Confirmed()):
		e.Kind = KindFixed
		if k.Status == Fixed {
			e.Note = k.Note // a confirmation keeps the post-review's note
		}
	case f.Status == Open && k.Status != Open:
		e.Kind, e.Severity = KindReopened, f.Severity
	case f.Status == Open && f.Severity != k.Severity:
		e.Kind, e.Severity, e.From = KindSeverity, f.Severity, k.Severity
	default:
		return
	}
	r.emit(e)
}

// Fix returns the event recording that the post-review fixed finding id,
// with an optional note.
func Fix(l Ledger, id, note string) (Event, error) {
	f, err := find(l, id)
	if err != nil {
		return Event{}, err
	}
	if f.Status == Fixed {
		return Event{}, fmt.Errorf("finding %s: %w", f.ID, ErrAlreadyFixed)
	}
	return Event{Kind: KindFixed, ID: f.ID, Iteration: l.Iteration(), Note: oneLine(note), Actor: ActorPostReview}, nil
}

// Decline returns the event recording that the post-review declined finding
// id for the reason why. A declined finding stays in front of the next
// reviewer with its reason; declining it again replaces the reason.
func Decline(l Ledger, id, why string) (Event, error) {
	f, err := find(l, id)
	if err != nil {
		return Event{}, err
	}
	if why = oneLine(why); why == "" {
		return Event{}, fmt.Errorf("finding %s: %w", f.ID, ErrNoReason)
	}
	if f.Status == Fixed {
		return Event{}, fmt.Errorf("finding %s: %w; nothing to decline", f.ID, ErrAlreadyFixed)
	}
	return Event{Kind: KindDeclined, ID: f.ID, Iteration: l.Iteration(), Note: why, Actor: ActorPostReview}, nil
}

// Resume returns the event recording a human's decision after the cycle
// asked for one (Assessment.NeedsHuman): from there, non-convergence is
// counted afresh.
func Resume(l Ledger, note string) Event {
	return Event{Kind: KindResumed, Iteration: l.Iteration(), Note: oneLine(note), Actor: ActorHuman}
}

func find(l Ledger, id string) (Finding, error) {
	if f, ok := l.Find(id); ok {
		return f, nil
	}
	known := "it has no findings"
	if len(l.findings) > 0 {
		known = "known: " + l.ids()
	}
	return Finding{}, fmt.Errorf("finding %q: %w (%s)", strings.TrimSpace(id), ErrUnknownFinding, known)
}
