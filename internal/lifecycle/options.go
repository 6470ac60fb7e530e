package lifecycle

import "time"

// Option is one action an actor may take on a task now; To is the target
// state of a move or a rollback, "" for the actions that take none.
type Option struct {
	Action Action
	To     State
}

// Options lists what actor may do to the task now, for a refused move to
// say what is legal instead: moves along the chain and failure moves (in
// table order), then fail, retry,
// rollback (per target, latest first), skip, escalate, resolve and abandon.
// Each is found by making the move on a copy, through the same functions a
// command calls, so the list cannot disagree with them: an action the actor
// may not take, or that the task's state refuses, is left out. (A guided
// retry is a retry with a note, so it is not listed apart.)
func Options(t Task, actor Actor) []Option {
	if !actor.Valid() || !t.State.Valid() {
		return nil
	}
	now := t.Since
	if now.IsZero() {
		now = time.Unix(0, 0).UTC()
	}
	ok := func(_ Task, _ []Effect, err error) bool { return err == nil }
	var out []Option
	for _, s := range Next(t) {
		// Moves into or out of escalation are listed as their actions.
		if tr, _ := lookup(t.State, s); tr.Class != ClassForward && tr.Class != ClassFailure {
			continue
		}
		if ok(Move(t, s, actor, "", now)) {
			out = append(out, Option{ActMove, s})
		}
	}
	if ok(Fail(t, actor, "", now)) {
		out = append(out, Option{Action: ActFail})
	}
	if ok(Retry(t, actor, "", now)) {
		out = append(out, Option{Action: ActRetry})
	}
	for i := len(chain) - 2; i >= 0; i-- {
		if ok(Rollback(t, chain[i], actor, "", now)) {
			out = append(out, Option{ActRollback, chain[i]})
		}
	}
	for _, a := range []struct {
		act Action
		fn  func(Task, Actor, string, time.Time) (Task, []Effect, error)
	}{{ActSkip, Skip}, {ActEscalate, Escalate}, {ActResolve, Resolve}, {ActAbandon, Abandon}} {
		if ok(a.fn(t, actor, "", now)) {
			out = append(out, Option{Action: a.act})
		}
	}
	return out
}

// ActorsWithOptions lists the actors other than actor who could act on the
// task now, for a refusal that leaves actor nothing to do.
func ActorsWithOptions(t Task, actor Actor) []Actor {
	var out []Actor
	for _, a := range Actors() {
		if a != actor && a != ActorSystem && len(Options(t, a)) > 0 {
			out = append(out, a)
		}
	}
	return out
}
