package workflow

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func inTable(from, to domain.Phase) bool {
	return slices.ContainsFunc(Table, func(m Move) bool { return m.From == from && m.To == to })
}

func TestTableRowsAreLegalAndReversesAreNot(t *testing.T) {
	for _, m := range Table {
		t.Run(string(m.From+"->"+m.To), func(t *testing.T) {
			if !Legal(m.From, m.To) {
				t.Errorf("Legal(%q, %q) = false for a table row", m.From, m.To)
			}
			if err := CheckMove(m.From, m.To); err != nil {
				t.Errorf("CheckMove(%q, %q) = %v for a table row", m.From, m.To, err)
			}
			wantRev := inTable(m.To, m.From) || m.From == m.To
			if got := Legal(m.To, m.From); got != wantRev {
				t.Errorf("Legal(%q, %q) (reverse) = %v, want %v", m.To, m.From, got, wantRev)
			}
			if m.Why == "" {
				t.Errorf("row %s -> %s has no Why", m.From, m.To)
			}
		})
	}
}

func TestTableUsesOnlyPhasesAndHasNoDuplicates(t *testing.T) {
	seen := map[[2]domain.Phase]bool{}
	for _, m := range Table {
		if !domain.IsPhase(m.From) || !domain.IsPhase(m.To) {
			t.Errorf("row %q -> %q names something that is not a phase", m.From, m.To)
		}
		k := [2]domain.Phase{m.From, m.To}
		if seen[k] {
			t.Errorf("duplicate row %q -> %q", m.From, m.To)
		}
		seen[k] = true
	}
}

// Every phase but complete can be left and every phase but new-plan can be
// reached; complete can be left only to add a task.
func TestTableConnectsEveryPhase(t *testing.T) {
	for _, p := range domain.Phases {
		out, in := 0, 0
		for _, m := range Table {
			if m.From == p && m.To != p {
				out++
			}
			if m.To == p && m.From != p {
				in++
			}
		}
		if out == 0 {
			t.Errorf("phase %q has no way out", p)
		}
		if in == 0 && p != domain.NewPlan {
			t.Errorf("phase %q cannot be reached", p)
		}
	}
	if diff := cmp.Diff([]domain.Phase{domain.NextTask, domain.NextTaskTDD, domain.AllCodeReview}, LegalFrom(domain.Complete)); diff != "" {
		t.Errorf("LegalFrom(complete) (-want +got):\n%s", diff)
	}
}

// Every pair of phases: Legal agrees with the table (plus staying put).
func TestLegalMatchesTableForEveryPair(t *testing.T) {
	for _, from := range domain.Phases {
		for _, to := range domain.Phases {
			want := from == to || inTable(from, to)
			if got := Legal(from, to); got != want {
				t.Errorf("Legal(%q, %q) = %v, want %v", from, to, got, want)
			}
		}
	}
	for _, c := range []struct{ from, to domain.Phase }{
		{"bogus", "bogus"}, {"", ""}, {domain.CompleteTask, domain.CompleteTask}, {domain.NewPlan, domain.CompleteTask}, {domain.NewPlan, "bogus"}, {"", domain.NextTask},
	} {
		if Legal(c.from, c.to) {
			t.Errorf("Legal(%q, %q) = true, want false", c.from, c.to)
		}
	}
}

func TestLegalFrom(t *testing.T) {
	tests := map[domain.Phase][]domain.Phase{
		domain.NewPlan:           {domain.PlanReview, domain.CreateTasks},
		domain.PlanReview:        {domain.PostPlanReview, domain.CreateTasks},
		domain.PostPlanReview:    {domain.PlanReview, domain.CreateTasks},
		domain.CreateTasks:       {domain.TasksReview, domain.NextTask, domain.NextTaskTDD},
		domain.NextTask:          {domain.CodeReview, domain.ContinueTask, domain.NextTask, domain.NextTaskTDD, domain.AllCodeReview},
		domain.CodeReview:        {domain.PostCodeReview, domain.NextTask, domain.NextTaskTDD, domain.AllCodeReview, domain.ContinueTask},
		domain.AllCodeReview:     {domain.PostAllCodeReview, domain.Complete},
		domain.PostAllCodeReview: {domain.AllCodeReview, domain.Complete},
		"bogus":                  nil,
	}
	for from, want := range tests {
		if diff := cmp.Diff(want, LegalFrom(from)); diff != "" {
			t.Errorf("LegalFrom(%q) (-want +got):\n%s", from, diff)
		}
	}
}

