package lifecycle

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// t0 is the fixed clock every test starts from.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// result is what every move returns.
type result struct {
	t    Task
	effs []Effect
	err  error
}

func res(t Task, effs []Effect, err error) result { return result{t, effs, err} }

// ok fails the test on an error and returns the task.
func (r result) ok(tb testing.TB) Task {
	tb.Helper()
	if r.err != nil {
		tb.Fatalf("unexpected error: %v", r.err)
	}
	if vs := Check(r.t); len(vs) > 0 {
		tb.Fatalf("record breaks invariants: %v", vs)
	}
	return r.t
}

// fresh is task 1, created at t0.
func fresh(tb testing.TB) Task {
	tb.Helper()
	return res(New(1, ActorSystem, t0)).ok(tb)
}

// reach returns task 1 in state s, reached by real moves a minute apart.
// For cto_intervention and human_escalation, from is the state escalated
// from; otherwise it is ignored.
func reach(tb testing.TB, s, from State) Task {
	tb.Helper()
	t, _ := reachLog(tb, s, from)
	return t
}

// reachLog is reach with the effects that built the task.
func reachLog(tb testing.TB, s, from State) (Task, []Effect) {
	tb.Helper()
	var log []Effect
	do := func(r result) Task {
		tb.Helper()
		log = append(log, r.effs...)
		return r.ok(tb)
	}
	t := do(res(New(1, ActorSystem, t0)))
	now := t0
	target := s
	switch s {
	case CTOIntervention, HumanEscalation:
		target = from
	case Abandoned:
		target = InProgress
	}
	for t.State != target {
		now = now.Add(time.Minute)
		t = do(res(Move(t, t.State.next(), ActorAgent, "step", now)))
	}
	now = now.Add(time.Minute)
	switch s {
	case CTOIntervention:
		t = do(res(Escalate(t, ActorAgent, "stuck", now)))
	case HumanEscalation:
		t = do(res(Escalate(t, ActorAgent, "stuck", now)))
		t = do(res(Escalate(t, ActorCTO, "cannot help", now)))
	case Abandoned:
		t = do(res(Abandon(t, ActorHuman, "not needed", now)))
	}
	return t, log
}

// kinds lists the kinds of effects.
func kinds(effs []Effect) []Kind {
	var out []Kind
	for _, e := range effs {
		out = append(out, e.Kind)
	}
	return out
}

// sim makes random sequences of actions on several tasks, keeping the
// records the actions return and the effects they emit, in order.
type sim struct {
	rng   *rand.Rand
	now   time.Time
	tasks map[domain.TaskID]Task
	live  []domain.TaskID
	log   []Effect
	next  domain.TaskID
	// after, when set, is called with every action's input and result.
	after func(before Task, r result)
}

func newSim(seed uint64) *sim {
	return &sim{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: t0, tasks: map[domain.TaskID]Task{}, next: 1}
}

// create adds a task.
func (s *sim) create() {
	t, effs, err := New(s.next, ActorSystem, s.now)
	if err != nil {
		panic(err)
	}
	s.tasks[t.ID] = t
	s.live = append(s.live, t.ID)
	s.log = append(s.log, effs...)
	s.next++
}

// step advances the clock and tries one random action on a random live
// task, keeping maxLive tasks alive.
func (s *sim) step(maxLive int) {
	s.now = s.now.Add(time.Duration(s.rng.IntN(900)) * time.Second)
	if len(s.live) < maxLive {
		s.create()
		return
	}
	i := s.rng.IntN(len(s.live))
	before := s.tasks[s.live[i]]
	r := s.action(before)
	if s.after != nil {
		s.after(before, r)
	}
	if r.err != nil {
		return
	}
	s.tasks[before.ID] = r.t
	s.log = append(s.log, r.effs...)
	if r.t.State == Completed || r.t.State == Abandoned {
		s.live[i] = s.live[len(s.live)-1]
		s.live = s.live[:len(s.live)-1]
	}
}

// action picks a weighted random action with a random actor; many are
// refused or illegal, which the caller checks leave the task alone.
func (s *sim) action(t Task) result {
	actor := Actors()[s.rng.IntN(5)]
	states := States()
	switch n := s.rng.IntN(100); {
	case n < 30:
		if next := Next(t); len(next) > 0 {
			return res(Move(t, next[s.rng.IntN(len(next))], actor, "move", s.now))
		}
		return res(Move(t, Completed, actor, "move", s.now))
	case n < 35:
		return res(Move(t, states[s.rng.IntN(len(states))], actor, "any move", s.now))
	case n < 55:
		return res(Fail(t, actor, "failed", s.now))
	case n < 62:
		return res(Retry(t, actor, "retry", s.now))
	case n < 66:
		return res(GuidedRetry(t, actor, "try the other API", s.now))
	case n < 71:
		return res(Rollback(t, chain[s.rng.IntN(9)], actor, "rollback", s.now))
	case n < 75:
		return res(Skip(t, actor, "skip", s.now))
	case n < 76:
		return res(Abandon(t, actor, "abandon", s.now))
	case n < 82:
		return res(Resolve(t, actor, "resolved", s.now))
	case n < 85:
		return res(Escalate(t, actor, "help", s.now))
	}
	evs := []PhaseEvent{TaskStarted, ReviewStarted, ReviewFailed, ReviewPassed, CommitSeen}
	return res(FromPhase(t, evs[s.rng.IntN(len(evs))], actor, s.now))
}
