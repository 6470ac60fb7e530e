package postgres

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/store"
)

func planLine(ts, task, kind, reason string) []byte {
	return []byte(fmt.Sprintf(`{"ts":"%s","plan":"p","task":"%s","event":"%s","reason":"%s"}`, ts, task, kind, reason))
}

func scanAll(t *testing.T, s *Store, q store.LogQuery) []string {
	t.Helper()
	var out []string
	if err := s.ScanLog(ctx, key, q, func(line []byte) error { out = append(out, string(line)); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Plan events are stored once per line (a re-run or a line from another
// clone adds nothing), read back byte for byte in database order with the
// coordination events between them, filtered by task, kind and the last
// N; the coordination log and its import leave them alone.
func TestPlanLog(t *testing.T) {
	s := open(t, migrated(t))
	a := planLine("2026-03-01T09:00:00Z", "1", events.StateTransition, "a")
	b := planLine("2026-03-01T09:01:00Z", "2", events.StateTransition, "b")
	c := planLine("2026-03-01T09:02:00Z", "1", events.Progress, "c")
	if n, err := s.AppendPlanLines(ctx, key, [][]byte{a, b}); err != nil || n != 2 {
		t.Fatalf("added %d, %v; want 2", n, err)
	}
	if _, err := s.Claim(ctx, key, 1, "w1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if n, err := s.AppendPlanLines(ctx, key, [][]byte{b, a, c}); err != nil || n != 1 {
		t.Fatalf("re-run added %d, %v; want 1 (c)", n, err)
	}
	got := scanAll(t, s, store.LogQuery{Coord: true})
	if len(got) != 4 || got[0] != string(a) || got[1] != string(b) || !strings.Contains(got[2], `"CLAIM"`) || got[3] != string(c) {
		t.Errorf("log in database order:\n%s", strings.Join(got, "\n"))
	}
	if got := scanAll(t, s, store.LogQuery{}); !slices.Equal(got, []string{string(a), string(b), string(c)}) {
		t.Errorf("plan events only: %v", got)
	}
	if got := scanAll(t, s, store.LogQuery{Task: "1", Kinds: []string{events.StateTransition}, Coord: true}); !slices.Equal(got, []string{string(a)}) {
		t.Errorf("task 1's transitions: %v", got)
	}
	if got := scanAll(t, s, store.LogQuery{Last: 2, Coord: true}); len(got) != 2 || got[1] != string(c) || !strings.Contains(got[0], `"CLAIM"`) {
		t.Errorf("last 2: %v", got)
	}
	// the coordination log is the claim's event alone, and replacing it
	// keeps the plan events
	var coord []events.Event
	if err := s.ScanEvents(ctx, key, func(e events.Event) { coord = append(coord, e) }); err != nil || len(coord) != 1 {
		t.Fatalf("coordination events %v, %v; want the claim alone", coord, err)
	}
	if err := s.ReplacePlan(ctx, key, store.PlanData{}); err != nil {
		t.Fatal(err)
	}
	if got := scanAll(t, s, store.LogQuery{Coord: true}); len(got) != 3 {
		t.Errorf("after replacing the coordination data: %v", got)
	}
	// a line that is no event adds nothing
	if n, err := s.AppendPlanLines(ctx, key, [][]byte{[]byte(`{"ts":"2026-03-01T09:03:00Z","event":"X"}`), []byte(`not json`)}); err == nil || n != 0 {
		t.Errorf("a bad line: added %d, err %v", n, err)
	}
	if got := scanAll(t, s, store.LogQuery{}); len(got) != 3 {
		t.Errorf("after a refused batch: %v", got)
	}
}

// ClaimNext's single-message first round trip writes the project, plan and
// agent into the statement: quotes and backslashes stay data.
func TestClaimNextQuotedValues(t *testing.T) {
	s := open(t, migrated(t))
	k := store.PlanKey{Project: `o'brien\repo'; DROP TABLE taskie_claims; --`, Plan: "p"}
	for i, agent := range []string{`a'1`, `b\2`} {
		d, ok, err := s.ClaimNext(ctx, k, []domain.TaskID{1, 2}, agent, time.Hour)
		if err != nil || !ok || int(d.Claim.Task) != i+1 || d.Claim.Agent != agent {
			t.Fatalf("claim %d by %q: %+v, %v, %v", i+1, agent, d, ok, err)
		}
	}
	cs, err := s.Claims(ctx, k)
	if err != nil || len(cs) != 2 || cs[0].Agent != `a'1` || cs[1].Agent != `b\2` {
		t.Errorf("claims %+v, %v", cs, err)
	}
	if _, ok, err := s.ClaimNext(ctx, k, []domain.TaskID{1, 2}, "c", time.Hour); ok || err != nil {
		t.Errorf("a third agent got a task: %v, %v", ok, err)
	}
}
