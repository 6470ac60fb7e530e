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
// clone adds nothing), read back byte for byte in time order with the
// coordination events between them, filtered by task, kind and the last
// N; the coordination log and its import leave them alone.
func TestPlanLog(t *testing.T) {
	s := open(t, migrated(t))
	a := planLine("2026-03-01T09:00:00Z", "1", events.StateTransition, "a")
	b := planLine("2026-03-01T09:01:00Z", "2", events.StateTransition, "b")
	c := planLine("2026-03-01T09:02:00Z", "1", events.Progress, "c")
	if n, err := s.AppendPlanLines(ctx, key, [][]byte{a, b}, nil); err != nil || n != 2 {
		t.Fatalf("added %d, %v; want 2", n, err)
	}
	if _, err := s.Claim(ctx, key, 1, "w1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if n, err := s.AppendPlanLines(ctx, key, [][]byte{b, a, c}, nil); err != nil || n != 1 {
		t.Fatalf("re-run added %d, %v; want 1 (c)", n, err)
	}
	got := scanAll(t, s, store.LogQuery{Coord: true})
	// (the claim is stamped by the database's clock: now, after c)
	if len(got) != 4 || got[0] != string(a) || got[1] != string(b) || got[2] != string(c) || !strings.Contains(got[3], `"CLAIM"`) {
		t.Errorf("log in time order:\n%s", strings.Join(got, "\n"))
	}
	if got := scanAll(t, s, store.LogQuery{}); !slices.Equal(got, []string{string(a), string(b), string(c)}) {
		t.Errorf("plan events only: %v", got)
	}
	if got := scanAll(t, s, store.LogQuery{Task: "1", Kinds: []string{events.StateTransition}, Coord: true}); !slices.Equal(got, []string{string(a)}) {
		t.Errorf("task 1's transitions: %v", got)
	}
	if got := scanAll(t, s, store.LogQuery{Last: 2, Coord: true}); len(got) != 2 || got[0] != string(c) || !strings.Contains(got[1], `"CLAIM"`) {
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
	if n, err := s.AppendPlanLines(ctx, key, [][]byte{[]byte(`{"ts":"2026-03-01T09:03:00Z","event":"X"}`), []byte(`not json`)}, nil); err == nil || n != 0 {
		t.Errorf("a bad line: added %d, err %v", n, err)
	}
	if got := scanAll(t, s, store.LogQuery{}); len(got) != 3 {
		t.Errorf("after a refused batch: %v", got)
	}
}

// A log whose events arrived out of time order (a clone's older events
// imported late) is read in time order, ties in arrival order, across
// pages; MissingPlanKeys names the lines the database lacks.
func TestPlanLogTimeOrder(t *testing.T) {
	s := open(t, migrated(t))
	var late, early [][]byte
	for i := range scanPage + 500 {
		late = append(late, planLine("2026-03-01T10:00:00Z", "1", events.Progress, fmt.Sprintf("late %04d", i)))
		early = append(early, planLine("2026-03-01T09:00:00Z", "1", events.Progress, fmt.Sprintf("early %04d", i)))
	}
	keys := func(lines [][]byte) []string {
		var out []string
		for _, l := range lines {
			out = append(out, store.EventKey(l))
		}
		return out
	}
	if _, err := s.AppendPlanLines(ctx, key, late, nil); err != nil {
		t.Fatal(err)
	}
	if miss, err := s.MissingPlanKeys(ctx, key, keys(append(late[:2:2], early[:3]...))); err != nil || !slices.Equal(miss, []int{2, 3, 4}) {
		t.Fatalf("missing %v, %v; want [2 3 4]", miss, err)
	}
	if _, err := s.AppendPlanLines(ctx, key, early, nil); err != nil {
		t.Fatal(err)
	}
	got := scanAll(t, s, store.LogQuery{})
	want := make([]string, 0, 2*len(early))
	for _, l := range append(slices.Clone(early), late...) {
		want = append(want, string(l))
	}
	if !slices.Equal(got, want) {
		t.Errorf("read %d events, not in time order (first %q, last %q)", len(got), got[0], got[len(got)-1])
	}
	if got := scanAll(t, s, store.LogQuery{Last: 2}); !slices.Equal(got, want[len(want)-2:]) {
		t.Errorf("last 2: %v", got)
	}
}

// LockPlan makes two stores' moves of one plan take turns: the second
// waits until the first releases.
func TestLockPlan(t *testing.T) {
	url := migrated(t)
	a, b := open(t, url), open(t, url)
	release, err := a.LockPlan(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := b.LockPlan(ctx, key)
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second lock did not wait (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second lock was not granted after the release")
	}
	// another plan is not held up
	other := store.PlanKey{Project: key.Project, Plan: "other"}
	r, err := a.LockPlan(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer r()
	r2, err := b.LockPlan(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	r2()
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
