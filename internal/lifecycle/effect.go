package lifecycle

import (
	"fmt"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
)

// Kind is an effect's event kind, as written in events.jsonl's "event".
type Kind string

// Effect kinds. Every kind but FAILURE changes the task's state; each change
// is exactly one effect.
const (
	// KindCreated starts a task in pending.
	KindCreated Kind = events.TaskCreated
	// KindTransition is a move made with Move along a forward or failure row.
	KindTransition Kind = events.StateTransition
	// KindFailure counts one failure in From (= To); the state does not change.
	KindFailure Kind = events.Failure
	// KindCTO enters cto_intervention, automatically (no Action) or by an
	// explicit Escalate (Action escalate).
	KindCTO Kind = events.CTOIntervention
	// KindEscalated enters human_escalation, automatically or by Escalate.
	KindEscalated Kind = events.Escalated
	// KindRecovery is a recovery action's move; Meta.Action names it.
	KindRecovery Kind = events.Recovery
	// KindTimeout records that a task crossed a timeout level in its state
	// (Meta.Level, Meta.Limit); the state does not change. One per level
	// per state entry (TimeoutWarnings).
	KindTimeout Kind = events.TimeoutWarning
)

// Kinds returns every effect kind.
func Kinds() []Kind {
	return []Kind{KindCreated, KindTransition, KindFailure, KindCTO, KindEscalated, KindRecovery, KindTimeout}
}

// ParseKind reads an effect kind; other event kinds of the log are errors.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindCreated, KindTransition, KindFailure, KindCTO, KindEscalated, KindRecovery, KindTimeout:
		return k, nil
	}
	return "", fmt.Errorf("%q is not a lifecycle event; lifecycle events are %s", s, join(Kinds()))
}

// Moves reports whether effects of kind k change the task's state.
func (k Kind) Moves() bool { return k != KindFailure && k != KindCreated && k != KindTimeout }

// Action is something an actor does to a task; Allowed says who may.
type Action string

// Actions.
const (
	ActMove        Action = "move"
	ActFail        Action = "fail"
	ActRetry       Action = "retry"
	ActGuidedRetry Action = "guided_retry"
	ActRollback    Action = "rollback"
	ActSkip        Action = "skip"
	ActAbandon     Action = "abandon"
	ActResolve     Action = "resolve"
	ActEscalate    Action = "escalate"
)

// Meta is what an effect records beyond its move. Zero fields are absent.
type Meta struct {
	// Action names the recovery action of a RECOVERY effect, and is
	// escalate on an explicit CTO_INTERVENTION or ESCALATED.
	Action Action
	// Note is a guided retry's guidance.
	Note string
	// Failures is From's failure count after a FAILURE.
	Failures int
	// CTOAttempts is the task's CTO attempts after a RECOVERY that left
	// cto_intervention.
	CTOAttempts int
	// Head is the repository's HEAD on a move into committing (StampHead).
	Head string
	// Level, State and Limit describe a TIMEOUT_WARNING: the level crossed
	// (warning, alert, escalate), the state and its timeout ("4h0m0s").
	Level string
	State State
	Limit string
	// Agent is the agent a claim assigned the task to (Assign).
	Agent string
}

// Map returns m as the "meta" object of an event, without zero fields.
func (m Meta) Map() map[string]any { return events.Meta(m.payload()) }

// payload is m as the log writes it.
func (m Meta) payload() events.LifecycleMeta {
	p := events.LifecycleMeta{Action: string(m.Action), Note: m.Note, Failures: m.Failures, CTOAttempts: m.CTOAttempts,
		Head: m.Head, Level: m.Level, Agent: m.Agent}
	if m.Level != "" {
		p.State, p.Limit = string(m.State), m.Limit
	}
	return p
}

// Effect is one change to one task, to be appended to the event log. A Log
// applies it back.
type Effect struct {
	Task   domain.TaskID
	Kind   Kind
	At     time.Time
	From   State
	To     State
	Actor  Actor
	Reason string
	Meta   Meta
}

// String renders e for logs and test failures.
func (e Effect) String() string {
	s := fmt.Sprintf("task %s %s %s → %s by %s", e.Task, e.Kind, e.From, e.To, e.Actor)
	if e.Meta.Action != "" {
		s += " (" + string(e.Meta.Action) + ")"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}
