package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// tasks.md's Status values (plan's statuses, spelled here so that the
// machine stays free of the plan's parser).
const (
	CellPending    = "pending"
	CellInProgress = "in-progress"
	CellDone       = "done"
	CellCancelled  = "cancelled"
	CellPostponed  = "postponed"
	CellBlocked    = "blocked"
)

// Cell renders state s as tasks.md's Status cell (docs/lifecycle.md,
// "tasks.md's Status"): pending and assigned are pending, the working
// states from planning to committing in-progress, completed done, the
// escalation states blocked, abandoned cancelled. A skip has no cell of
// its own: it renders as the state it leads to.
func Cell(s State) string {
	switch s {
	case Pending, Assigned:
		return CellPending
	case Completed:
		return CellDone
	case CTOIntervention, HumanEscalation:
		return CellBlocked
	case Abandoned:
		return CellCancelled
	}
	if s.Working() {
		return CellInProgress
	}
	return ""
}

// Agrees reports whether a Status cell renders state s: Cell(s), or
// postponed for a task in pending (a task put off is still to do).
func Agrees(s State, cell string) bool {
	cell = normCell(cell)
	return cell == Cell(s) || (s == Pending && cell == CellPostponed)
}

// CellOnly reports whether a status written for a task that has no
// record yet is the cell alone, as it always was: pending, postponed,
// done and cancelled say nothing the lifecycle must record (a row marked
// done or cancelled counts as finished outside it). in-progress and
// blocked are moves: they create the record.
func CellOnly(cell string) bool {
	switch normCell(cell) {
	case CellPending, CellPostponed, CellDone, CellCancelled:
		return true
	}
	return false
}

// RequestedState is the state a Status cell asks for: done → completed,
// in-progress → in_progress, pending and postponed → pending, cancelled →
// abandoned, blocked → cto_intervention (an escalation). "" for a value
// that is no status.
func RequestedState(cell string) State {
	switch normCell(cell) {
	case CellDone:
		return Completed
	case CellInProgress:
		return InProgress
	case CellPending, CellPostponed:
		return Pending
	case CellCancelled:
		return Abandoned
	case CellBlocked:
		return CTOIntervention
	}
	return ""
}

// Request makes the move a Status cell asks for, as actor: a requested
// move (a `taskie task status` or a hand edit of tasks.md). A task whose
// state the cell renders already does not move. done and in-progress
// move forward along the chain, one ordinary move per state (as the plan
// phases fast-forward: no state skipped, no override); pending and
// postponed move back to pending (legal from assigned: a release);
// cancelled abandons (a human's); blocked escalates. Anything else is the
// machine's refusal, ErrIllegal or ErrRefused, as the moves give it.
func Request(t Task, cell string, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	cell = normCell(cell)
	to := RequestedState(cell)
	if to == "" {
		return t, nil, errorf(t, ErrInvalid, "unknown status %q", cell)
	}
	if Agrees(t.State, cell) {
		return t, nil, nil
	}
	if reason == "" {
		reason = "tasks.md status " + cell
	}
	next, effs, err := request(t, to, actor, reason, now)
	var e *Error
	if errors.As(err, &e) {
		// Say which state the status asked for: the refusal names states.
		err = &Error{Task: e.Task, Err: e.Err, Msg: fmt.Sprintf("%s asks for %s: %s", cell, to, e.Msg)}
	}
	return next, effs, err
}

// request makes the move to state to that Request decided on.
func request(t Task, to State, actor Actor, reason string, now time.Time) (Task, []Effect, error) {
	switch to {
	case Abandoned:
		return Abandon(t, actor, reason, now)
	case CTOIntervention:
		return Escalate(t, actor, reason, now)
	}
	if p := t.State.pos(); p < 0 || p >= to.pos() {
		// Not forward: the table decides (assigned → pending is legal).
		return Move(t, to, actor, reason, now)
	}
	cur, effs := t, []Effect(nil)
	for cur.State.pos() < to.pos() {
		next, es, err := Move(cur, cur.State.next(), actor, reason, now)
		if err != nil {
			return t, nil, err
		}
		cur, effs = next, append(effs, es...)
	}
	return cur, effs, nil
}

// Divergence is a tasks.md Status cell that does not render its task's
// record: an edit by hand, which taskie reads as a requested move.
type Divergence struct {
	Task  domain.TaskID
	Cell  string // what tasks.md says
	State State  // what the lifecycle says
}

// String says what differs and both ways out: request the move, or put
// the rendering back.
func (d Divergence) String() string {
	flag := ""
	if d.Cell == CellCancelled {
		flag = " --actor human" // abandoning is a human's
	}
	return fmt.Sprintf("task %s: tasks.md says %s, the lifecycle says %s: run `taskie task status %s %s%s` to request the move, or put back %s",
		d.Task, d.Cell, d.State, d.Task, d.Cell, flag, Cell(d.State))
}

// Divergences lists, by task id, the cells (task id → Status as tasks.md
// writes it) that do not render their task's record; tasks without a
// record, and values that are no status (validation reports those), are
// left out.
func Divergences(recs map[domain.TaskID]Task, cells map[domain.TaskID]string) []Divergence {
	var out []Divergence
	for id, c := range cells {
		t, ok := recs[id]
		c = normCell(c)
		if !ok || RequestedState(c) == "" || Agrees(t.State, c) {
			continue
		}
		out = append(out, Divergence{Task: id, Cell: c, State: t.State})
	}
	slices.SortFunc(out, func(a, b Divergence) int { return int(a.Task - b.Task) })
	return out
}

// normCell is a cell as tasks.md is read: case and spaces ignored.
func normCell(c string) string { return strings.ToLower(strings.TrimSpace(c)) }
