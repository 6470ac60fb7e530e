// Package ledgerlog is the review ledger's form in a plan's event log
// (docs/ledger.md): ledger events as log events, and the fold of
// a log into the ledger of each review series' latest cycle, with what the
// plan's reviews cost and how long the last one took.
//
// A review series is a review kind and, for code-review, the task. Its
// cycle starts at its review of iteration 1: the reader starts that
// series' ledger afresh at every recorded REVIEW_FINISHED of iteration 1,
// and the hook writes the review's FINDING_* events after that event, in
// the same commit. Every ledger event carries its series (meta "review",
// the event's task). The package opens no file: callers stream the log
// into a Reader (store.Scan) and append the events ToLog returns.
package ledgerlog

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/state"
)

// NeedsHuman is the event the hook appends when a cycle stops to ask for a
// human (ledger.Assessment.NeedsHuman); the ledger does not fold it.
const NeedsHuman = events.FindingsNeedHuman

// Series names a review series: the review kind and, for code-review, the
// task. Each has one ledger per cycle.
type Series struct {
	Review domain.Phase
	Task   domain.TaskID // 0 for the plan-wide reviews
}

// SeriesOf returns the series of a review of task; the task counts for
// code-review only.
func SeriesOf(review domain.Phase, task domain.TaskID) Series {
	if review != domain.CodeReview {
		task = 0
	}
	return Series{Review: review, Task: task}
}

// String names the series for messages: "code-review of task 3".
func (s Series) String() string {
	if s.Task > 0 {
		return string(s.Review) + " of task " + s.Task.String()
	}
	return string(s.Review)
}

// Current returns the series whose cycle state s is in: the review next
// when a new cycle of it is due, else the review (or post-review) of the
// phase. ok is false outside every review cycle.
func Current(s *state.State) (Series, bool) {
	if s == nil {
		return Series{}, false
	}
	next, phase := s.Next(), s.Phase
	if domain.IsReview(next) && phase != next && domain.ReviewOf(phase) != next {
		return SeriesOf(next, s.Task()), true
	}
	if domain.IsReview(phase) {
		return SeriesOf(phase, s.Task()), true
	}
	if r := domain.ReviewOf(phase); r != "" {
		return SeriesOf(r, s.Task()), true
	}
	return Series{}, false
}

// ToLog writes ledger events of series as log events: the kind as the
// event, the ledger fields in meta (with the series' review), a readable
// reason for `taskie log`.
func ToLog(s Series, evs []ledger.Event) []events.Event {
	out := make([]events.Event, 0, len(evs))
	for _, e := range evs {
		meta := events.Meta(events.FindingMeta{Review: string(s.Review), Iteration: e.Iteration, ID: e.ID, Severity: string(e.Severity),
			Title: e.Title, File: e.File, Line: max(e.Line, 0), Note: e.Note, Verdict: string(e.Verdict), From: string(e.From)})
		out = append(out, events.Event{Task: s.Task.String(), Event: string(e.Kind), Actor: e.Actor, Reason: describe(s, e), Meta: meta})
	}
	return out
}

// describe is the event's reason: one readable line.
func describe(s Series, e ledger.Event) string {
	what := ""
	switch e.Kind {
	case ledger.KindOpened:
		what = fmt.Sprintf("%s (%s)", e.ID, e.Severity)
		if e.File != "" {
			what += " " + location(e.File, e.Line)
		}
		what += " — " + e.Title
	case ledger.KindFixed:
		what = e.ID + " fixed (" + e.Actor + ")"
	case ledger.KindDeclined:
		what = e.ID + " declined"
	case ledger.KindReopened:
		what = fmt.Sprintf("%s reported open again (%s)", e.ID, e.Severity)
	case ledger.KindSeverity:
		what = fmt.Sprintf("%s severity %s → %s", e.ID, e.From, e.Severity)
	case ledger.KindReviewed:
		what = fmt.Sprintf("review %d recorded (%s)", e.Iteration, e.Verdict)
	case ledger.KindResumed:
		what = "a human decided; non-convergence is counted afresh"
	}
	if e.Note != "" && e.Kind != ledger.KindOpened {
		what += ": " + e.Note
	}
	return string(s.Review) + ": " + what
}

func location(file string, line int) string {
	if line > 0 {
		return file + ":" + strconv.Itoa(line)
	}
	return file
}

// FromLog reads a ledger event back; ok is false when e is none.
func FromLog(e events.Event) (Series, ledger.Event, bool) {
	if !isLedgerKind(e.Event) {
		return Series{}, ledger.Event{}, false
	}
	m, err := events.MetaOf[events.FindingMeta](e)
	if err != nil || !domain.IsReview(domain.Phase(m.Review)) {
		return Series{}, ledger.Event{}, false
	}
	task, _ := domain.ParseTaskID(e.Task)
	return SeriesOf(domain.Phase(m.Review), task), ledger.Event{Kind: ledger.Kind(e.Event), ID: m.ID, Iteration: m.Iteration,
		Severity: domain.Severity(m.Severity), Title: m.Title, File: m.File, Line: m.Line, Note: m.Note, Actor: e.Actor,
		Verdict: domain.Verdict(m.Verdict), From: domain.Severity(m.From)}, true
}

func isLedgerKind(kind string) bool {
	switch ledger.Kind(kind) {
	case ledger.KindOpened, ledger.KindFixed, ledger.KindDeclined, ledger.KindReopened, ledger.KindSeverity, ledger.KindReviewed, ledger.KindResumed:
		return true
	}
	return false
}

