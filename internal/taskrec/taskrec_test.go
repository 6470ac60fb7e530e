package taskrec

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

// outcome is what a view reads of a record's status.
type outcome struct {
	State    lifecycle.State
	Status   string
	Display  string
	Diverged bool
	Standing parallel.Standing
}

func outcomeOf(r Record) outcome {
	return outcome{r.State, r.Status, r.Display, r.Diverged, r.Standing}
}

// cells are every Status cell a row may carry: the six statuses, none, and
// a value that is no status.
var cells = []string{"pending", "in-progress", "done", "cancelled", "postponed", "blocked", "", "weird"}

// TestFoldStatusWithoutRecord: a task the lifecycle has not seen is what
// its cell says.
func TestFoldStatusWithoutRecord(t *testing.T) {
	want := map[string]outcome{
		"pending":     {lifecycle.Pending, "pending", "pending", false, parallel.Schedulable},
		"in-progress": {lifecycle.Pending, "in-progress", "in-progress", false, parallel.Schedulable},
		"done":        {lifecycle.Completed, "done", "done", false, parallel.Finished},
		"cancelled":   {lifecycle.Abandoned, "cancelled", "cancelled", false, parallel.Dropped},
		"postponed":   {lifecycle.Pending, "postponed", "postponed", false, parallel.Parked},
		"blocked":     {lifecycle.Pending, "blocked", "blocked", false, parallel.Parked},
		"":            {lifecycle.Pending, "", "", false, parallel.Parked},
		"weird":       {lifecycle.Pending, "weird", "weird", false, parallel.Parked},
	}
	for _, c := range cells {
		t.Run(fmt.Sprintf("cell=%q", c), func(t *testing.T) {
			got := Fold(gridInput("", c))
			if len(got) != 1 {
				t.Fatalf("got %d records, want 1", len(got))
			}
			if diff := cmp.Diff(want[c], outcomeOf(got[0])); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got[0].Recorded {
				t.Error("Recorded = true for a task without a record")
			}
		})
	}
}

// TestFoldStatusWithRecord: every state × every cell. The lifecycle is
// the one status; the cell changes only the display (postponed for a
// pending task) and whether a move is requested (Diverged).
func TestFoldStatusWithRecord(t *testing.T) {
	type rendering struct {
		display  string
		standing parallel.Standing
		agrees   []string // the cells that render the state
	}
	working := rendering{"in-progress", parallel.Schedulable, []string{"in-progress"}}
	want := map[lifecycle.State]rendering{
		lifecycle.Pending:         {"pending", parallel.Schedulable, []string{"pending", "postponed"}},
		lifecycle.Assigned:        {"pending", parallel.Schedulable, []string{"pending"}},
		lifecycle.Planning:        working,
		lifecycle.Validated:       working,
		lifecycle.InProgress:      working,
		lifecycle.Testing:         working,
		lifecycle.QualityReview:   working,
		lifecycle.Approved:        working,
		lifecycle.Committing:      working,
		lifecycle.Completed:       {"done", parallel.Finished, []string{"done"}},
		lifecycle.CTOIntervention: {"blocked", parallel.AwaitingCTO, []string{"blocked"}},
		lifecycle.HumanEscalation: {"blocked", parallel.WithHuman, []string{"blocked"}},
		lifecycle.Abandoned:       {"cancelled", parallel.Dropped, []string{"cancelled"}},
	}
	if len(want) != len(lifecycle.States()) {
		t.Fatalf("the table covers %d states of %d", len(want), len(lifecycle.States()))
	}
	for _, s := range lifecycle.States() {
		for _, c := range cells {
			t.Run(fmt.Sprintf("%s/cell=%q", s, c), func(t *testing.T) {
				w := want[s]
				exp := outcome{State: s, Status: string(s), Display: w.display, Standing: w.standing,
					Diverged: c != "" && c != "weird" && !slices.Contains(w.agrees, c)}
				if s == lifecycle.Pending && c == "postponed" {
					exp.Display, exp.Standing = "postponed", parallel.Parked
				}
				got := Fold(gridInput(s, c))
				if len(got) != 1 {
					t.Fatalf("got %d records, want 1", len(got))
				}
				if diff := cmp.Diff(exp, outcomeOf(got[0])); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if !got[0].Recorded || got[0].Life.State != s {
					t.Errorf("Recorded %v, Life.State %s; want the record", got[0].Recorded, got[0].Life.State)
				}
			})
		}
	}
}

