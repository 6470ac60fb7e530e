package parallel

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// ids converts ints to task ids, for fixtures.
func ids(ns ...int) []domain.TaskID {
	if len(ns) == 0 {
		return nil
	}
	out := make([]domain.TaskID, len(ns))
	for i, n := range ns {
		out[i] = domain.TaskID(n)
	}
	return out
}

// pending is a medium-priority pending task with dependencies.
func pending(id int, deps ...int) Task {
	return Task{ID: domain.TaskID(id), Status: "pending", Priority: PriorityMedium, Deps: ids(deps...)}
}

// with returns t with the given files.
func (t Task) with(files ...string) Task { t.Files = files; return t }

// prio returns t with priority p.
func (t Task) prio(p int) Task { t.Priority = p; return t }

// status returns t with status s.
func (t Task) status(s string) Task { t.Status = s; return t }

// waveIDs summarises waves as lists of ints.
func waveIDs(ws []Wave) [][]int {
	out := make([][]int, len(ws))
	for i, w := range ws {
		for _, id := range w.IDs() {
			out[i] = append(out[i], int(id))
		}
	}
	return out
}

// reasonsOf returns the reasons of task id in ws.
func reasonsOf(ws []Wave, id int) []string {
	for _, w := range ws {
		for _, p := range w.Tasks {
			if int(p.Task.ID) == id {
				return p.Reasons
			}
		}
	}
	return nil
}

// claim is a lease of agent on task that expires at t0+left.
func claim(task int, agent string, left time.Duration) Claim {
	return Claim{Task: domain.TaskID(task), Agent: agent, Acquired: t0.Add(-time.Hour),
		Expires: t0.Add(left), Heartbeat: t0.Add(left - domain.DefaultLeaseTTL)}
}

// Kept out of the binary: claims go through the stores (DecideClaim under
// their lock), results through `taskie task result`.

// Next picks the task an agent gets from "claim --next" and decides the
// claim. An agent that already holds a live lease on a task it may work on
// gets that task back (Renewed; see OwnLive), so a restarted agent resumes
// its work; else the first ready task is claimed, taking over an expired
// lease if there is one. ok is false when no task is ready; the decision
// can still be Refused (an empty agent name).
func Next(tasks []Task, claims []Claim, agent string, now time.Time, ttl time.Duration) (d ClaimDecision, ok bool) {
	held := leases(claims)
	if id, found := ownLive(tasks, held, agent, now, nil); found {
		c := held[id]
		return DecideClaim(id, &c, agent, now, ttl), true
	}
	ready := Ready(tasks, claims, now)
	if len(ready) == 0 {
		return ClaimDecision{}, false
	}
	id := ready[0].ID
	if c, claimed := held[id]; claimed {
		return DecideClaim(id, &c, agent, now, ttl), true
	}
	return DecideClaim(id, nil, agent, now, ttl), true
}

// ParseResultRef reads a reference written by ResultRef.
func ParseResultRef(line string) (Result, error) {
	var r Result
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Result{}, fmt.Errorf("task result %q: %w", clipRef(line), err)
	}
	if dec.More() {
		return Result{}, fmt.Errorf("task result %q: text after the JSON object", clipRef(line))
	}
	if r.Task <= 0 {
		return Result{}, fmt.Errorf("task result %q: no task id", clipRef(line))
	}
	return r, nil
}

func clipRef(s string) string {
	if r := []rune(strings.TrimSpace(s)); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return strings.TrimSpace(s)
}
