// Package history turns a plan's event log (docs/lifecycle.md#queries) into what the
// queries show: the state.json the events imply (Replay, for `taskie
// recover`) and one-line summaries of events (for `taskie history` and
// `taskie log`). Nothing here does I/O.
package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Defaults are what the log does not record: the values a plan starts with.
type Defaults struct {
	MaxReviews *int           // max_reviews of a new plan (from config); domain.DefaultMaxReviews when nil
	Models     []domain.Model // review model rotation; domain.DefaultModels when empty
}

// NotLogged names the state.json fields that a log written before every
// change carried its state (no commit event) does not record, so a replay
// cannot rebuild them: they take their defaults.
var NotLogged = []string{
	"enabled (its PAUSED and RESUMED events carry no state)",
	"session_id",
	"worktree, base_sha, last_commit",
	"fields taskie does not know",
}

// maxNotes caps the notes kept by a replay; the rest are only counted.
const maxNotes = 20

// Replayer rebuilds a plan's state from its events, fed one at a time in
// log order, so that a long log never has to be held in memory.
type Replayer struct {
	models    []domain.Model
	st        *state.State
	used      map[string]int
	skipped   map[string]int
	notes     []string
	moreNotes int
	total     int
	// exact is set once the log holds a commit event: from there on the
	// commit events carry every change of state.json, and the other
	// events have no bearing on it.
	exact bool
	// resetSinceReview is set when a PHASE_CHANGE started a fresh cycle
	// after the last REVIEW_FINISHED. The hook appends a review's event
	// after the phase change of the same commit, so a review whose
	// iteration is above the (reset) one ended the previous cycle and must
	// not count towards the new one.
	resetSinceReview bool
}

// Result is what a replay found.
type Result struct {
	State   *state.State
	Events  int            // events read
	Used    map[string]int // events that set state fields, by kind
	Skipped map[string]int // events with no bearing on state.json, by kind
	Notes   []string       // events that could not be applied, and why
	// Exact is set when the log holds commit events, which carry every
	// change of state.json: nothing is left at a default.
	Exact bool
}

// NewReplayer starts from the state of a fresh plan.
func NewReplayer(d Defaults) *Replayer {
	st := state.New()
	if d.MaxReviews != nil && *d.MaxReviews >= 0 {
		st.MaxReviews = *d.MaxReviews
	}
	st.ReviewModel = workflow.FirstModel(d.Models)
	return &Replayer{models: d.Models, st: st, used: map[string]int{}, skipped: map[string]int{}}
}

// Replay rebuilds the state from a whole log.
func Replay(evs []events.Event, d Defaults) Result {
	r := NewReplayer(d)
	for _, e := range evs {
		r.Apply(e)
	}
	return r.Result()
}

// Result returns the state so far and how it was obtained.
func (r *Replayer) Result() Result {
	notes := r.notes
	if r.moreNotes > 0 {
		notes = append(notes[:len(notes):len(notes)], fmt.Sprintf("… and %d more", r.moreNotes))
	}
	return Result{State: r.st.Clone(), Events: r.total, Used: r.used, Skipped: r.skipped, Notes: notes, Exact: r.exact}
}

func (r *Replayer) note(e events.Event, format string, args ...any) {
	if len(r.notes) >= maxNotes {
		r.moreNotes++
		return
	}
	r.notes = append(r.notes, fmt.Sprintf("event %d (%s %s): ", r.total, e.TS.Format("2006-01-02T15:04:05Z07:00"), e.Event)+fmt.Sprintf(format, args...))
}

