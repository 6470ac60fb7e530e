package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFromPhase(t *testing.T) {
	cases := []struct {
		from  State
		ev    PhaseEvent
		to    State
		steps []State // the To of each effect
		err   error
	}{
		{Pending, TaskStarted, InProgress, []State{Assigned, Planning, Validated, InProgress}, nil},
		{Validated, TaskStarted, InProgress, []State{InProgress}, nil},
		{InProgress, TaskStarted, InProgress, nil, nil},
		{QualityReview, TaskStarted, QualityReview, nil, nil},
		{InProgress, ReviewStarted, QualityReview, []State{Testing, QualityReview}, nil},
		{QualityReview, ReviewStarted, QualityReview, nil, nil},
		{Assigned, ReviewStarted, QualityReview, []State{Planning, Validated, InProgress, Testing, QualityReview}, nil},
		{QualityReview, ReviewFailed, InProgress, []State{QualityReview, InProgress}, nil},
		{Testing, ReviewFailed, InProgress, []State{QualityReview, QualityReview, InProgress}, nil},
		{Approved, ReviewFailed, Approved, nil, ErrIllegal},
		{QualityReview, ReviewPassed, Committing, []State{Approved, Committing}, nil},
		{Committing, ReviewPassed, Committing, nil, nil},
		{Committing, CommitSeen, Completed, []State{Completed}, nil},
		{Approved, CommitSeen, Completed, []State{Committing, Completed}, nil},
		{Completed, CommitSeen, Completed, nil, nil},
		{CTOIntervention, ReviewStarted, CTOIntervention, nil, ErrIllegal},
		{HumanEscalation, TaskStarted, HumanEscalation, nil, ErrIllegal},
		{Abandoned, CommitSeen, Abandoned, nil, ErrIllegal},
		{Pending, "deployed", Pending, nil, ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(string(tc.from)+"/"+string(tc.ev), func(t *testing.T) {
			task := reach(t, tc.from, InProgress)
			got, effs, err := FromPhase(task, tc.ev, ActorHook, task.Since.Add(time.Minute))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got.State != tc.to {
				t.Errorf("state %s, want %s", got.State, tc.to)
			}
			var steps []State
			for _, e := range effs {
				steps = append(steps, e.To)
				if e.Actor != ActorHook {
					t.Errorf("effect by %s: %v", e.Actor, e)
				}
			}
			if diff := cmp.Diff(tc.steps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReviewLoopEscalates drives the docs/lifecycle.md loop from the phases only: two
// failed reviews return to in_progress, the third goes to the CTO.
func TestReviewLoopEscalates(t *testing.T) {
	task, log := reachLog(t, Pending, "")
	now := t0
	do := func(r result) {
		t.Helper()
		task, log = r.ok(t), append(log, r.effs...)
	}
	ev := func(e PhaseEvent) {
		t.Helper()
		now = now.Add(time.Minute)
		do(res(FromPhase(task, e, ActorHook, now)))
	}
	ev(TaskStarted)
	for range 3 {
		ev(ReviewStarted)
		ev(ReviewFailed)
	}
	if task.State != CTOIntervention || task.EscalatedFrom != QualityReview {
		t.Fatalf("after 3 failed reviews: %s from %s", task.State, task.EscalatedFrom)
	}
	if _, _, err := FromPhase(task, ReviewStarted, ActorHook, now); !errors.Is(err, ErrIllegal) {
		t.Errorf("phases moved an escalated task: %v", err)
	}
	now = now.Add(time.Minute)
	do(res(Retry(task, ActorCTO, "", now)))
	ev(ReviewPassed)
	ev(CommitSeen)
	if task.State != Completed {
		t.Errorf("final state %s", task.State)
	}
	if vs := CheckLog(log); len(vs) > 0 {
		t.Errorf("CheckLog: %v", vs)
	}
}
