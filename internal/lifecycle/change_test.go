package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/state"
)

// TestFollowChange: following a change asks for HEAD only when a task
// enters or waits in committing, and decides from the HEAD it is handed:
// a task entering remembers it, a waiting one completes once HEAD moved
// past the commit it entered at (or at once without git).
func TestFollowChange(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	later := at.Add(time.Hour)
	moved := func(s *state.State, phase, next domain.Phase) *state.State {
		n := s.Clone()
		n.Phase, n.NextPhase = phase, state.Opt(next)
		return n
	}
	working := ps(domain.NextTask, domain.CodeReview, 1, 0)
	passed := moved(working, domain.CodeReview, domain.CompleteTask)
	// waiting: task 1 entered committing at commit c1.
	recs := map[domain.TaskID]Task{}
	effs, errs := Feed(recs, []Cue{{1, ReviewPassed}}, ActorHook, at)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	StampHead(recs, effs, "c1")
	waiting := passed.Clone()
	waiting.Lifecycle = Encode(recs)
	working.Lifecycle = Encode(map[domain.TaskID]Task{1: {ID: 1, State: InProgress, Since: at, Created: at}})
	git := func(commit string, descends bool) *Head {
		return &Head{Git: true, Commit: commit, At: later, Descends: map[string]bool{"c1": descends}}
	}
	cases := []struct {
		name      string
		old       *state.State
		cur       *state.State
		own       bool
		head      *Head
		wantNeed  *HeadNeed
		wantState State
		wantHead  string
	}{
		{"no task near committing: no HEAD", working, moved(working, domain.CodeReview, domain.PostCodeReview), false, nil, nil, InProgress, ""},
		{"the cycle passes: HEAD to remember", ps(domain.NextTask, domain.CodeReview, 1, 0), passed, false, nil, &HeadNeed{Stamp: true}, "", ""},
		{"the cycle passes: remembers HEAD", ps(domain.NextTask, domain.CodeReview, 1, 0), passed, false, git("c1", false), nil, Committing, "c1"},
		{"the cycle passes without git: done at once", ps(domain.NextTask, domain.CodeReview, 1, 0), passed, false, &Head{}, nil, Completed, ""},
		{"a task waits: the commit it entered at", waiting, waiting.Clone(), false, nil, &HeadNeed{Recorded: []string{"c1"}}, "", ""},
		{"HEAD unmoved: waits", waiting, waiting.Clone(), false, git("c1", true), nil, Committing, "c1"},
		{"HEAD moved on: done", waiting, waiting.Clone(), false, git("c2", true), nil, Completed, ""},
		{"HEAD went elsewhere: waits", waiting, waiting.Clone(), false, git("c2", false), nil, Committing, "c1"},
		{"a lifecycle command's own commit settles nothing", waiting, waiting.Clone(), true, nil, nil, Committing, "c1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := ChangeFacts{Old: tc.old, OwnCommit: tc.own, Now: later, Timeouts: DefaultTimeouts(), Head: tc.head}
			e := Edit{Actor: "hook", State: tc.cur}
			if tc.own {
				e.Kind = events.LifecycleCommit
			}
			out, need := FollowChange(f, e)
			if diff := cmp.Diff(tc.wantNeed, need); diff != "" {
				t.Fatalf("need (-want +got):\n%s", diff)
			}
			if need != nil {
				if out.State != tc.cur || len(out.Events) > 0 {
					t.Error("asking for HEAD, it changed the change")
				}
				return
			}
			recs, err := Decode(out.State.Lifecycle)
			if err != nil {
				t.Fatal(err)
			}
			if got := recs[1]; got.State != tc.wantState || got.Head != tc.wantHead {
				t.Errorf("task 1: %s head %q, want %s head %q", got.State, got.Head, tc.wantState, tc.wantHead)
			}
		})
	}
}

// TestHeadNeedUnmoved: HEAD read from git's files answers alone only when
// it is the commit every waiting task entered at and none enters now.
func TestHeadNeedUnmoved(t *testing.T) {
	cases := []struct {
		name string
		need HeadNeed
		head string
		want bool
	}{
		{"every task entered at HEAD", HeadNeed{Recorded: []string{"c1", "c1"}}, "c1", true},
		{"one entered earlier", HeadNeed{Recorded: []string{"c1", "c0"}}, "c1", false},
		{"one entered before any commit", HeadNeed{Recorded: []string{""}}, "c1", false},
		{"a task enters now", HeadNeed{Stamp: true}, "c1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.need.Unmoved(tc.head); got != tc.want {
				t.Errorf("Unmoved(%q) = %v, want %v", tc.head, got, tc.want)
			}
		})
	}
}