// Apply replays one event.
func (r *Replayer) Apply(e events.Event) {
	r.total++
	if e.IsCommit() {
		r.exact = true
		if r.commit(e) {
			r.used[e.Event]++
		} else {
			r.skipped[e.Event]++
		}
		return
	}
	if r.exact {
		r.skipped[e.Event]++
		return
	}
	// Events written before every change was logged: rebuild what they tell.
	ok := false
	switch e.Event {
	case events.PhaseChange:
		ok = r.phaseChange(e)
	case events.FieldSet:
		ok = r.fieldSet(e)
	case events.ReviewFinished:
		ok = r.reviewFinished(e)
	case events.PlanCreated:
		if m, err := events.MetaOf[events.PlanCreatedMeta](e); e.HasMeta("tdd") && !events.BadMeta(err, "tdd") {
			r.st.TDD, ok = m.TDD, true
		}
	}
	if ok {
		r.used[e.Event]++
	} else {
		r.skipped[e.Event]++
	}
}

// commit applies a commit event's change with state.Apply, the function
// that computed the state.json the commit wrote.
func (r *Replayer) commit(e events.Event) bool {
	if len(e.Set) == 0 && len(e.Unset) == 0 && len(e.Lifecycle) == 0 {
		return len(e.Tasks) > 0 || e.Archive != nil
	}
	base := r.st
	if e.Replaces() {
		base = nil
	}
	// Lifecycle holds the records the commit changed; a log written
	// before holds the whole field in Set, which replaces it: both replay.
	n, err := state.Apply(base, state.Delta{Set: e.Set, Unset: e.Unset, Lifecycle: e.Lifecycle})
	if err != nil {
		r.note(e, "%v: ignored", err)
		return false
	}
	r.st = n
	return true
}

func (r *Replayer) phaseChange(e events.Event) bool {
	to := domain.Phase(e.To)
	if !domain.IsPhase(to) {
		r.note(e, "unknown phase %q: event ignored", e.To)
		return false
	}
	var task *domain.TaskID
	if e.Task != "" {
		id, err := domain.ParseTaskID(e.Task)
		if err != nil {
			r.note(e, "%v: event ignored", err)
			return false
		}
		task = &id
	}
	m, _ := events.MetaOf[events.PhaseChangeMeta](e)
	next, hasNext, ok := r.nextPhaseOf(e, m)
	if !ok {
		return false
	}
	it, hasIt := r.iterationOf(e, m)
	if e.From != "" && domain.Phase(e.From) != r.st.Phase {
		r.note(e, "moves from %q but the replayed phase is %q (events missing?): applied anyway", e.From, r.st.Phase)
	}
	old := r.st.PhaseIteration
	r.st.Phase, r.st.CurrentTask = to, task
	if hasNext {
		r.st.NextPhase = next
	}
	if hasIt {
		r.setIteration(e, old, it)
	}
	return true
}

// nextPhaseOf is the next_phase a phase change sets (has: it sets one);
// ok is false for an unknown one, which makes the event ignored.
func (r *Replayer) nextPhaseOf(e events.Event, m events.PhaseChangeMeta) (next *domain.Phase, has, ok bool) {
	if !m.NextPhase.Set {
		return r.st.NextPhase, false, true
	}
	v := m.NextPhase.V
	s, isStr := v.(string)
	switch {
	case v == nil || (isStr && s == ""):
		return nil, true, true
	case isStr && domain.IsNextPhase(domain.Phase(s)):
		return state.Opt(domain.Phase(s)), true, true
	}
	r.note(e, "unknown next_phase %v: event ignored", v)
	return nil, false, false
}

// iterationOf is the phase_iteration a phase change sets (has: it sets
// one); one that is not an integer ≥ 0 is noted and kept.
func (r *Replayer) iterationOf(e events.Event, m events.PhaseChangeMeta) (it *int, has bool) {
	if !m.PhaseIteration.Set {
		return r.st.PhaseIteration, false
	}
	v := m.PhaseIteration.V
	if v == nil {
		return nil, true
	}
	if n, isInt := events.LooseInt(v); isInt && n >= 0 {
		return state.Int(n), true
	}
	r.note(e, "phase_iteration %v is not an integer ≥ 0: kept %s", v, intOrNull(r.st.PhaseIteration))
	return r.st.PhaseIteration, false
}

