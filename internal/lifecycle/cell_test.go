package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

// TestCell is the table docs/lifecycle.md documents: every state renders
// as one Status of tasks.md.
func TestCell(t *testing.T) {
	want := map[State]string{
		Pending: "pending", Assigned: "pending",
		Planning: "in-progress", Validated: "in-progress", InProgress: "in-progress", Testing: "in-progress",
		QualityReview: "in-progress", Approved: "in-progress", Committing: "in-progress",
		Completed:       "done",
		CTOIntervention: "blocked", HumanEscalation: "blocked",
		Abandoned: "cancelled",
	}
	for _, s := range States() {
		t.Run(string(s), func(t *testing.T) {
			if got := Cell(s); got != want[s] {
				t.Errorf("Cell(%s) = %q, want %q", s, got, want[s])
			}
			if !Agrees(s, " "+want[s]+" ") {
				t.Errorf("Agrees(%s, %q) = false", s, want[s])
			}
		})
	}
	if !Agrees(Pending, "Postponed") || Agrees(Assigned, "postponed") || Agrees(InProgress, "done") {
		t.Error("postponed renders pending only; done renders completed only")
	}
}

// TestRequest: a Status asks for the move that reaches the state it means,
// through the ordinary moves; what the machine refuses stays refused.
func TestRequest(t *testing.T) {
	cases := []struct {
		from  State
		cell  string
		actor Actor
		to    State
		steps []State
		err   error
	}{
		{InProgress, "done", ActorAgent, Completed, []State{Testing, QualityReview, Approved, Committing, Completed}, nil},
		{Committing, "DONE", ActorAgent, Completed, []State{Completed}, nil},
		{Pending, "in-progress", ActorAgent, InProgress, []State{Assigned, Planning, Validated, InProgress}, nil},
		{Testing, "in-progress", ActorAgent, Testing, nil, nil},
		{Assigned, "pending", ActorAgent, Assigned, nil, nil}, // assigned renders pending
		{Assigned, "postponed", ActorAgent, Pending, []State{Pending}, nil},
		{Pending, "postponed", ActorAgent, Pending, nil, nil},
		{InProgress, "pending", ActorAgent, InProgress, nil, ErrIllegal},
		{InProgress, "cancelled", ActorHuman, Abandoned, []State{Abandoned}, nil},
		{InProgress, "cancelled", ActorAgent, InProgress, nil, ErrRefused},
		{InProgress, "blocked", ActorAgent, CTOIntervention, []State{CTOIntervention}, nil},
		{CTOIntervention, "blocked", ActorAgent, CTOIntervention, nil, nil},
		{CTOIntervention, "done", ActorAgent, CTOIntervention, nil, ErrIllegal},
		{Completed, "in-progress", ActorHuman, Completed, nil, ErrIllegal},
		{Completed, "done", ActorAgent, Completed, nil, nil},
		{Abandoned, "pending", ActorHuman, Abandoned, nil, ErrIllegal},
		{InProgress, "finished", ActorAgent, InProgress, nil, ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(string(tc.from)+"/"+tc.cell+"/"+string(tc.actor), func(t *testing.T) {
			task := reach(t, tc.from, InProgress)
			got, effs, err := Request(task, tc.cell, tc.actor, "", task.Since.Add(time.Minute))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got.State != tc.to {
				t.Errorf("state %s, want %s", got.State, tc.to)
			}
			var steps []State
			for _, e := range effs {
				if e.Kind.Moves() {
					steps = append(steps, e.To)
				}
			}
			if diff := cmp.Diff(tc.steps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if err == nil && !Agrees(got.State, tc.cell) {
				t.Errorf("after the move, %s does not render %q", got.State, tc.cell)
			}
			if err == nil {
				if vs := CheckLog(append(logOf(t, task), effs...)); len(vs) > 0 {
					t.Errorf("CheckLog: %v", vs)
				}
			}
		})
	}
}

// logOf is the log that built a task reached by reach.
func logOf(tb testing.TB, task Task) []Effect {
	tb.Helper()
	_, log := reachLog(tb, task.State, task.EscalatedFrom)
	return log
}

func TestCellOnlyAndRequested(t *testing.T) {
	for cell, want := range map[string]bool{"pending": true, "postponed": true, "done": true, "cancelled": true, "in-progress": false, "blocked": false} {
		if got := CellOnly(cell); got != want {
			t.Errorf("CellOnly(%s) = %v", cell, got)
		}
	}
	if RequestedState("nope") != "" || RequestedState(" Done") != Completed {
		t.Error("RequestedState")
	}
}

func TestDivergences(t *testing.T) {
	recs := map[domain.TaskID]Task{1: {ID: 1, State: InProgress}, 2: {ID: 2, State: Completed}, 3: {ID: 3, State: Pending}}
	cells := map[domain.TaskID]string{1: "done", 2: "done", 3: "Postponed", 4: "done", 5: "weird"}
	got := Divergences(recs, cells)
	want := []Divergence{{Task: 1, Cell: "done", State: InProgress}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	msg := "task 1: tasks.md says done, the lifecycle says in_progress: run `taskie task status 1 done` to request the move, or put back in-progress"
	if got[0].String() != msg {
		t.Errorf("String() = %q", got[0].String())
	}
	c := Divergence{Task: 2, Cell: "cancelled", State: InProgress}.String()
	if want := "`taskie task status 2 cancelled --actor human`"; !strings.Contains(c, want) {
		t.Errorf("%q lacks %q", c, want)
	}
}
