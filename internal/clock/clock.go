// Package clock is the time taskie acts at: the real clock, or the fixed
// time TASKIE_NOW names, for tests and demonstrations of timeouts. It is
// read from the environment once, where a process starts (cli.Run, the
// Stop hook's fast path), and handed down as a value: to the commands, the
// hooks (their plan choice and their events alike) and the stores, which
// stamp events with the time their caller gives.
package clock

import (
	"fmt"
	"strings"
	"time"
)

// Env names the variable that fixes the clock (RFC 3339).
const Env = "TASKIE_NOW"

// TestEnv, set to 1, lets Env move the lease clock too. Env alone moves
// events, lifecycle moves and timeouts but never a lease: an agent that set
// it could otherwise take over a live lease, or hold its own until 2099.
const TestEnv = "TASKIE_TEST_CLOCK"

// Clock is a source of "now", to the second, in UTC. The zero Clock is the
// real one.
type Clock struct {
	at    time.Time // fixed time; zero for the real clock
	lease bool      // TestEnv=1: leases take at too
}

// Real is the machine's clock.
func Real() Clock { return Clock{} }

// At is a clock stopped at t (leases keep the real clock).
func At(t time.Time) Clock { return Clock{at: t.UTC().Truncate(time.Second)} }

// Now returns the time, to the second, in UTC.
func (c Clock) Now() time.Time {
	if c.at.IsZero() {
		return time.Now().UTC().Truncate(time.Second)
	}
	return c.at
}

// Fixed reports whether the clock is stopped (TASKIE_NOW).
func (c Clock) Fixed() bool { return !c.at.IsZero() }

// Lease returns the clock of lease decisions: c itself when TestEnv=1 was
// set with Env, else the real clock.
func (c Clock) Lease() Clock {
	if c.lease {
		return c
	}
	return Real()
}

// FromEnv reads Env and TestEnv through getenv. An unset Env is the real
// clock; a value that is no RFC 3339 time is an error (and the real clock),
// never silently ignored: a test must not run on the real clock unawares.
func FromEnv(getenv func(string) string) (Clock, error) {
	v := strings.TrimSpace(getenv(Env))
	if v == "" {
		return Real(), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return Real(), fmt.Errorf("%s=%q is not an RFC 3339 time (like 2026-03-01T09:00:00Z)", Env, v)
	}
	c := At(t)
	c.lease = getenv(TestEnv) == "1"
	return c, nil
}
