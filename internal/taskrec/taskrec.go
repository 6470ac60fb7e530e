// Package taskrec folds what a plan holds about each task — its row in
// tasks.md, its lifecycle record, its claim, its latest result, the review
// cycle state.json keeps for the current task — into one record per task:
// the one status every view shows (docs/lifecycle.md, "One record per
// task"). It is pure: the shell reads the values and hands them in.
package taskrec

import (
	"maps"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// Input is what the fold reads: the values of one snapshot of the plan,
// and the coordination data when the caller read them.
type Input struct {
	// Tasks is tasks.md as read; nil when the plan has none yet.
	Tasks *plan.Tasks
	// Records are the lifecycle records by task (state.json's, or every
	// clone's with a shared store), the tasks whose commit was seen
	// already completed by the shell. nil: none.
	Records map[domain.TaskID]lifecycle.Task
	// Unwritten holds, for a task the shell moved in memory only (its
	// commit seen), the state tasks.md's cell was written for: that cell
	// is no edit by hand.
	Unwritten map[domain.TaskID]lifecycle.State
	// State is state.json (nil: none): its current task's review cycle.
	State *state.State
	// Claims are the plan's claims, live or not; nil when not read.
	Claims []domain.Claim
	// Results are each task's latest result; nil when not read.
	Results map[domain.TaskID]Result
	// OpenFindings counts each task's open code-review findings (the
	// ledger's fold); nil when not read.
	OpenFindings map[domain.TaskID]int
	// Created is when the plan began: a task without a record counts as
	// pending since then.
	Created time.Time
	// Timeouts are the lifecycle timeouts (nil: the defaults).
	Timeouts lifecycle.Timeouts
	// Now is the time the records are shown at.
	Now time.Time
	// Untimed: the caller shows no time (scheduling, routing), so when
	// each task became ready and where it stands against its timeout are
	// not worked out (InState, Timeout and ReadySince stay zero).
	Untimed bool
}

// Result is a task's latest stored result (`taskie task result`).
type Result struct {
	Status string // complete, failed, retry
	Commit string
	Agent  string
	At     time.Time
}

// Record is one task as every view shows it.
type Record struct {
	ID    domain.TaskID
	Title string
	Deps  []domain.TaskID
	// Row says tasks.md has a row for the task (false: a lifecycle record
	// whose row was removed).
	Row bool
	// Cell is the task's Status cell in tasks.md, lower-cased and trimmed
	// ("" without a row).
	Cell string
	// Recorded says the lifecycle has a record of the task.
	Recorded bool
	// State is the one status: the lifecycle state; without a record,
	// completed or abandoned when tasks.md marks the task done or
	// cancelled, pending otherwise.
	State lifecycle.State
	// Status is the one status as a word: the lifecycle state, or the
	// Status cell when the task has no record yet.
	Status string
	// Display is the Status cell that renders State (lifecycle.Cell),
	// keeping tasks.md's own when it renders it too (postponed for a
	// pending task); the cell itself for a task without a record.
	Display string
	// Diverged: tasks.md's cell asks for another state than the record
	// (an edit by hand, read as a requested move by the next change).
	Diverged bool
	// Standing is where the task stands for scheduling.
	Standing parallel.Standing
	// Life is the lifecycle record: failures per state, CTO attempts, the
	// state escalated from, time per state, HEAD at committing. A task
	// without a record has a fresh one in pending since the plan began.
	Life lifecycle.Task
	// Agent is whom the task is assigned to: the record's agent, else the
	// holder of a live claim.
	Agent string
	// Claim is the task's claim (nil: none); ClaimLive says its lease
	// holds at Now.
	Claim     *domain.Claim
	ClaimLive bool
	// Result is the task's latest result (nil: none).
	Result *Result
	// Review is the review cycle of the current task (nil for the others).
	Review *Review
	// OpenFindings is the task's open code-review findings; -1 when the
	// ledger was not read.
	OpenFindings int
	// InState is the time in State; Timeout its standing against the
	// state's timeout (a queued pending task is Queued, at no level).
	InState time.Duration
	Timeout lifecycle.TimeoutStatus
	// ReadySince is when the time against the timeout counts from.
	ReadySince time.Time
}

// Review is the review cycle state.json keeps for its current task.
type Review struct {
	Phase     domain.Phase // the phase last run
	Next      domain.Phase // the phase due
	Iteration int
	Max       int
	Clean     int // consecutive clean reviews
}

// Open says the task is still to be worked on or is being worked on: not
// finished, dropped or with a human.
func (r Record) Open() bool {
	switch r.Standing {
	case parallel.Finished, parallel.Dropped, parallel.WithHuman:
		return false
	}
	return true
}

// Fold returns one record per task: the rows of tasks.md in table order
// (a repeated id once, at its first row), then the lifecycle records no row
// names, by id.
func Fold(in Input) []Record {
	timeouts := in.Timeouts
	if timeouts == nil {
		timeouts = lifecycle.DefaultTimeouts()
	}
	out, rows := fromTable(in.Tasks)
	seen := make(map[domain.TaskID]bool, len(out))
	for _, r := range out {
		seen[r.ID] = true
	}
	var extra []domain.TaskID
	for id := range in.Records {
		if !seen[id] {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	for _, id := range extra {
		out = append(out, Record{ID: id})
	}
	var ready lifecycle.ReadyAt
	if in.Tasks != nil && !in.Untimed {
		ready = lifecycle.Readiness(rows, in.Records)
	}
	claims := latestClaims(in.Claims)
	for i := range out {
		fill(&out[i], in, ready, claims, timeouts)
	}
	return out
}

// fromTable starts a record per row of tasks.md (a repeated id once, at
// its first row) and returns the rows as the ready rule reads them.
func fromTable(ts *plan.Tasks) ([]Record, []lifecycle.Row) {
	if ts == nil {
		return nil, nil
	}
	out := make([]Record, 0, len(ts.Tasks))
	rows := make([]lifecycle.Row, 0, len(ts.Tasks))
	seen := make(map[domain.TaskID]bool, len(ts.Tasks))
	for _, t := range ts.Tasks {
		id := domain.TaskID(t.ID)
		if id <= 0 || seen[id] {
			continue
		}
		seen[id] = true
		r := Record{ID: id, Title: t.Title(), Row: true, Cell: t.StatusNorm()}
		for _, d := range t.DependsOn {
			r.Deps = append(r.Deps, domain.TaskID(d))
		}
		out = append(out, r)
		rows = append(rows, lifecycle.Row{ID: id, Deps: r.Deps,
			Done: r.Cell == plan.StatusDone || r.Cell == plan.StatusCancelled, Started: r.Cell == plan.StatusInProgress})
	}
	return out, rows
}

// Rows are tasks.md's rows as lifecycle.Readiness reads them (the first
// row of a repeated id); nil without tasks.md.
func Rows(ts *plan.Tasks) []lifecycle.Row {
	_, rows := fromTable(ts)
	return rows
}

// Cells are tasks.md's Status cells by task id, lower-cased and trimmed
// (the first row of a repeated id); nil without tasks.md.
func Cells(ts *plan.Tasks) map[domain.TaskID]string {
	if ts == nil {
		return nil
	}
	rs, _ := fromTable(ts)
	out := make(map[domain.TaskID]string, len(rs))
	for _, r := range rs {
		out[r.ID] = r.Cell
	}
	return out
}

// ReadyAt is when each task of rs became ready as the fold measured it
// (lifecycle.ReadyAt: a queued task is absent); nil when no record has a
// row in tasks.md.
func ReadyAt(rs []Record) lifecycle.ReadyAt {
	var out lifecycle.ReadyAt
	for _, r := range rs {
		if !r.Row {
			continue
		}
		if out == nil {
			out = lifecycle.ReadyAt{}
		}
		if !r.Timeout.Queued {
			out[r.ID] = r.ReadySince
		}
	}
	return out
}

// fill completes r from the inputs.
func fill(r *Record, in Input, ready lifecycle.ReadyAt, claims map[domain.TaskID]domain.Claim, timeouts lifecycle.Timeouts) {
	life, ok := in.Records[r.ID]
	r.Recorded = ok
	if ok {
		// The record's maps are the caller's: the views get their own.
		life.Failures, life.Entered = maps.Clone(life.Failures), maps.Clone(life.Entered)
		r.Life = life
		r.State = life.State
		r.Status = string(life.State)
		r.Display = lifecycle.Cell(life.State)
		if r.Row && lifecycle.Agrees(life.State, r.Cell) {
			r.Display = r.Cell
		}
		r.Diverged = r.Row && lifecycle.RequestedState(r.Cell) != "" && !lifecycle.Agrees(life.State, r.Cell)
		if was, ok := in.Unwritten[r.ID]; ok && lifecycle.Agrees(was, r.Cell) {
			r.Diverged = false // the next change writes the rendering
		}
		// The lifecycle is the truth: a cell that disagrees is a move
		// requested, not made (the next change makes or refuses it).
		r.Standing = parallel.StandingOf(r.Display, life.State)
		r.Agent = life.Agent
	} else {
		// Shown, never stored: no maps (a plan of fresh tasks costs
		// none per task).
		at := in.Created.UTC()
		r.Life = lifecycle.Task{ID: r.ID, Since: at, Created: at}
		switch r.Cell {
		case plan.StatusDone:
			r.State = lifecycle.Completed
		case plan.StatusCancelled:
			r.State = lifecycle.Abandoned
		default:
			r.State = lifecycle.Pending
		}
		r.Life.State = r.State
		r.Status, r.Display = r.Cell, r.Cell
		r.Standing = parallel.StandingOf(r.Cell, "")
	}
	if c, ok := claims[r.ID]; ok {
		r.Claim = &c
		r.ClaimLive = c.Live(in.Now)
		if r.Agent == "" && r.ClaimLive {
			r.Agent = c.Agent
		}
	}
	if res, ok := in.Results[r.ID]; ok {
		r.Result = &res
	}
	if in.State != nil && in.State.Task() == r.ID {
		r.Review = &Review{Phase: in.State.Phase, Next: in.State.Next(), Iteration: in.State.Iteration(),
			Max: in.State.MaxReviews, Clean: in.State.ConsecutiveClean}
	}
	r.OpenFindings = -1
	if in.OpenFindings != nil {
		r.OpenFindings = in.OpenFindings[r.ID]
	}
	if !in.Untimed && (r.Recorded || r.Open() && r.State == lifecycle.Pending) {
		r.InState = max(in.Now.Round(0).Sub(r.Life.Since), 0)
		r.Timeout = ready.Status(r.Life, in.Now, timeouts)
		r.ReadySince, _ = ready.From(r.Life)
	}
}

// latestClaims keeps one claim per task: the one acquired last.
func latestClaims(cs []domain.Claim) map[domain.TaskID]domain.Claim {
	out := make(map[domain.TaskID]domain.Claim, len(cs))
	for _, c := range cs {
		if o, ok := out[c.Task]; !ok || c.Acquired.After(o.Acquired) || c.Token > o.Token {
			out[c.Task] = c
		}
	}
	return out
}

// ByID indexes records by task id.
func ByID(rs []Record) map[domain.TaskID]Record {
	out := make(map[domain.TaskID]Record, len(rs))
	for _, r := range rs {
		out[r.ID] = r
	}
	return out
}

// Find returns task id's record.
func Find(rs []Record, id domain.TaskID) (Record, bool) {
	for _, r := range rs {
		if r.ID == id {
			return r, true
		}
	}
	return Record{}, false
}

// Records are the lifecycle records state.json holds, by task: the one
// reading of its "lifecycle" field, for the views (through Fold) and for
// the commands that move a task. None without a state or a field; an
// error when the field does not decode (`taskie validate` reports it).
func Records(st *state.State) (map[domain.TaskID]lifecycle.Task, error) {
	if st == nil {
		return map[domain.TaskID]lifecycle.Task{}, nil
	}
	return lifecycle.Decode(st.Lifecycle)
}

// OfFiles folds what a plan's two files say alone — tasks.md's rows and
// state.json's records — as a command deciding on a snapshot reads them:
// no claims, no results, no commit seen, no time. Records that do not decode are
// left out (`taskie validate` reports them).
func OfFiles(ts *plan.Tasks, st *state.State) []Record {
	recs, err := Records(st)
	if err != nil {
		recs = nil
	}
	return Fold(Input{Tasks: ts, Records: recs, State: st, Untimed: true})
}
