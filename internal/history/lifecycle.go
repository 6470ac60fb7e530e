package history

import (
	"fmt"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// LifecycleKinds are the event kinds of lifecycle effects, for
// events.Filter: a query decodes nothing else.
func LifecycleKinds() []string {
	var out []string
	for _, k := range lifecycle.Kinds() {
		out = append(out, string(k))
	}
	return out
}

// Lifecycle folds the lifecycle events of a log, read lean, into task
// records through lifecycle.Log: the same check and update the moves made
// them with. A line that is no readable effect is a violation too.
type Lifecycle struct {
	log     *lifecycle.Log
	bad     []lifecycle.Violation
	moreBad int
}

// NewLifecycle starts an empty fold.
func NewLifecycle() *Lifecycle { return &Lifecycle{log: lifecycle.NewLog()} }

// Add folds one lifecycle event; other kinds are ignored.
func (f *Lifecycle) Add(l *events.Lean) {
	if _, err := lifecycle.ParseKind(l.Event); err != nil {
		return
	}
	e, err := lifecycle.ParseEffect(lifecycle.Fields{Task: l.Task, Kind: l.Event, At: l.TS, From: l.From, To: l.To,
		Actor: l.Actor, Reason: l.Reason, Meta: l.Meta})
	if err != nil {
		if len(f.bad) < 20 {
			id, _ := domain.ParseTaskID(l.Task)
			f.bad = append(f.bad, lifecycle.Violation{Pos: l.Line, Task: id, Rule: lifecycle.RuleLegal,
				Msg: fmt.Sprintf("unreadable %s event: %v", l.Event, err)})
		} else {
			f.moreBad++
		}
		return
	}
	f.log.Add(l.Line, e)
}

// ForgetFinished keeps out of Tasks the tasks that reach completed or
// abandoned (lifecycle.Log.ForgetFinished), for a query that cannot select
// them (Query.LiveOnly): a long log's fold then holds the live tasks only.
func (f *Lifecycle) ForgetFinished() { f.log.ForgetFinished() }

// Known reports whether the log has a record of task id (a finished one
// that ForgetFinished dropped included).
func (f *Lifecycle) Known(id domain.TaskID) bool { return f.log.Known(id) }

// Tasks returns the records folded so far.
func (f *Lifecycle) Tasks() map[domain.TaskID]lifecycle.Task { return f.log.Tasks() }

// Violations returns the broken invariants found (Pos is the line of
// events.jsonl) and how many more were only counted.
func (f *Lifecycle) Violations() ([]lifecycle.Violation, int) {
	vs, more := f.log.Violations()
	out := append(slices.Clone(f.bad), vs...)
	slices.SortStableFunc(out, func(a, b lifecycle.Violation) int { return a.Pos - b.Pos })
	return out, more + f.moreBad
}

// Query selects tasks by their lifecycle (`taskie query`); zero fields
// select everything, set ones must all hold.
type Query struct {
	State     lifecycle.State
	Stuck     bool // over the state's timeout
	Escalated bool // cto_intervention or human_escalation
	Failing   bool // not finished, with 2 or more failures in some state
	Task      domain.TaskID
	// Ready says when pending tasks became ready: a queued one is never
	// stuck (lifecycle.ReadyAt; nil: every task counts from its Since).
	Ready lifecycle.ReadyAt
}

// LiveOnly reports whether the query selects live tasks only — not
// completed or abandoned ones: --stuck, --escalated and --failing do, and
// --state does unless it names one of those two.
func (q Query) LiveOnly() bool {
	return q.Stuck || q.Escalated || q.Failing ||
		(q.State != "" && q.State != lifecycle.Completed && q.State != lifecycle.Abandoned)
}

// MaySelectPending reports whether the query can select a task in
// pending with no failures: whether tasks without a record matter.
func (q Query) MaySelectPending() bool {
	return !q.Escalated && !q.Failing && (q.State == "" || q.State == lifecycle.Pending)
}

// Select returns the tasks the query selects at now, by id.
func (q Query) Select(tasks map[domain.TaskID]lifecycle.Task, now time.Time, timeouts lifecycle.Timeouts) []lifecycle.Task {
	var out []lifecycle.Task
	for id, t := range tasks {
		switch {
		case q.Task != 0 && id != q.Task,
			q.State != "" && t.State != q.State,
			q.Escalated && !t.Escalated(),
			q.Failing && (!t.Failing() || t.State == lifecycle.Completed || t.State == lifecycle.Abandoned),
			q.Stuck && !q.Ready.Status(t, now, timeouts).Stuck():
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b lifecycle.Task) int { return int(a.ID - b.ID) })
	return out
}
