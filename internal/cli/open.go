package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/project"
	"github.com/taskie-dev/taskie/internal/state"
)

// repo finds the project from the working directory.
func (g *globals) repo() (*plan.Repo, error) {
	cwd, err := g.cwd()
	if err != nil {
		return nil, err
	}
	r, err := project.Open(cwd)
	if err != nil {
		return nil, usageErr(err, "run `taskie init` in the project root, or pass -C <dir>")
	}
	return r, nil
}

// openPlan returns the plan named by id, by --plan, or the most recent one.
func (g *globals) openPlan(id string) (*project.Plan, error) {
	r, err := g.repo()
	if err != nil {
		return nil, err
	}
	if id == "" {
		id = g.plan
	}
	p, err := project.Get(r, id)
	if err != nil {
		return nil, usageErr(err, "")
	}
	return p, nil
}

// stateErr explains a state.json problem and what to do about it.
func stateErr(p *project.Plan, err error) error {
	var se *state.SyntaxError
	var fe *state.FieldError
	switch {
	case errors.Is(err, state.ErrNotFound):
		return usageErr(err, fmt.Sprintf("plan %s has no state.json: `taskie continue` suggests where to start, `taskie start <task>` or `taskie done <phase>` creates it", p.ID))
	case errors.As(err, &se), errors.As(err, &fe):
		return usageErr(err, "the file was left untouched: fix it by hand at that position (`taskie validate` re-checks it), or rebuild it from events.jsonl with `taskie recover --write --force`")
	}
	return err
}

// change records a state change made by the CLI.
func change(p *project.Plan, reason string, create bool, fn func(*state.State) (*state.State, error), extra ...events.Event) (*state.State, *state.State, error) {
	claim := func(s *state.State) (*state.State, error) {
		n, err := fn(s)
		// A command run by an agent session (SessionStart exported its id)
		// claims an automated plan for that session, so the session's
		// stops drive this plan and no other session's stops do.
		if sid := os.Getenv("TASKIE_SESSION_ID"); err == nil && sid != "" && n.Next() != "" && n.SessionID != sid {
			n = n.Clone()
			n.SessionID = sid
		}
		return n, err
	}
	old, cur, err := p.Change("cli", reason, create, claim, extra...)
	var ee *project.EventsError
	if errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "taskie: warning: %v\n", ee)
		err = nil
	}
	if err != nil {
		if _, ok := err.(*exitError); ok {
			return nil, nil, err
		}
		var se *state.SyntaxError
		var fe *state.FieldError
		if errors.As(err, &se) || errors.As(err, &fe) {
			return nil, nil, stateErr(p, err)
		}
		return nil, nil, usageErr(err, "")
	}
	return old, cur, nil
}