// setIteration sets phase_iteration; a move to 0 from elsewhere starts a
// fresh cycle (workflow.ResetCycle). `taskie set current_task` also zeroes
// the iteration and the clean count, but keeps the review model.
func (r *Replayer) setIteration(e events.Event, old, it *int) {
	r.st.PhaseIteration = it
	if it == nil || *it != 0 || (old != nil && *old == 0) {
		return
	}
	r.st.ConsecutiveClean = 0
	if e.Reason != "set current_task" {
		r.st.ReviewModel = workflow.FirstModel(r.models)
	}
	r.resetSinceReview = true
}

func (r *Replayer) fieldSet(e events.Event) bool {
	m, _ := events.MetaOf[events.FieldSetMeta](e)
	field := m.Field
	value, ok := asValue(m.Value)
	if field == "" || !ok {
		r.note(e, "no field or value: ignored")
		return false
	}
	n, err := workflow.Set(r.st, field, value)
	if err != nil {
		r.note(e, "%s = %s ignored: %v", field, value, err)
		return false
	}
	r.st = n
	return true
}

func (r *Replayer) reviewFinished(e events.Event) bool {
	m, err := events.MetaOf[events.ReviewFinishedMeta](e)
	if m.NotRecorded() {
		return false // the hook did not record this verdict in state.json
	}
	it, model, verdict := m.Iteration, m.Model, m.Verdict
	if !e.HasMeta("iteration") || it < 0 || events.BadMeta(err, "iteration") {
		r.note(e, "iteration %v is not an integer ≥ 0: ignored", e.Meta["iteration"])
		return false
	}
	if r.resetSinceReview && it > r.st.Iteration() {
		// This review ended a cycle that the same commit reset.
		r.resetSinceReview = false
		return true
	}
	r.resetSinceReview = false
	r.st.PhaseIteration = state.Int(it)
	if domain.Verdict(verdict) == domain.Pass {
		r.st.ConsecutiveClean++
	} else {
		r.st.ConsecutiveClean = 0
	}
	if model != "" {
		r.st.ReviewModel = workflow.NextModel(r.models, domain.Model(model))
	}
	return true
}

// asValue renders a FIELD_SET value as the string `taskie set` was given.
func asValue(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case nil:
		return "null", true
	case bool, float64, int, json.Number:
		return fmt.Sprint(v), true
	}
	return "", false
}

func intOrNull(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}

// fieldOrder is the order state.Encode writes the known fields in.
var fieldOrder = []string{"max_reviews", "current_task", "phase", "phase_iteration", "next_phase", "review_model",
	"consecutive_clean", "tdd", "enabled", "session_id", "worktree", "base_sha", "last_commit"}

// Diff lists the fields whose values differ between two states, as
// "field: old → new": known fields in state.json order, then the others
// by name.
func Diff(old, cur *state.State) []string {
	a, b := fields(old), fields(cur)
	var extra []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !slices.Contains(fieldOrder, k) && !slices.Contains(extra, k) {
				extra = append(extra, k)
			}
		}
	}
	sort.Strings(extra)
	var out []string
	for _, k := range append(slices.Clone(fieldOrder), extra...) {
		va, oka := a[k]
		vb, okb := b[k]
		if !oka {
			va = "(absent)"
		}
		if !okb {
			vb = "(absent)"
		}
		if va != vb {
			out = append(out, fmt.Sprintf("%s: %s → %s", k, va, vb))
		}
	}
	return out
}

func fields(s *state.State) map[string]string {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(s.Encode(), &raw)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var c bytes.Buffer
		if json.Compact(&c, v) == nil {
			v = c.Bytes()
		}
		out[k] = string(v)
	}
	return out
}

// Counts renders a kind → count map as "KIND ×n, …", sorted by kind.
func Counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
