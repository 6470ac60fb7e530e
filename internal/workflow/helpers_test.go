package workflow

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// mkState builds a state; iter < 0 means phase_iteration null, "" and 0
// mean null for next and task.
func mkState(phase, next domain.Phase, task domain.TaskID, iter int, model domain.Model, clean int) *state.State {
	s := state.New()
	s.Phase = phase
	s.NextPhase = state.Opt(next)
	s.CurrentTask = state.Opt(task)
	if iter >= 0 {
		s.PhaseIteration = state.Int(iter)
	}
	s.ReviewModel = model
	s.ConsecutiveClean = clean
	s.Extra = map[string]json.RawMessage{}
	return s
}

// with returns a copy of s changed by fn.
func with(s *state.State, fn func(*state.State)) *state.State {
	c := s.Clone()
	fn(c)
	return c
}

var stateOpts = cmpopts.EquateEmpty()

// diffState compares two states field by field (nil and empty Extra equal).
func diffState(t *testing.T, what string, want, got *state.State) {
	t.Helper()
	if diff := cmp.Diff(want, got, stateOpts); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// unchanged fails when fn modified s; a nil s is only run.
func unchanged(t *testing.T, s *state.State, fn func()) {
	t.Helper()
	if s == nil {
		fn()
		return
	}
	before := s.Clone()
	fn()
	diffState(t, "input state was modified", before, s)
}

// okFacts builds the facts of a stop at which everything is in place: the
// plan validates, state.json is readable, the config is trusted and this
// stop holds the plan's review lock.
func okFacts(s *state.State) StopFacts {
	return StopFacts{State: s, TaskFileExists: true, AnyTaskFile: true, PendingOther: true, BlockCap: 40, Lock: LockHeld}
}

// factsWith returns okFacts(s) changed by fn.
func factsWith(s *state.State, fn func(*StopFacts)) StopFacts {
	f := okFacts(s)
	fn(&f)
	return f
}

// reviewsOf is the review files of a plan directory holding names.
func reviewsOf(names ...string) ReviewFiles {
	var r ReviewFiles
	for _, n := range names {
		r = append(r, plan.ParseFileName(n))
	}
	return r
}