// Reader folds a plan's log, event by event, in log order.
type Reader struct {
	cycles map[Series]ledger.Ledger
	// trails are the ledger events of each series' latest cycle, in order:
	// the history of each finding a CTO review reads.
	trails map[Series][]ledger.Event
	// SpentUSD is what the plan's reviews cost: the cost_usd of every
	// REVIEW_FINISHED, recorded or not (a review whose cycle moved on was
	// paid for too).
	SpentUSD float64
	// Reviews counts the REVIEW_FINISHED events.
	Reviews int
	// LastTook is how long the plan's last review ran, finished or failed;
	// 0 before any.
	LastTook time.Duration
	// Spent is what the plan's reviews used: cost and tokens of every
	// REVIEW_FINISHED, run time of every finished or failed review.
	Spent ledger.Spent
	// ByTask is the same per task ("" for reviews of no task).
	ByTask map[string]ledger.Spent
}

// spend adds what one review used to the plan's and its task's sums.
func (r *Reader) spend(task string, add ledger.Spent) {
	r.Spent.USD += add.USD
	r.Spent.Tokens += add.Tokens
	r.Spent.Time += add.Time
	if r.ByTask == nil {
		r.ByTask = map[string]ledger.Spent{}
	}
	t := r.ByTask[task]
	t.USD, t.Tokens, t.Time = t.USD+add.USD, t.Tokens+add.Tokens, t.Time+add.Time
	r.ByTask[task] = t
}

// Add folds one event.
func (r *Reader) Add(e events.Event) {
	switch e.Event {
	case events.ReviewFinished:
		r.reviewFinished(e)
	case events.ReviewFailed:
		m, _ := events.MetaOf[events.ReviewFailedMeta](e)
		r.LastTook = ms(m.TookMS)
		r.spend(e.Task, ledger.Spent{Time: r.LastTook})
	default:
		if s, le, ok := FromLog(e); ok {
			if r.cycles == nil {
				r.cycles = map[Series]ledger.Ledger{}
			}
			r.cycles[s] = ledger.Fold(r.cycles[s], le)
			if r.trails == nil {
				r.trails = map[Series][]ledger.Event{}
			}
			r.trails[s] = append(r.trails[s], le)
		}
	}
}

func (r *Reader) reviewFinished(e events.Event) {
	r.Reviews++
	m, _ := events.MetaOf[events.ReviewFinishedMeta](e)
	usd := max(m.CostUSD, 0)
	r.SpentUSD += usd
	r.LastTook = ms(m.Took())
	r.spend(e.Task, ledger.Spent{USD: usd, Tokens: m.Usage.Total(), Time: r.LastTook})
	if m.NotRecorded() || m.Iteration != 1 || !domain.IsReview(domain.Phase(m.Review)) {
		return
	}
	task, _ := domain.ParseTaskID(e.Task)
	delete(r.cycles, SeriesOf(domain.Phase(m.Review), task)) // its review 1: a new cycle
	delete(r.trails, SeriesOf(domain.Phase(m.Review), task))
}

// History is the history of each finding of the latest cycle of series s,
// one finding a paragraph in id order, each change on its own line: what
// a CTO review reads. "" when the cycle has no finding.
func (r *Reader) History(s Series) string {
	byID := map[string][]string{}
	var ids []string
	for _, e := range r.trails[s] {
		if e.ID == "" {
			continue
		}
		if _, ok := byID[e.ID]; !ok {
			ids = append(ids, e.ID)
		}
		line := describe(s, e)
		if e.Iteration > 0 {
			line = fmt.Sprintf("review %d: %s", e.Iteration, line)
		}
		byID[e.ID] = append(byID[e.ID], line)
	}
	var b strings.Builder
	for _, id := range ids {
		b.WriteString("- " + id + ":\n")
		for _, l := range byID[id] {
			b.WriteString("  - " + l + "\n")
		}
	}
	return b.String()
}

// ms is a review's run time logged in milliseconds; 0 when not above 0.
func ms(n int64) time.Duration { return time.Duration(max(n, 0)) * time.Millisecond }

// Ledger returns the ledger of the latest cycle of series s.
func (r *Reader) Ledger(s Series) ledger.Ledger { return r.cycles[s] }

// Current returns the series state s is in and its ledger: empty when
// the cycle has had no review yet (phase_iteration 0). ok is false outside
// every review cycle.
func (r *Reader) Current(s *state.State) (Series, ledger.Ledger, bool) {
	sr, ok := Current(s)
	if !ok || s.Iteration() == 0 {
		return sr, ledger.Ledger{}, ok
	}
	return sr, r.Ledger(sr), true
}

// Scanner streams a plan's events; store.Files.Scan bound to a plan.
type Scanner func(fn func(events.Event), warn func(string)) error

// Read folds the whole log; warnings (a torn line) go to warn, which may
// be nil.
func Read(scan Scanner, warn func(string)) (*Reader, error) {
	if warn == nil {
		warn = func(string) {}
	}
	r := &Reader{}
	err := scan(r.Add, warn)
	return r, err
}

// NeedsHumanEvent is the event recording that the cycle of s stopped to
// ask for a human, listing the findings going round.
func NeedsHumanEvent(s Series, iteration int, a ledger.Assessment) events.Event {
	return events.Event{Task: s.Task.String(), Event: NeedsHuman, Actor: "hook",
		Reason: fmt.Sprintf("%s does not converge (%s): %s; no further review until `taskie resume`", s.Review, a.Reason, strings.Join(a.Going, ", ")),
		Meta:   events.Meta(events.NeedsHumanMeta{Review: string(s.Review), Iteration: iteration, Reason: string(a.Reason), Going: a.Going})}
}
