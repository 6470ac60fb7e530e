package lifecycle

import (
	"sync"
)

// Class says what kind of move a table row is, and so which function makes it.
type Class string

// Classes of moves.
const (
	// ClassForward is a step along the chain; it clears From's failures.
	ClassForward Class = "forward"
	// ClassFailure is a move that counts a failure in From (docs/lifecycle.md's
	// "approach rejected", "review failed", "pre-commit failed").
	ClassFailure Class = "failure"
	// ClassToCTO enters cto_intervention: 3 failures or an explicit Escalate.
	ClassToCTO Class = "to-cto"
	// ClassReturn leaves cto_intervention back into the work: Retry or
	// GuidedRetry to the state it came from, Rollback to an earlier one.
	ClassReturn Class = "return"
	// ClassToHuman enters human_escalation: CTO attempts used up, or an
	// explicit Escalate.
	ClassToHuman Class = "to-human"
	// ClassResolve is a human's Resolve: back to the state escalated from.
	ClassResolve Class = "resolve"
	// ClassAbandon is a human's Abandon.
	ClassAbandon Class = "abandon"
	// ClassRelease returns an assigned task to the queue: its claim was
	// released without a result (docs/parallel.md). Failures are kept.
	ClassRelease Class = "release"
)

// Transition is one row of the table: a legal move and why it exists.
type Transition struct {
	From, To State
	Class    Class
	Why      string
}

// forwardWhy explains each forward step, keyed by its target.
var forwardWhy = map[State]string{
	Assigned:      "task picked up",
	Planning:      "approach validation starts",
	Validated:     "approach approved",
	InProgress:    "implementation starts",
	Testing:       "code complete, self-checks run",
	QualityReview: "self-checks done, review requested",
	Approved:      "quality gates passed",
	Committing:    "ready to commit",
	Completed:     "commit seen",
}

// machine is the table and its index, built at first use: every
// process that starts (the Stop hook at each agent stop) would pay for it.
var machine = sync.OnceValue(func() *tables {
	t := &tables{rows: buildTable()}
	for i, tr := range t.rows {
		t.edges[tr.From.index()][tr.To.index()] = uint8(i + 1)
	}
	return t
})

// tables holds the machine's rows (see Table) and edges, which maps
// from × to (by State.index) to the row's index in rows + 1, or 0 when
// there is no row.
type tables struct {
	rows  []Transition
	edges [numStates][numStates]uint8
}

// buildTable writes the rows: the chain, the three failure moves, the
// release of a claim, then the
// escalation, return, resolve and abandon rows of every working state.
// Returns and resolves are listed for every working state because the state
// a task came from can be any of them; Move checks it is the right one.
func buildTable() []Transition {
	var t []Transition
	for _, s := range chain[1:] {
		t = append(t, Transition{s.prev(), s, ClassForward, forwardWhy[s]})
	}
	t = append(t,
		Transition{Planning, Planning, ClassFailure, "approach rejected, plan again"},
		Transition{QualityReview, InProgress, ClassFailure, "review failed, fix the code"},
		Transition{Committing, InProgress, ClassFailure, "pre-commit failed, fix the code"},
		Transition{Assigned, Pending, ClassRelease, "claim released without a result"},
	)
	for _, s := range chain[:len(chain)-1] {
		t = append(t, Transition{s, CTOIntervention, ClassToCTO, "3 failures in " + string(s) + ", or escalated"})
	}
	for _, s := range chain[:len(chain)-1] {
		t = append(t, Transition{CTOIntervention, s, ClassReturn, "CTO retry of " + string(s) + ", or rollback to it"})
	}
	t = append(t, Transition{CTOIntervention, HumanEscalation, ClassToHuman, "CTO attempts used up, or escalated"})
	for _, s := range chain[:len(chain)-1] {
		t = append(t, Transition{HumanEscalation, s, ClassResolve, "human resolved, work resumes in " + string(s)})
	}
	for _, s := range append(chain[:len(chain)-1:len(chain)-1], CTOIntervention, HumanEscalation) {
		t = append(t, Transition{s, Abandoned, ClassAbandon, "abandoned by a human"})
	}
	return t
}

// lookup returns the row from → to.
func lookup(from, to State) (Transition, bool) {
	f, t := from.index(), to.index()
	m := machine()
	if f == numStates || t == numStates || m.edges[f][t] == 0 {
		return Transition{}, false
	}
	return m.rows[m.edges[f][t]-1], true
}

// Next lists the states Move can take this task to now, whoever asks: the
// table's moves from its state, narrowed by where it was escalated from
// (a retry returns there, a rollback goes earlier, a resolve returns there).
func Next(t Task) []State {
	var out []State
	for _, tr := range machine().rows {
		if tr.From == t.State && fits(t, tr) {
			out = append(out, tr.To)
		}
	}
	return out
}

// fits reports whether a row's dynamic condition holds for t.
func fits(t Task, tr Transition) bool {
	switch tr.Class {
	case ClassReturn:
		return tr.To.pos() <= t.EscalatedFrom.pos()
	case ClassResolve:
		return tr.To == t.EscalatedFrom
	}
	return true
}
