package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/store"
)

// A shared store claims in one round trip (docs/fleet.md, "One round
// trip"): the claim, its fencing token, its coordination event and its
// lifecycle move in one statement. The lifecycle machine decides the move
// beforehand for every state the task's shared record may be in
// (lifeMoves); the store records the one of the state it finds. The
// clone's own files are left alone: the database is the record every
// clone reads.

// lifeClaimer is a shared store that claims the next task in one round trip.
type lifeClaimer interface {
	ClaimNextLife(ctx context.Context, p store.PlanKey, ready []domain.TaskID, agent string, ttl time.Duration, f domain.Fence, moves store.LifeMoves) (domain.ClaimDecision, bool, []string, error)
}

// lifeMoves decides step for every state a task's shared record may be
// in: none yet (created in pending first), each state held by another
// agent, and assigned to agent. A state step refuses or leaves alone has
// no lines.
func lifeMoves(plan string, step lifeStep, agent string) store.LifeMoves {
	m := store.LifeMoves{Lines: map[string][][]byte{}}
	at := store.TimeSentinel
	id := domain.TaskID(store.TaskSentinel)
	add := func(key string, t lifecycle.Task, pre []lifecycle.Effect) {
		_, effs, err := step(t, at)
		if err != nil || len(effs) == 0 {
			return
		}
		for _, e := range lifecycle.Events(append(pre, effs...)) {
			e.Plan = plan
			if line, err := json.Marshal(e); err == nil {
				m.Lines[key] = append(m.Lines[key], line)
			}
		}
	}
	if t, created, err := lifecycle.New(id, lifecycle.ActorAgent, at); err == nil {
		add(store.LifeKey("", false), t, created)
	}
	for _, s := range lifecycle.States() {
		t := lifecycle.Task{ID: id, State: s, Since: at, Created: at, Failures: map[lifecycle.State]int{},
			Entered: map[lifecycle.State]time.Duration{}, Agent: "\x00another agent"}
		add(store.LifeKey(string(s), false), t, nil)
		if s == lifecycle.Assigned {
			t.Agent = agent
			add(store.LifeKey(string(s), true), t, nil)
		}
	}
	return m
}

// sayLife says on stderr what the lifecycle lines a store recorded moved.
func sayLife(s *Streams, lines []string) {
	for _, l := range lines {
		var e events.Event
		if json.Unmarshal([]byte(l), &e) != nil || e.Event == string(lifecycle.KindCreated) {
			continue
		}
		fmt.Fprintf(s.Err, "%s\n", history.Message(e))
	}
}