// TestFoldUnwritten: a task completed in memory (its commit seen) still
// says in-progress in tasks.md: no edit by hand, and it displays done.
func TestFoldUnwritten(t *testing.T) {
	in := gridInput(lifecycle.Completed, "in-progress")
	in.Unwritten = map[domain.TaskID]lifecycle.State{1: lifecycle.Committing}
	want := outcome{lifecycle.Completed, "completed", "done", false, parallel.Finished}
	if diff := cmp.Diff(want, outcomeOf(Fold(in)[0])); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	in.Unwritten[1] = lifecycle.Pending // the cell was not written for it: a hand edit
	if !Fold(in)[0].Diverged {
		t.Error("Diverged = false for a cell that renders neither state")
	}
}

// TestFoldRows: which records there are, in which order.
func TestFoldRows(t *testing.T) {
	type row struct {
		ID       domain.TaskID
		Title    string
		Row      bool
		Recorded bool
		Deps     []domain.TaskID
	}
	tests := []struct {
		name string
		in   Input
		want []row
	}{
		{"no tasks.md, no records", Input{}, nil},
		{"no tasks.md: the records by id", Input{Records: map[domain.TaskID]lifecycle.Task{
			3: rec(3, lifecycle.InProgress, created), 1: rec(1, lifecycle.Completed, created)}},
			[]row{{ID: 1, Recorded: true}, {ID: 3, Recorded: true}}},
		{"table order, a repeated id once, then records without a row", Input{
			Tasks: table(t, "2|Two|pending|-", "1|One|done|2", "2|Again|done|-"),
			Records: map[domain.TaskID]lifecycle.Task{
				9: rec(9, lifecycle.Abandoned, created), 1: rec(1, lifecycle.Completed, created), 5: rec(5, lifecycle.Pending, created)}},
			[]row{{2, "Two", true, false, nil}, {1, "One", true, true, []domain.TaskID{2}},
				{ID: 5, Recorded: true}, {ID: 9, Recorded: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Now = now
			var got []row
			for _, r := range Fold(tt.in) {
				got = append(got, row{r.ID, r.Title, r.Row, r.Recorded, r.Deps})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFoldCoordination: the claim, the assignee, the result and the
// review cycle.
func TestFoldCoordination(t *testing.T) {
	live := domain.Claim{Task: 1, Agent: "alice", Acquired: created, Expires: now.Add(time.Minute), Token: 7}
	expired := domain.Claim{Task: 1, Agent: "bob", Acquired: created, Expires: now.Add(-time.Minute), Token: 3}
	assigned := rec(1, lifecycle.Assigned, created)
	assigned.Agent = "carol"
	cur := domain.TaskID(1)
	next := domain.CodeReview
	iter := 2
	st := &state.State{CurrentTask: &cur, Phase: domain.NextTask, NextPhase: &next, PhaseIteration: &iter, MaxReviews: 5, ConsecutiveClean: 1}
	other := domain.TaskID(2)
	type view struct {
		Agent     string
		Holder    string
		Token     int64
		ClaimLive bool
		Result    *Result
		Review    *Review
		Findings  int
	}
	tests := []struct {
		name string
		in   Input
		want view
	}{
		{"nothing read", Input{}, view{Findings: -1}},
		{"a live claim assigns", Input{Claims: []domain.Claim{live}}, view{Agent: "alice", Holder: "alice", Token: 7, ClaimLive: true, Findings: -1}},
		{"an expired claim does not", Input{Claims: []domain.Claim{expired}}, view{Holder: "bob", Token: 3, Findings: -1}},
		{"the claim with the higher token", Input{Claims: []domain.Claim{expired, live}}, view{Agent: "alice", Holder: "alice", Token: 7, ClaimLive: true, Findings: -1}},
		{"the record's agent first", Input{Claims: []domain.Claim{live}, Records: map[domain.TaskID]lifecycle.Task{1: assigned}},
			view{Agent: "carol", Holder: "alice", Token: 7, ClaimLive: true, Findings: -1}},
		{"a result", Input{Results: map[domain.TaskID]Result{1: {Status: "complete", Commit: "abc", Agent: "alice", At: now}}},
			view{Result: &Result{Status: "complete", Commit: "abc", Agent: "alice", At: now}, Findings: -1}},
		{"the current task's review cycle", Input{State: st, OpenFindings: map[domain.TaskID]int{1: 2}},
			view{Review: &Review{Phase: domain.NextTask, Next: domain.CodeReview, Iteration: 2, Max: 5, Clean: 1}, Findings: 2}},
		{"another task's cycle is not this one's", Input{State: &state.State{CurrentTask: &other}, OpenFindings: map[domain.TaskID]int{2: 4}},
			view{Findings: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Tasks, tt.in.Now, tt.in.Created = table(t, "1|One|pending|-"), now, created
			r := Fold(tt.in)[0]
			got := view{Agent: r.Agent, ClaimLive: r.ClaimLive, Result: r.Result, Review: r.Review, Findings: r.OpenFindings}
			if r.Claim != nil {
				got.Holder, got.Token = r.Claim.Agent, r.Claim.Token
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFoldTime: time in state and the timeout, a queued task counting
// from when it became ready.
func TestFoldTime(t *testing.T) {
	type timing struct {
		InState time.Duration
		Level   lifecycle.Level
		Queued  bool
		Ready   time.Time
	}
	tests := []struct {
		name  string
		rows  []string
		recs  map[domain.TaskID]lifecycle.Task
		task  domain.TaskID
		limit time.Duration
		want  timing
	}{
		{"never moved: pending since the plan began", []string{"1|One|pending|-"}, nil, 1, 3 * time.Hour,
			timing{2 * time.Hour, lifecycle.LevelOK, false, created}},
		{"over its timeout", []string{"1|One|pending|-"}, nil, 1, time.Hour,
			timing{2 * time.Hour, lifecycle.LevelEscalate, false, created}},
		{"waiting on a dependency: queued", []string{"1|One|pending|-", "2|Two|pending|1"}, nil, 2, time.Hour,
			timing{2 * time.Hour, lifecycle.LevelOK, true, created}},
		{"ready since its dependency completed", []string{"1|One|done|-", "2|Two|pending|1"},
			map[domain.TaskID]lifecycle.Task{1: rec(1, lifecycle.Completed, created.Add(90*time.Minute))}, 2, time.Hour,
			timing{2 * time.Hour, lifecycle.LevelOK, false, created.Add(90 * time.Minute)}},
		{"in a state since its record says", []string{"1|One|in-progress|-"},
			map[domain.TaskID]lifecycle.Task{1: rec(1, lifecycle.InProgress, created.Add(time.Hour))}, 1, 50 * time.Minute,
			timing{time.Hour, lifecycle.LevelAlert, false, created.Add(time.Hour)}},
		{"done in tasks.md without a record: not timed", []string{"1|One|done|-"}, nil, 1, time.Hour, timing{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Tasks: table(t, tt.rows...), Records: tt.recs, Created: created, Now: now,
				Timeouts: lifecycle.Timeouts{lifecycle.Pending: tt.limit, lifecycle.InProgress: tt.limit}}
			r, ok := Find(Fold(in), tt.task)
			if !ok {
				t.Fatalf("no record of task %s", tt.task)
			}
			got := timing{r.InState, r.Timeout.Level, r.Timeout.Queued, r.ReadySince}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFoldUntimed: scheduling and routing ask for no time.
func TestFoldUntimed(t *testing.T) {
	in := Input{Tasks: table(t, "1|One|pending|-"), Created: created, Now: now, Untimed: true,
		Timeouts: lifecycle.Timeouts{lifecycle.Pending: time.Minute}}
	r := Fold(in)[0]
	if r.InState != 0 || r.Timeout != (lifecycle.TimeoutStatus{}) || !r.ReadySince.IsZero() {
		t.Errorf("untimed record timed: in state %v, timeout %+v, ready since %v", r.InState, r.Timeout, r.ReadySince)
	}
	if r.State != lifecycle.Pending || r.Display != "pending" {
		t.Errorf("untimed record: %s, %q; want pending", r.State, r.Display)
	}
}

// TestFoldLeavesInputsAlone: the fold never changes what it is handed.
func TestFoldLeavesInputsAlone(t *testing.T) {
	recs := map[domain.TaskID]lifecycle.Task{1: rec(1, lifecycle.InProgress, created)}
	before := string(lifecycle.Encode(recs))
	rs := Fold(Input{Tasks: table(t, "1|One|pending|-"), Records: recs, Now: now})
	rs[0].Life.Failures[lifecycle.InProgress] = 3
	if got := string(lifecycle.Encode(recs)); got != before {
		t.Errorf("records changed:\n%s\nwas\n%s", got, before)
	}
}

// TestFoldHelpers: the files alone, the cells, readiness, and the records
// of state.json.
func TestFoldHelpers(t *testing.T) {
	ts := table(t, "1|One|Done|-", "2|Two| pending |1", "3|Three|pending|2", "1|Again|pending|-")
	st := state.New()
	st.Lifecycle = lifecycle.Encode(map[domain.TaskID]lifecycle.Task{1: rec(1, lifecycle.Completed, created.Add(time.Hour))})

	t.Run("Cells", func(t *testing.T) {
		want := map[domain.TaskID]string{1: "done", 2: "pending", 3: "pending"}
		if diff := cmp.Diff(want, Cells(ts)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if Cells(nil) != nil {
			t.Error("Cells(nil) is not nil")
		}
	})
	t.Run("Records", func(t *testing.T) {
		got, err := Records(st)
		if err != nil || len(got) != 1 || got[1].State != lifecycle.Completed {
			t.Errorf("Records = %v, %v; want task 1 completed", got, err)
		}
		if got, err := Records(nil); err != nil || len(got) != 0 {
			t.Errorf("Records(nil) = %v, %v; want none", got, err)
		}
		bad := state.New()
		bad.Lifecycle = []byte(`{"x":{}}`)
		if _, err := Records(bad); err == nil {
			t.Error("Records of a bad field: no error")
		}
	})
	t.Run("OfFiles", func(t *testing.T) {
		var got []outcome
		for _, r := range OfFiles(ts, st) {
			got = append(got, outcomeOf(r))
		}
		want := []outcome{
			{lifecycle.Completed, "completed", "done", false, parallel.Finished},
			{lifecycle.Pending, "pending", "pending", false, parallel.Schedulable},
			{lifecycle.Pending, "pending", "pending", false, parallel.Schedulable},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("Readiness and ReadyAt agree", func(t *testing.T) {
		recs, _ := Records(st)
		want := lifecycle.ReadyAt{2: created.Add(time.Hour)}
		if diff := cmp.Diff(want, Readiness(ts, recs)); diff != "" {
			t.Errorf("Readiness (-want +got):\n%s", diff)
		}
		rs := Fold(Input{Tasks: ts, Records: recs, Created: created, Now: now})
		ready := ReadyAt(rs)
		for _, id := range []domain.TaskID{2, 3} {
			r, _ := Find(rs, id)
			a, okA := Readiness(ts, recs).From(r.Life)
			b, okB := ready.From(r.Life)
			if !a.Equal(b) || okA != okB {
				t.Errorf("task %s: From = %v, %v by Readiness, %v, %v by ReadyAt", id, a, okA, b, okB)
			}
		}
		if Readiness(nil, recs) != nil || ReadyAt(Fold(Input{Records: recs})) != nil {
			t.Error("without tasks.md: not nil")
		}
	})
}

// Readiness is when each task of tasks.md became ready to be worked on
// (lifecycle.Readiness) from its rows and the records: a queued task's
// pending time counts from then. Nil without tasks.md (every task counts
// from its state's start).
func Readiness(ts *plan.Tasks, records map[domain.TaskID]lifecycle.Task) lifecycle.ReadyAt {
	if ts == nil {
		return nil
	}
	_, rows := fromTable(ts)
	return lifecycle.Readiness(rows, records)
}