func TestCheckMoveMessages(t *testing.T) {
	tests := []struct {
		from, to domain.Phase
		want     string
	}{
		{domain.NewPlan, domain.NextTask, `cannot move from "new-plan" to "next-task"; legal moves from "new-plan": "new-plan", "plan-review", "create-tasks"`},
		{domain.Complete, domain.CodeReview, `cannot move from "complete" to "code-review"; legal moves from "complete": "complete", "next-task", "next-task-tdd", "all-code-review"`},
		// next-task can be re-recorded as itself and the table says so:
		// it is listed once, in table order.
		{domain.NextTask, domain.PlanReview, `cannot move from "next-task" to "plan-review"; legal moves from "next-task": "code-review", "continue-task", "next-task", "next-task-tdd", "all-code-review"`},
		{domain.PostAllCodeReview, domain.NewPlan, `cannot move from "post-all-code-review" to "new-plan"; legal moves from "post-all-code-review": "post-all-code-review", "all-code-review", "complete"`},
	}
	for _, tc := range tests {
		t.Run(string(tc.from+"->"+tc.to), func(t *testing.T) {
			err := CheckMove(tc.from, tc.to)
			if err == nil {
				t.Fatal("CheckMove = nil, want an error")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckMoveUnknownTarget(t *testing.T) {
	for _, to := range []domain.Phase{"bogus", domain.CompleteTask, domain.CompleteTaskTDD, ""} {
		err := CheckMove(domain.NewPlan, to)
		if err == nil {
			t.Fatalf("CheckMove(new-plan, %q) = nil", to)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "unknown phase "+strconv.Quote(string(to))+"; phases are ") {
			t.Errorf("CheckMove(new-plan, %q) = %q", to, msg)
		}
		for _, p := range domain.Phases {
			if !strings.Contains(msg, strconv.Quote(string(p))) {
				t.Errorf("message %q does not list phase %q", msg, p)
			}
		}
	}
	// An empty current phase (no state yet) allows any phase.
	for _, to := range domain.Phases {
		if err := CheckMove("", to); err != nil {
			t.Errorf("CheckMove(\"\", %q) = %v", to, err)
		}
	}
}

// legalList extracts the moves an error message calls legal.
func legalList(t *testing.T, msg string) []domain.Phase {
	t.Helper()
	_, list, ok := strings.Cut(msg, "legal moves from ")
	if !ok {
		return nil
	}
	_, list, _ = strings.Cut(list, ": ")
	var out []domain.Phase
	for _, q := range strings.Split(list, ", ") {
		s, err := strconv.Unquote(q)
		if err != nil {
			t.Fatalf("cannot unquote %q in %q", q, msg)
		}
		out = append(out, domain.Phase(s))
	}
	return out
}

// For every illegal move the error lists exactly the moves that are legal.
func TestCheckMoveListsExactlyTheLegalMoves(t *testing.T) {
	for _, from := range domain.Phases {
		var want []domain.Phase
		for _, to := range domain.Phases {
			if Legal(from, to) {
				want = append(want, to)
			}
		}
		for _, to := range domain.Phases {
			err := CheckMove(from, to)
			if Legal(from, to) {
				if err != nil {
					t.Errorf("CheckMove(%q, %q) = %v for a legal move", from, to, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("CheckMove(%q, %q) = nil for an illegal move", from, to)
				continue
			}
			got := legalList(t, err.Error())
			slices.Sort(got)
			w := slices.Clone(want)
			slices.Sort(w)
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("CheckMove(%q, %q) legal list (-want +got):\n%s", from, to, diff)
			}
		}
	}
}

// A state.json with an unknown phase: the error must not call the unknown
// phase a legal move (Legal says it is not).
func TestCheckMoveFromUnknownPhase(t *testing.T) {
	err := CheckMove("bogus", domain.NextTask)
	if err == nil {
		t.Fatal("CheckMove from an unknown phase = nil")
	}
	if !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("error %q does not name the unknown phase", err)
	}
	for _, m := range legalList(t, err.Error()) {
		if !Legal("bogus", m) {
			t.Errorf("error %q calls %q legal, but Legal(\"bogus\", %q) = false", err, m, m)
		}
	}
}

func TestAutoNextEveryPhase(t *testing.T) {
	tests := map[domain.Phase]domain.Phase{
		domain.NewPlan:           domain.PlanReview,
		domain.PlanReview:        domain.PostPlanReview,
		domain.PostPlanReview:    domain.PlanReview,
		domain.CreateTasks:       domain.TasksReview,
		domain.TasksReview:       domain.PostTasksReview,
		domain.PostTasksReview:   domain.TasksReview,
		domain.NextTask:          domain.CodeReview,
		domain.NextTaskTDD:       domain.CodeReview,
		domain.ContinueTask:      domain.CodeReview,
		domain.CodeReview:        domain.PostCodeReview,
		domain.PostCodeReview:    domain.CodeReview,
		domain.AllCodeReview:     domain.PostAllCodeReview,
		domain.PostAllCodeReview: domain.AllCodeReview,
		domain.Complete:          "",
		domain.CompleteTask:      "",
		domain.CompleteTaskTDD:   "",
		"":                       "",
		"bogus":                  "",
	}
	if len(tests) != len(domain.Phases)+4 {
		t.Fatalf("test table misses a phase: %d rows for %d phases", len(tests), len(domain.Phases))
	}
	for p, want := range tests {
		if got := AutoNext(p); got != want {
			t.Errorf("AutoNext(%q) = %q, want %q", p, got, want)
		}
	}
}

// The automated next phase of recording p must itself be legal from p, so
// the hook can make that move.
func TestAutoNextIsALegalMove(t *testing.T) {
	for _, p := range domain.Phases {
		if n := AutoNext(p); n != "" && !Legal(p, n) {
			t.Errorf("AutoNext(%q) = %q, which is not a legal move", p, n)
		}
	}
}

// A misspelt phase gets the nearest phase instead of the whole list.
func TestCheckMoveDidYouMean(t *testing.T) {
	for _, tc := range []struct{ to, want string }{
		{"post-code-reveiw", `unknown phase "post-code-reveiw"; did you mean "post-code-review"?`},
		{"Next-Task", `unknown phase "Next-Task"; did you mean "next-task"?`},
		{"complet", `unknown phase "complet"; did you mean "complete"?`},
	} {
		t.Run(tc.to, func(t *testing.T) {
			err := CheckMove(domain.NewPlan, domain.Phase(tc.to))
			if err == nil || err.Error() != tc.want {
				t.Errorf("CheckMove(new-plan, %q) = %v, want %s", tc.to, err, tc.want)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"status", "start", "plan", "validate"}
	for _, tc := range []struct{ in, want string }{
		{"statsu", "status"}, {"strat", "start"}, {"pln", "plan"}, {"validaet", "validate"},
		{"status", ""}, {"xyz", ""}, {"", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := Nearest(tc.in, cands); got != tc.want {
				t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
