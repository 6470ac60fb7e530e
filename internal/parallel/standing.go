package parallel

import (
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
)

// Standing is where a task stands for scheduling, decided from its
// tasks.md Status and its lifecycle state (StandingOf).
type Standing int

// Standings.
const (
	// Schedulable: pending or in progress; ready once its dependencies are
	// closed and no live lease holds it (Ready's lease rules).
	Schedulable Standing = iota + 1
	// Parked: postponed or blocked (or an unknown status) in tasks.md. A
	// person parked it: planned in groups, never ready.
	Parked
	// AwaitingCTO: in cto_intervention. Its work is under way and the CTO
	// decides how it goes on: planned in groups, never ready or handed out.
	AwaitingCTO
	// Finished: done in tasks.md, or completed. It satisfies its
	// dependents and is never scheduled.
	Finished
	// Dropped: cancelled in tasks.md, or abandoned. Its work is not coming,
	// so it satisfies its dependents too (the plan's author revises them);
	// never scheduled.
	Dropped
	// WithHuman: in human_escalation. A person decides: left out of ready,
	// groups and claim --next, and so are the tasks waiting on it.
	WithHuman
)

var standingNames = [...]string{"", "schedulable", "parked", "awaiting-cto", "finished", "dropped", "with-human"}

// String names the value in test failures (%v); taskie prints none.
func (s Standing) String() string {
	if s < 0 || int(s) >= len(standingNames) {
		return "unknown"
	}
	return standingNames[s]
}

// Closed reports whether the task is over for scheduling: it satisfies
// its dependents and holds no slot.
func (s Standing) Closed() bool { return s == Finished || s == Dropped }

// StandingOf decides a task's standing from its tasks.md Status (lower
// case, as plan.Task.StatusNorm gives it) and its lifecycle state ("" when
// the lifecycle has no record of it). The lifecycle's end states win over
// the Status cell (a task completed or abandoned is over whatever tasks.md
// still says); a Status of done or cancelled wins over a lifecycle still
// at work (the plan's author closed it); then the escalations; then the
// Status cell.
func StandingOf(status string, life lifecycle.State) Standing {
	switch {
	case life == lifecycle.Completed:
		return Finished
	case life == lifecycle.Abandoned:
		return Dropped
	case status == plan.StatusDone:
		return Finished
	case status == plan.StatusCancelled:
		return Dropped
	case life == lifecycle.HumanEscalation:
		return WithHuman
	case life == lifecycle.CTOIntervention:
		return AwaitingCTO
	case status == plan.StatusPending, status == plan.StatusInProgress:
		return Schedulable
	}
	return Parked
}

// standing is StandingOf for t.
func (t Task) standing() Standing { return StandingOf(t.Status, t.Life) }

// shown is how a reason names t's status: its lifecycle end state when
// that closed it, else its Status cell.
func (t Task) shown() string {
	switch t.Life {
	case lifecycle.Completed, lifecycle.Abandoned, lifecycle.HumanEscalation, lifecycle.CTOIntervention:
		return string(t.Life)
	}
	return t.Status
}
