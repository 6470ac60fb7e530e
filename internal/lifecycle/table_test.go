package lifecycle

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
)

func TestThirteenStates(t *testing.T) {
	want := []State{
		"pending", "assigned", "planning", "validated", "in_progress", "testing", "quality_review",
		"approved", "committing", "completed", "cto_intervention", "human_escalation", "abandoned",
	}
	if diff := cmp.Diff(want, States()); diff != "" {
		t.Errorf("States() (-want +got):\n%s", diff)
	}
	for i, s := range want {
		if s.index() != i {
			t.Errorf("%s.index() = %d, want %d", s, s.index(), i)
		}
		got, err := ParseState(" " + string(s) + " ")
		if err != nil || got != s {
			t.Errorf("ParseState(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseState("failed"); err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Errorf("ParseState(failed) = %v, want an error listing the states", err)
	}
}

func TestStateClasses(t *testing.T) {
	for _, s := range States() {
		wantTerminal := s == Completed || s == Abandoned || s == HumanEscalation
		if s.Terminal() != wantTerminal {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
		wantWorking := s.pos() >= 0 && s != Completed
		if s.Working() != wantWorking {
			t.Errorf("%s.Working() = %v", s, s.Working())
		}
	}
}

func TestDefaultTimeoutsNameStates(t *testing.T) {
	for k := range domain.DefaultLifecycleTimeouts() {
		if s := State(k); !s.Valid() || s.Terminal() {
			t.Errorf("domain default timeout for %q: not a non-terminal state", k)
		}
	}
	for _, s := range timed() {
		if DefaultTimeouts()[s] <= 0 {
			t.Errorf("no default timeout for %s", s)
		}
	}
}

func TestTableRows(t *testing.T) {
	seen := map[[2]State]bool{}
	for _, tr := range Table() {
		name := string(tr.From) + "->" + string(tr.To)
		switch {
		case !tr.From.Valid() || !tr.To.Valid():
			t.Errorf("%s: not states", name)
		case tr.Why == "" || strings.ContainsAny(tr.Why, ":;\n"):
			t.Errorf("%s: why %q is empty or breaks a Mermaid label", name, tr.Why)
		case seen[[2]State{tr.From, tr.To}]:
			t.Errorf("%s: duplicate row", name)
		case tr.From == Completed || tr.From == Abandoned:
			t.Errorf("%s: a move out of a terminal state", name)
		case !Legal(tr.From, tr.To):
			t.Errorf("%s: Legal = false for a row", name)
		}
		seen[[2]State{tr.From, tr.To}] = true
	}
	if n := len(Table()); n != 52 {
		t.Errorf("table has %d rows, want 52 (9 forward, 3 failure, 1 release, 9+9 CTO, 1 human, 9 resolve, 11 abandon)", n)
	}
}

func TestLegalFromFollowsTable(t *testing.T) {
	for _, from := range States() {
		var want []State
		for _, to := range States() {
			if Legal(from, to) {
				want = append(want, to)
			}
		}
		got := slices.Clone(LegalFrom(from))
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("LegalFrom(%s) (-want +got):\n%s", from, diff)
		}
	}
}

// actorFor is an actor allowed to make a row's move.
func actorFor(c Class) Actor {
	switch c {
	case ClassReturn, ClassToHuman:
		return ActorCTO
	case ClassResolve, ClassAbandon:
		return ActorHuman
	}
	return ActorAgent
}

// TestEveryPair tries Move for every state × every state: every table row
// succeeds (with the actor its class needs), every other pair is illegal
// and leaves the task as it was.
func TestEveryPair(t *testing.T) {
	for _, from := range States() {
		for _, to := range States() {
			t.Run(string(from)+"->"+string(to), func(t *testing.T) {
				esc := InProgress
				if to.Working() {
					esc = to // a return or resolve goes back to where the task came from
				}
				task, log := reachLog(t, from, esc)
				tr, legal := lookup(from, to)
				now := task.Since.Add(3 * time.Minute)
				got, effs, err := Move(task, to, actorFor(tr.Class), "test", now)
				if !legal {
					if !errors.Is(err, ErrIllegal) {
						t.Fatalf("Move = %v, want ErrIllegal", err)
					}
					if diff := cmp.Diff(task, got); diff != "" || effs != nil {
						t.Errorf("an illegal move changed the task (-before +after):\n%s", diff)
					}
					return
				}
				if err != nil {
					t.Fatalf("Move along a %s row: %v", tr.Class, err)
				}
				if got.State != to || effs[len(effs)-1].To != to {
					t.Errorf("Move → %s ended in %s, effects %v", to, got.State, effs)
				}
				if vs := Check(got); len(vs) > 0 {
					t.Errorf("Check after the move: %v", vs)
				}
				if vs := CheckLog(append(log, effs...)); len(vs) > 0 {
					t.Errorf("CheckLog after the move: %v", vs)
				}
			})
		}
	}
}

func TestNextNarrowsByEscalation(t *testing.T) {
	cases := []struct {
		name string
		task Task
		want []State
	}{
		{"testing", reach(t, Testing, ""), []State{QualityReview, CTOIntervention, Abandoned}},
		{"quality_review", reach(t, QualityReview, ""), []State{Approved, InProgress, CTOIntervention, Abandoned}},
		{"cto from testing", reach(t, CTOIntervention, Testing), []State{Pending, Assigned, Planning, Validated, InProgress, Testing, HumanEscalation, Abandoned}},
		{"human from planning", reach(t, HumanEscalation, Planning), []State{Planning, Abandoned}},
		{"completed", reach(t, Completed, ""), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Next(tc.task)); diff != "" {
				t.Errorf("Next (-want +got):\n%s", diff)
			}
		})
	}
}
