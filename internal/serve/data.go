package serve

import (
	"context"
	"time"
)

// Source is where the pages' data come from: the CLI's own readers (the
// needs-you gatherer, the status and query readers), so that the
// dashboard shows what `taskie status` and `taskie query` print. Every
// method only reads.
type Source interface {
	// Fleet is every plan of the repository, with the needs-you list.
	Fleet(ctx context.Context) (*Fleet, error)
	// Plan is one plan; ErrNotFound when there is no such plan.
	Plan(ctx context.Context, plan string) (*Plan, error)
	// Task is one task of a plan; ErrNotFound when there is none.
	Task(ctx context.Context, plan, task string) (*Task, error)
	// ReviewFile is the text of a review file of a plan, named as in the
	// plan directory; ErrNotFound when it is not a review file there.
	ReviewFile(ctx context.Context, plan, name string) ([]byte, error)
	// Version changes whenever something the pages show may have
	// changed (a plan file, the claims); it must be cheap (polled).
	Version(ctx context.Context) (string, error)
}

// Need is one item of the needs-you list, with the keys and values of
// `taskie query --needs-you --json`.
type Need struct {
	Plan   string `json:"plan"`
	Task   string `json:"task"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	Since  string `json:"since"`
	Clear  string `json:"clear"`
}

// Fleet is the fleet page's data.
type Fleet struct {
	Repo  string
	Needs []Need
	Plans []PlanRow
	// Notes are said above the plans (the shared store's other clones).
	Notes []string
	At    time.Time
}

// PlanRow is one plan on the fleet page.
type PlanRow struct {
	ID, State, Phase, Next, Mode, Review, Owner string
	Done, Total                                 int
	Paused, Default                             bool
	Needs                                       int
	Changed                                     time.Time
	SpentUSD                                    float64
}

// Plan is the plan page's data.
type Plan struct {
	ID, Phase, Next, Mode, Stage string
	CurrentTask, TaskTitle       string
	Review                       string // "code-review iteration 2 of 8"
	Running                      string // the review running now
	Paused                       bool
	Done, Total                  int
	Needs                        []Need
	Tasks                        []TaskRow
	Waves                        []Wave
	// States counts the tasks per lifecycle state, in the machine's order.
	States []StateCount
	// Costs are the plan's reviews, oldest first, with running totals.
	Costs               []CostPoint
	SpentUSD, BudgetUSD float64
	Reviews             int
	Tokens              int64
	ReviewFiles         []ReviewFile
	Warnings            []string
	At                  time.Time
}

// TaskRow is one task of the plan page's table.
type TaskRow struct {
	ID, Title, Status string
	State, InState    string // lifecycle state and for how long; "" without a record
	Holder, Lease     string // claim holder and "expires in 9m" / "expired 3m ago"
	LeaseLive         bool
	Round             int // reviews run on the task
	Open              []SeverityCount
	CostUSD           float64
	Tokens            int64
}

// SeverityCount is how many open findings have a severity.
type SeverityCount struct {
	Severity string
	N        int
}

// Wave is one parallel wave of the plan's tasks.
type Wave struct {
	Number int
	Tasks  []WaveTask
}

// WaveTask is a task placed in a wave.
type WaveTask struct{ ID, Title, Status string }

// StateCount is how many tasks are in a lifecycle state.
type StateCount struct {
	State string
	N     int
	// Side: off the main path (an escalation, abandoned).
	Side bool
}

// CostPoint is one review: when it ended, what it cost, and the plan's
// running totals after it.
type CostPoint struct {
	At               time.Time
	Task             string
	CostUSD, Total   float64
	Tokens, TotalTok int64
}

// ReviewFile is a review file of the plan directory.
type ReviewFile struct {
	Name, Review string
	Task         string
	N            int
}

// Task is the task page's data.
type Task struct {
	Plan, ID, Title, Status string
	Row                     [][2]string // tasks.md's columns, in table order
	State, Since, InState   string
	Timeout, Level          string
	Failures                string
	Claim                   *Claim
	Result                  string
	Commits                 []string
	Timeline                []Event
	Reviews                 []ReviewFile
	Findings                []Finding
	Needs                   []Need
	CostUSD                 float64
	Tokens                  int64
	At                      time.Time
}

// Claim is a task's claim and its lease.
type Claim struct {
	Agent, Expires, Left string
	Live                 bool
}

// Event is one line of a task's timeline.
type Event struct{ TS, Event, Change, Actor, Summary string }

// Finding is one finding of a task's review cycles.
type Finding struct {
	Review, ID, Severity, Title, Status, Where, Note string
	Opened                                           int
}
