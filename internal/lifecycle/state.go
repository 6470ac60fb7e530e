package lifecycle

import (
	"fmt"
	"strings"
)

// State is a task's lifecycle state.
type State string

// States: the chain, in order, then the escalation states and the abandoned
// terminal.
const (
	Pending         State = "pending"
	Assigned        State = "assigned"
	Planning        State = "planning"
	Validated       State = "validated"
	InProgress      State = "in_progress"
	Testing         State = "testing"
	QualityReview   State = "quality_review"
	Approved        State = "approved"
	Committing      State = "committing"
	Completed       State = "completed"
	CTOIntervention State = "cto_intervention"
	HumanEscalation State = "human_escalation"
	Abandoned       State = "abandoned"
)

// Limits of docs/lifecycle.md#moves-failures-escalation.
const (
	// MaxFailures is the failure count per state that escalates to the CTO.
	MaxFailures = 3
	// MaxCTOAttempts is how many times a task may leave cto_intervention
	// back into the work before its next failure goes to a human.
	MaxCTOAttempts = 2
)

// chain is the forward path from pending to completed.
var chain = [...]State{
	Pending, Assigned, Planning, Validated, InProgress,
	Testing, QualityReview, Approved, Committing, Completed,
}

// States returns all thirteen states: the chain in order, then
// cto_intervention, human_escalation and abandoned.
func States() []State {
	return append(chain[:len(chain):len(chain)], CTOIntervention, HumanEscalation, Abandoned)
}

// ParseState reads a state as logs and users write it.
func ParseState(s string) (State, error) {
	st := State(strings.TrimSpace(s))
	if !st.Valid() {
		return "", fmt.Errorf("unknown lifecycle state %q; states are %s", s, join(States()))
	}
	return st, nil
}

// Valid reports whether s is one of the thirteen states.
func (s State) Valid() bool { return s.index() < numStates }

// Terminal reports whether s ends the machine: completed and abandoned never
// move, and human_escalation moves only by a human's Resolve or Abandon.
func (s State) Terminal() bool {
	return s == Completed || s == Abandoned || s == HumanEscalation
}

// Working reports whether s is on the chain before completed: the states
// where work happens, failures count and timeouts run.
func (s State) Working() bool {
	p := s.pos()
	return p >= 0 && p < len(chain)-1
}

// pos is s's index on the chain, or -1 when s is not on it.
func (s State) pos() int {
	if i := s.index(); i < len(chain) {
		return i
	}
	return -1
}

// index is s's index in States(), or len(States()) for an unknown state.
// A switch, because replay asks it for every effect.
func (s State) index() int {
	switch s {
	case Pending:
		return 0
	case Assigned:
		return 1
	case Planning:
		return 2
	case Validated:
		return 3
	case InProgress:
		return 4
	case Testing:
		return 5
	case QualityReview:
		return 6
	case Approved:
		return 7
	case Committing:
		return 8
	case Completed:
		return 9
	case CTOIntervention:
		return 10
	case HumanEscalation:
		return 11
	case Abandoned:
		return 12
	}
	return numStates
}

// numStates is how many states there are.
const numStates = 13

// next is the state after s on the chain, or "" when there is none.
func (s State) next() State {
	p := s.pos()
	if p < 0 || p == len(chain)-1 {
		return ""
	}
	return chain[p+1]
}

// prev is the state before s on the chain, or "" when there is none.
func (s State) prev() State {
	if p := s.pos(); p > 0 {
		return chain[p-1]
	}
	return ""
}

// Actor is who makes a move.
type Actor string

// Actors.
const (
	ActorAgent  Actor = "agent"  // the coding agent
	ActorHook   Actor = "hook"   // taskie's Stop hook, driven by plan phases
	ActorCTO    Actor = "cto"    // the CTO role: reviews stuck tasks
	ActorHuman  Actor = "human"  // a person at the terminal
	ActorSystem Actor = "system" // taskie itself (fast-forwards, automatic escalation)
)

// Actors returns every actor.
func Actors() []Actor {
	return []Actor{ActorAgent, ActorHook, ActorCTO, ActorHuman, ActorSystem}
}

// ParseActor reads an actor as logs and users write it.
func ParseActor(s string) (Actor, error) {
	a := Actor(strings.TrimSpace(s))
	if !a.Valid() {
		return "", fmt.Errorf("unknown actor %q; actors are %s", s, join(Actors()))
	}
	return a, nil
}

// Valid reports whether a is a known actor.
func (a Actor) Valid() bool {
	switch a {
	case ActorAgent, ActorHook, ActorCTO, ActorHuman, ActorSystem:
		return true
	}
	return false
}

// join lists values separated by commas.
func join[T ~string](vs []T) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}
