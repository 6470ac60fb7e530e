package lifecycle

import (
	"maps"
	"time"
)

// TimeMetrics are a task's time metrics at a moment (docs/lifecycle.md#queries).
type TimeMetrics struct {
	// State is the task's state and InState the time it has spent there.
	State   State
	InState time.Duration
	// Total is the task's working life: the sum of ByState.
	Total time.Duration
	// ByState is the time spent per state, the current one included. The
	// time after completed or abandoned is not in it: a finished task's
	// total stops when it finished.
	ByState map[State]time.Duration
}

// Metrics computes a task's time metrics at now from its record, so from a
// replayed record as well as a live one.
func Metrics(t Task, now time.Time) TimeMetrics {
	m := TimeMetrics{
		State:   t.State,
		InState: max(now.Round(0).Sub(t.Since), 0),
		ByState: maps.Clone(t.Entered),
	}
	if m.ByState == nil {
		m.ByState = map[State]time.Duration{}
	}
	if t.State != Completed && t.State != Abandoned {
		m.ByState[t.State] += m.InState
	}
	for _, d := range m.ByState {
		m.Total += d
	}
	return m
}
