package lifecycle

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Timeouts are the per-state timeouts of docs/lifecycle.md#timeouts. A state without one (the
// terminal states, or one set to 0) never times out. They are warnings,
// never hard stops.
type Timeouts map[State]time.Duration

// DefaultTimeouts returns domain.DefaultLifecycleTimeouts as Timeouts.
func DefaultTimeouts() Timeouts {
	out := Timeouts{}
	for k, d := range domain.DefaultLifecycleTimeouts() {
		out[State(k)] = d
	}
	return out
}

// ParseTimeouts returns the defaults with overrides applied, as config's
// lifecycle_timeouts holds them: state name → Go duration ("45m", "6h").
// "0" removes a state's timeout. Unknown states, terminal states, bad or
// negative durations are errors naming the key.
func ParseTimeouts(overrides map[string]string) (Timeouts, error) {
	out := DefaultTimeouts()
	var errs []error
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d, err := parseTimeout(k, overrides[k])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[State(k)] = d
		if d == 0 {
			delete(out, State(k))
		}
	}
	return out, errors.Join(errs...)
}

// parseTimeout reads one override.
func parseTimeout(key, value string) (time.Duration, error) {
	s := State(key)
	switch {
	case !s.Valid():
		return 0, fmt.Errorf("lifecycle_timeouts.%s: unknown state; states with a timeout are %s", key, join(timed()))
	case s.Terminal():
		return 0, fmt.Errorf("lifecycle_timeouts.%s: %s is terminal and has no timeout", key, s)
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		return 0, fmt.Errorf("lifecycle_timeouts.%s: %q is not a duration (write it like 30m or 4h)", key, value)
	}
	if d < 0 {
		return 0, fmt.Errorf("lifecycle_timeouts.%s: %s is negative", key, d)
	}
	return d, nil
}

// timed lists the states that can have a timeout.
func timed() []State {
	var out []State
	for _, s := range States() {
		if !s.Terminal() {
			out = append(out, s)
		}
	}
	return out
}

// Level is how far a task is into its state's timeout.
type Level int

// Levels, in order.
const (
	LevelOK       Level = iota // under 80 %, or no timeout
	LevelWarning               // 80 % or more
	LevelAlert                 // 100 % or more: the task is stuck
	LevelEscalate              // 150 % or more: consider escalating
)

// String returns "ok", "warning", "alert" or "escalate".
func (l Level) String() string {
	switch l {
	case LevelOK:
		return "ok"
	case LevelWarning:
		return "warning"
	case LevelAlert:
		return "alert"
	case LevelEscalate:
		return "escalate"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel reads a level as String writes it.
func ParseLevel(s string) (Level, error) {
	for l := LevelOK; l <= LevelEscalate; l++ {
		if l.String() == s {
			return l, nil
		}
	}
	return LevelOK, fmt.Errorf("unknown timeout level %q; levels are ok, warning, alert, escalate", s)
}

// timeoutWarnings logs the levels of st that t has not logged yet.
func timeoutWarnings(t Task, st TimeoutStatus, now time.Time) (Task, []Effect, error) {
	if st.Level <= t.Warned || t.State.Terminal() {
		return t, nil, nil
	}
	now, err := begin(t, ActorSystem, ActFail, now)
	if err != nil {
		return t, nil, err
	}
	var effs []Effect
	for l := t.Warned + 1; l <= st.Level; l++ {
		e := t.effect(KindTimeout, t.State, ActorSystem, fmt.Sprintf("%s of %s", short(st.Elapsed), short(st.Limit)), now)
		e.Meta.Level, e.Meta.State, e.Meta.Limit = l.String(), t.State, st.Limit.String()
		effs = append(effs, e)
	}
	return apply(t, true, effs)
}

// short renders a duration without zero units: 4h, 45m, 1h30m.
func short(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// TimeoutStatus is a task's time in its state against the state's timeout.
// Limit is 0 when the state has none.
type TimeoutStatus struct {
	State   State
	Level   Level
	Elapsed time.Duration
	Limit   time.Duration
	// Queued: a pending task not ready yet (ReadyAt): it waits its turn
	// and has no timeout; Elapsed is its time in pending.
	Queued bool
}

// Stuck reports whether the task is over its timeout (`taskie query --stuck`).
func (s TimeoutStatus) Stuck() bool { return s.Level >= LevelAlert }

// Status returns how long the task has been in its state at now and the
// level reached: warning at 80 % of the timeout, alert at 100 %, escalate
// at 150 %, compared exactly.
func Status(t Task, now time.Time, timeouts Timeouts) TimeoutStatus {
	st := TimeoutStatus{State: t.State, Elapsed: max(now.Round(0).Sub(t.Since), 0), Limit: timeouts[t.State]}
	if st.Limit <= 0 {
		st.Limit = 0
		return st
	}
	switch {
	case atLeast(st.Elapsed, st.Limit, 3, 2):
		st.Level = LevelEscalate
	case atLeast(st.Elapsed, st.Limit, 1, 1):
		st.Level = LevelAlert
	case atLeast(st.Elapsed, st.Limit, 4, 5):
		st.Level = LevelWarning
	}
	return st
}

// atLeast reports whether elapsed ≥ limit × num / den, in 128-bit
// arithmetic so that no duration overflows. Both durations are ≥ 0.
func atLeast(elapsed, limit time.Duration, num, den uint64) bool {
	h1, l1 := bits.Mul64(uint64(elapsed), den)
	h2, l2 := bits.Mul64(uint64(limit), num)
	return h1 > h2 || (h1 == h2 && l1 >= l2)
}
