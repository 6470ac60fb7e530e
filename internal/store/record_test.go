package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
)

// TestRecord checks what a change writes, worked out without I/O: the
// events (a checkpoint of a hand edit, the commit event and its
// fingerprints), the files in order, state.json last, and the refusals.
func TestRecord(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	earlier := now.Add(-time.Hour)
	const tasks = "| Id | Status | Description |\n|---|---|---|\n| 1 | done | one |\n| 2 | pending | two |\n"
	const tasksDone = "| Id | Status | Description |\n|---|---|---|\n| 1 | done | one |\n| 2 | done | two |\n"
	oldRaw := []byte(`{"phase":"next-task","current_task":"1","next_phase":"code-review"}` + "\n")
	old, err := state.Decode(state.FileName, oldRaw)
	if err != nil {
		t.Fatal(err)
	}
	review := old.Clone()
	review.Phase, review.NextPhase = domain.CodeReview, state.Opt[domain.Phase](domain.PostCodeReview)
	reviewRaw := review.Encode()
	model := old.Clone()
	model.MaxReviews = 3
	created := state.New()
	created.Phase = domain.NextTask
	createdRaw := created.Encode()

	sha, tsha := Hash(oldRaw), Hash([]byte(tasks))
	// at is a snapshot of the plan: state.json, tasks.md and the log's
	// last commit as read under the plan lock.
	at := func(last *events.Event) *Snapshot {
		return &Snapshot{Plan: "p", State: old.Clone(), StateRaw: oldRaw, TasksRaw: []byte(tasks),
			Version: Version{State: sha, Tasks: tsha}, last: last}
	}
	atLast := at(&events.Event{Event: events.PhaseChange, SHA: sha, Prev: "s0"})
	noState := &Snapshot{Plan: "p", StateErr: state.ErrNotFound, TasksRaw: []byte(tasks), Version: Version{Tasks: tsha}}
	on := found{StateFile: "i1", TasksFile: "i2"}
	stamp := func(e events.Event) events.Event {
		e.Plan = "p"
		if e.TS.IsZero() {
			e.TS = now
		}
		return e
	}
	arch := &events.Archive{Dir: ".taskie/archive/p/task-1-code-review-x", Files: []string{"code-review-1.md"}}

	tests := []struct {
		name string
		s    *Snapshot
		c    Change
		on   found
		want commit
		err  error
	}{{
		name: "a phase change logs the fields set, both fingerprints and the file found",
		s:    atLast, c: Change{Actor: "hook", State: review}, on: on,
		want: commit{Plan: "p", State: review, StateRaw: reviewRaw, Events: []events.Event{stamp(events.Event{
			Event: events.PhaseChange, Task: "1", From: "next-task", To: "code-review", Actor: "hook",
			Set: state.DiffOf(old, review).Set, Prev: sha, SHA: Hash(reviewRaw), PrevFile: "i1"})}},
	}, {
		name: "a field set keeps the phase",
		s:    atLast, c: Change{State: model, Meta: map[string]any{"field": "max_reviews"}},
		want: commit{Plan: "p", State: model, StateRaw: model.Encode(), Events: []events.Event{stamp(events.Event{
			Event: events.FieldSet, Task: "1", From: "next-task", To: "next-task", Meta: map[string]any{"field": "max_reviews"},
			Set: state.DiffOf(old, model).Set, Prev: sha, SHA: Hash(model.Encode())})}},
	}, {
		name: "state.json edited since the last commit is checkpointed first",
		s:    at(&events.Event{Event: events.PhaseChange, SHA: "other", Prev: "s0"}), c: Change{State: review},
		want: commit{Plan: "p", State: review, StateRaw: reviewRaw, Events: []events.Event{
			stamp(events.Event{Event: events.Checkpoint, Actor: "taskie", Reason: "state.json as found (changed outside taskie or by an older version)",
				Set: state.Full(old).Set, SHA: sha}),
			stamp(events.Event{Event: events.PhaseChange, Task: "1", From: "next-task", To: "code-review",
				Set: state.DiffOf(old, review).Set, Prev: sha, SHA: Hash(reviewRaw)})}},
	}, {
		name: "state.json put back to before the last commit is kept as found",
		s:    at(&events.Event{Event: events.PhaseChange, SHA: "other", Prev: sha}), c: Change{State: review},
		want: commit{Plan: "p", State: review, StateRaw: reviewRaw, Events: []events.Event{
			stamp(events.Event{Event: events.Checkpoint, Actor: "taskie", Reason: "state.json restored by hand to the state before the last change: kept as found",
				Set: state.Full(old).Set, SHA: sha}),
			stamp(events.Event{Event: events.PhaseChange, Task: "1", From: "next-task", To: "code-review",
				Set: state.DiffOf(old, review).Set, Prev: sha, SHA: Hash(reviewRaw)})}},
	}, {
		name: "statuses alone replace tasks.md, its old bytes kept to put back",
		s:    atLast, c: Change{Statuses: map[domain.TaskID]string{2: "done", 1: "done"}}, on: on,
		want: commit{Plan: "p",
			Events: []events.Event{stamp(events.Event{Event: events.TaskStatus, Task: "1", From: "next-task", To: "next-task",
				Tasks: map[string]string{"2": "done"}, Prev: sha, SHA: sha, TPrev: tsha, TSHA: Hash([]byte(tasksDone)), TPrevFile: "i2"})},
			Writes: []fileWrite{{Rel: ".taskie/plans/p/tasks.md", Data: []byte(tasksDone), Old: []byte(tasks)}}},
	}, {
		name: "statuses already set and no events write nothing",
		s:    atLast, c: Change{Statuses: map[domain.TaskID]string{1: "done"}},
		want: commit{Plan: "p", Events: []events.Event{}},
	}, {
		name: "files outside the plan first (their directory made), then plan files by name; no commit event",
		s:    atLast, c: Change{Files: map[string][]byte{"task-2.md": []byte("b"), "plan.md": []byte("a")},
			Outside: map[string][]byte{".taskie/progress/p/2.md": []byte("c")},
			Events:  []events.Event{{Event: events.Progress, TS: earlier}}},
		want: commit{Plan: "p", Events: []events.Event{{Event: events.Progress, Plan: "p", TS: earlier}},
			Writes: []fileWrite{
				{Rel: ".taskie/progress/p/2.md", Data: []byte("c"), MakeDir: true},
				{Rel: ".taskie/plans/p/plan.md", Data: []byte("a")},
				{Rel: ".taskie/plans/p/task-2.md", Data: []byte("b")}}},
	}, {
		name: "a new cycle while a review runs is refused",
		s:    atLast, c: Change{State: review, NewCycle: true, Archive: arch}, on: found{ReviewRunning: true},
		err: ErrReviewRunning,
	}, {
		name: "the review's own new cycle moves the earlier files and logs them",
		s:    atLast, c: Change{State: review, NewCycle: true, DuringReview: true, Archive: arch},
		want: commit{Plan: "p", State: review, StateRaw: reviewRaw, Archive: arch, Events: []events.Event{stamp(events.Event{
			Event: events.PhaseChange, Task: "1", From: "next-task", To: "code-review", Archive: arch,
			Set: state.DiffOf(old, review).Set, Prev: sha, SHA: Hash(reviewRaw)})}},
	}, {
		name: "a missing state.json gets one only when the change creates it",
		s:    noState, c: Change{State: created},
		err: state.ErrNotFound,
	}, {
		name: "a created state.json: a phase change from nothing",
		s:    noState, c: Change{State: created, Create: true, Kind: events.PlanCreated}, on: on,
		want: commit{Plan: "p", State: created, StateRaw: createdRaw, Events: []events.Event{stamp(events.Event{
			Event: events.PlanCreated, To: "next-task", Set: state.Full(created).Set, SHA: Hash(createdRaw), PrevFile: "i1"})}},
	}, {
		name: "a replace is logged whole and checkpoints nothing",
		s:    at(nil), c: Change{State: review, Replace: true, Kind: events.Recovered},
		want: commit{Plan: "p", State: review, StateRaw: reviewRaw, Events: []events.Event{stamp(events.Event{
			Event: events.Recovered, Task: "1", To: "code-review", Set: state.Full(review).Set, Prev: sha, SHA: Hash(reviewRaw)})}},
	}, {
		name: "no state.json before or after: the commit's fingerprint says so",
		s:    &Snapshot{Plan: "p", StateErr: state.ErrNotFound}, c: Change{Archive: arch, Events: []events.Event{{Event: events.Progress}}},
		want: commit{Plan: "p", Archive: arch, Events: []events.Event{stamp(events.Event{Event: events.Progress}),
			stamp(events.Event{Event: events.FieldSet, Archive: arch, SHA: "-"})}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := record(tt.s, tt.c, tt.on, now)
			if tt.err != nil || err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("record: %v, want %v", err, tt.err)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}
