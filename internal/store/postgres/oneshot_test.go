package postgres

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/store"
)

// lifeLine is a LifeMoves line moving the task from → to.
func lifeLine(from, to string) []byte {
	return []byte(`{"ts":"2000-01-01T00:00:00Z","plan":"x","task":"999999999","event":"STATE_TRANSITION","from":"` + from + `","to":"` + to + `","actor":"agent","meta":{"agent":"a"}}`)
}

// The one-statement claim decides as the rules do: a free task is
// granted with the next token, the agent's own live claim comes first and
// is renewed, a live claim of another agent is skipped, an expired one is
// taken over, the same name from another place is skipped while live, a
// task whose result is complete is left out; and the lifecycle lines of
// the state the shared record is in are recorded with it.
func TestClaimNextLife(t *testing.T) {
	s := open(t, migrated(t))
	p := store.PlanKey{Project: "github.com/o/r", Plan: "x"}
	moves := store.LifeMoves{Lines: map[string][][]byte{
		"none":     {lifeLine("", "pending"), lifeLine("pending", "assigned")},
		"pending":  {lifeLine("pending", "assigned")},
		"assigned": {lifeLine("assigned", "pending"), lifeLine("pending", "assigned")},
	}}
	here, there := domain.Fence{Place: "m1:c:."}, domain.Fence{Place: "m2:c:."}
	claim := func(agent string, f domain.Fence, ready ...domain.TaskID) (string, int) {
		t.Helper()
		d, ok, lines, err := s.ClaimNextLife(ctx, p, ready, nil, agent, time.Minute, f, moves)
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		if !ok {
			return "none", 0
		}
		return d.Outcome.String() + " " + d.Claim.Task.String() + " token " + itoa(d.Claim.Token), len(lines)
	}
	type step struct {
		name  string
		do    func() (string, int)
		want  string
		lines int
	}
	for _, st := range []step{
		{"a free task", func() (string, int) { return claim("a", here, 1, 2, 3) }, "granted 1 token 1", 2},
		{"the next is 2", func() (string, int) { return claim("b", here, 1, 2, 3) }, "granted 2 token 1", 2},
		{"own live first", func() (string, int) { return claim("b", here, 3, 2) }, "renewed 2 token 1", 0},
		{"another place skips b's", func() (string, int) { return claim("b", there, 2, 3) }, "granted 3 token 1", 2},
		{"none left", func() (string, int) { return claim("c", here, 1, 2, 3) }, "none", 0},
		{"expired: taken over", func() (string, int) {
			s.skew.Store(int64(2 * time.Minute))
			defer s.skew.Store(0)
			return claim("c", here, 1)
		}, "takeover 1 token 2", 2},
		{"complete is left out", func() (string, int) {
			if err := s.AppendEvents(ctx, p, events.Event{Task: "4", Event: store.EventTaskResult, Actor: "d", Meta: map[string]any{"status": "complete"}}); err != nil {
				t.Fatal(err)
			}
			return claim("d", here, 4)
		}, "none", 0},
	} {
		got, n := st.do()
		if got != st.want || n != st.lines {
			t.Errorf("%s: %s with %d lifecycle lines; want %s with %d", st.name, got, n, st.want, st.lines)
		}
	}
	var kinds []string
	err := s.ScanLog(ctx, p, store.LogQuery{Task: "1", Coord: true}, func(line []byte) error {
		var l events.Lean
		events.ParseLean(line, &l)
		kinds = append(kinds, l.Event+" "+l.From+">"+l.To)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CLAIM >", "STATE_TRANSITION >pending", "STATE_TRANSITION pending>assigned",
		"CLAIM_TAKEOVER a>c", "STATE_TRANSITION assigned>pending", "STATE_TRANSITION pending>assigned"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("task 1's log (-want +got):\n%s", diff)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A one-statement write's events carry its time to the second, as a file
// store's events do, its coordination event first and its lifecycle lines
// after, the ties in the order the database received them: a move another
// clone made earlier in the same second stays before them all.
func TestOneStatementEventsOrder(t *testing.T) {
	s := open(t, migrated(t))
	p := store.PlanKey{Project: "github.com/o/r", Plan: "x"}
	// The statement runs at about S.6; another clone moved the task at S
	// (its clock counts seconds).
	sec := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	s.skew.Store(int64(time.Until(sec.Add(600 * time.Millisecond))))
	other := []byte(`{"ts":"` + sec.Format(time.RFC3339) + `","plan":"x","task":"1","event":"STATE_TRANSITION","from":"","to":"pending","actor":"agent"}`)
	if _, err := s.AppendPlanLines(ctx, p, [][]byte{other}, nil); err != nil {
		t.Fatal(err)
	}
	moves := store.LifeMoves{Lines: map[string][][]byte{"pending": {lifeLine("pending", "assigned")}}}
	if _, ok, _, err := s.ClaimNextLife(ctx, p, []domain.TaskID{1}, nil, "a", time.Minute, domain.Fence{}, moves); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	var got []string
	err := s.ScanLog(ctx, p, store.LogQuery{Task: "1", Coord: true}, func(line []byte) error {
		var e events.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		got = append(got, e.Event+" "+e.From+">"+e.To+" "+e.TS.Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	at := sec.Format(time.RFC3339Nano)
	want := []string{"STATE_TRANSITION >pending " + at, "CLAIM > " + at, "STATE_TRANSITION pending>assigned " + at}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("task 1's log (-want +got):\n%s", diff)
	}
}

// The one-statement claim of a named task decides as the rules do, and
// leaves alone a task whose shared record is in a refused state or whose
// result is complete.
func TestClaimLife(t *testing.T) {
	s := open(t, migrated(t))
	p := store.PlanKey{Project: "github.com/o/r", Plan: "x"}
	moves := store.LifeMoves{Lines: map[string][][]byte{
		"none":     {lifeLine("", "pending"), lifeLine("pending", "assigned")},
		"assigned": {lifeLine("assigned", "pending"), lifeLine("pending", "assigned")},
	}, Refuse: []string{"completed"}}
	here, there := domain.Fence{Place: "m1:c:."}, domain.Fence{Place: "m2:c:."}
	claim := func(task domain.TaskID, agent string, f domain.Fence) string {
		t.Helper()
		c, err := s.ClaimLife(ctx, p, task, agent, time.Minute, f, moves)
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		out := c.Decision.Outcome.String() + " token " + itoa(c.Decision.Claim.Token) + " lines " + itoa(int64(len(c.Lines)))
		if c.Closed {
			out = "closed " + c.LifeKey + " " + c.Complete
		}
		return out
	}
	for _, st := range []struct {
		name string
		do   func() string
		want string
	}{
		{"free: granted", func() string { return claim(1, "a", here) }, "granted token 1 lines 2"},
		{"own: renewed", func() string { return claim(1, "a", here) }, "renewed token 1 lines 0"},
		{"another's live: refused", func() string { return claim(1, "b", here) }, "refused token 0 lines 0"},
		{"own from another place, live: refused", func() string { return claim(1, "a", there) }, "refused token 0 lines 0"},
		{"expired: taken over", func() string {
			s.skew.Store(int64(2 * time.Minute))
			defer s.skew.Store(0)
			return claim(1, "b", here)
		}, "takeover token 2 lines 2"},
		{"record completed: closed", func() string {
			line := []byte(`{"ts":"2026-03-01T09:00:00Z","plan":"x","task":"2","event":"STATE_TRANSITION","from":"committing","to":"completed","actor":"agent"}`)
			if _, err := s.AppendPlanLines(ctx, p, [][]byte{line}, nil); err != nil {
				t.Fatal(err)
			}
			return claim(2, "a", here)
		}, "closed completed "},
		{"result complete: closed", func() string {
			if err := s.AppendEvents(ctx, p, events.Event{Task: "3", Event: store.EventTaskResult, Actor: "d", Meta: map[string]any{"status": "complete", "commit": "abc1234"}}); err != nil {
				t.Fatal(err)
			}
			return claim(3, "a", here)
		}, "closed none abc1234"},
	} {
		if got := st.do(); got != st.want {
			t.Errorf("%s: %s; want %s", st.name, got, st.want)
		}
	}
	cl, err := s.Claims(ctx, p)
	if err != nil || len(cl) != 1 || cl[0].Agent != "b" || cl[0].Token != 2 {
		t.Errorf("claims %+v %v; want task 1 held by b with token 2", cl, err)
	}
}

// A failed result in one statement counts its attempt from the failed
// results since the last deliberate retry, releases the writer's claim
// and records the lifecycle lines of a released claim; a stale token
// writes nothing.
func TestAppendFailLife(t *testing.T) {
	s := open(t, migrated(t))
	p := store.PlanKey{Project: "github.com/o/r", Plan: "x"}
	here := domain.Fence{Place: "m1:c:."}
	result := func(n string) []byte {
		return []byte(`{"ts":"2000-01-01T00:00:00Z","plan":"x","task":"1","event":"TASK_RESULT","actor":"a","reason":"attempt ` + n + `","meta":{"attempt":` + n + `,"status":"failed"}}`)
	}
	w := store.FailWrite{
		Results:  [][]byte{result("1"), result(strconv.Itoa(store.AttemptMarker))},
		Kept:     [][]byte{lifeLine("pending", "pending")},
		Released: [][]byte{lifeLine("assigned", "pending")},
	}
	// fail decides on the record as read (stale: on the one before).
	fail := func(agent string, f domain.Fence, stale bool) string {
		t.Helper()
		_, at, err := s.TaskLife(ctx, p, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.At = at
		if stale {
			w.At--
		}
		got, err := s.AppendFailLife(ctx, p, 1, agent, f, w)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("written %v attempt %d released %v lines %d changed %v", got.Written.Written, got.Attempt, got.Released, len(got.Lines), got.At != w.At)
	}
	lifeMine := []byte(`{"ts":"2026-03-01T09:00:00Z","plan":"x","task":"1","event":"STATE_TRANSITION","from":"pending","to":"assigned","actor":"agent","meta":{"agent":"a"}}`)
	if _, err := s.AppendPlanLines(ctx, p, [][]byte{lifeMine}, nil); err != nil {
		t.Fatal(err)
	}
	d, err := s.Claim(ctx, p, 1, "a", time.Minute, here)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct{ name, got, want string }{
		{"the holder: released", fail("a", domain.Fence{Place: here.Place, Token: d.Claim.Token}, false), "written true attempt 1 released true lines 1 changed false"},
		{"its stale token: refused", fail("a", domain.Fence{Place: here.Place, Token: d.Claim.Token}, false), "written false attempt 2 released false lines 0 changed false"},
		{"the record changed since it was read: nothing written", fail("b", here, true), "written false attempt 2 released false lines 0 changed true"},
		{"free: written, nothing released", fail("b", here, false), "written true attempt 2 released false lines 1 changed false"},
	} {
		if st.got != st.want {
			t.Errorf("%s: %s; want %s", st.name, st.got, st.want)
		}
	}
	var reasons []string
	err = s.ScanEvents(ctx, p, func(e events.Event) {
		if e.Event == store.EventTaskResult {
			reasons = append(reasons, e.Reason+" "+fmt.Sprint(e.Meta["attempt"]))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"attempt 1 1", "attempt 2 2"}, reasons); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// Agents claiming one named task at once in one statement each: one
// wins, the others are refused with the winner as holder.
func TestClaimLifeRace(t *testing.T) {
	url := migrated(t)
	p := store.PlanKey{Project: "github.com/o/r", Plan: "x"}
	moves := store.LifeMoves{Lines: map[string][][]byte{"none": {lifeLine("", "pending"), lifeLine("pending", "assigned")}}}
	const n = 8
	outcomes := make(chan string, n)
	for i := range n {
		s := open(t, url)
		go func() {
			c, err := s.ClaimLife(ctx, p, 7, fmt.Sprintf("agent-%d", i), time.Minute, domain.Fence{}, moves)
			if err != nil {
				outcomes <- err.Error()
				return
			}
			outcomes <- c.Decision.Outcome.String()
		}()
	}
	got := map[string]int{}
	for range n {
		got[<-outcomes]++
	}
	if diff := cmp.Diff(map[string]int{"granted": 1, "refused": n - 1}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	s := open(t, url)
	var lines int
	s.ScanLog(ctx, p, store.LogQuery{Task: "7"}, func([]byte) error { lines++; return nil })
	if lines != 2 {
		t.Errorf("%d lifecycle lines; want the winner's 2", lines)
	}
}
