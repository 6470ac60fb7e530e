// Package storetest is the conformance suite of store.Coordination: every
// implementation (the file store, PostgreSQL) runs it and must behave the
// same (docs/fleet.md: every command works the same against either store).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
)

// Harness gives the suite handles on the store under test.
type Harness struct {
	// Open returns a new handle on test t's store: the first call of a
	// test makes it empty, later calls share its data, as the agent
	// processes of one fleet do. The handle is closed by the caller.
	Open func(t *testing.T) store.Coordination
	// Advance moves the coordination clock of every handle of test t
	// forward by d.
	Advance func(t *testing.T, d time.Duration)
	// Project is the project of the plan keys (a file store ignores it).
	Project string
}

// Run runs every case of the suite as a subtest of t.
func Run(t *testing.T, h Harness) {
	if h.Project == "" {
		h.Project = "example.com/org/repo"
	}
	cases := []struct {
		name string
		fn   func(*testing.T, *suite)
	}{
		{"GrantRenewRefuseRelease", testGrantRenewRefuseRelease},
		{"Refusals", testRefusals},
		{"ExpiryTakeover", testExpiryTakeover},
		{"DefaultTTL", testDefaultTTL},
		{"HeartbeatRevives", testHeartbeatRevives},
		{"ReleaseThenGrant", testReleaseThenGrant},
		{"ClaimNextOrder", testClaimNextOrder},
		{"ClaimNextNone", testClaimNextNone},
		{"ClaimsListing", testClaimsListing},
		{"PlansIsolated", testPlansIsolated},
		{"OneWinner", testOneWinner},
		{"NextDistinct", testNextDistinct},
		{"NoDoubleHolder", testNoDoubleHolder},
		{"EventsRoundTrip", testEventsRoundTrip},
		{"ReplacePlan", testReplacePlan},
		{"FencingTokens", testFencingTokens},
		{"SameNameTwoPlaces", testSameNameTwoPlaces},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, &suite{t: t, h: h, key: store.PlanKey{Project: h.Project, Plan: "p"}})
		})
	}
}

// suite is one case's view of the harness.
type suite struct {
	t   *testing.T
	h   Harness
	key store.PlanKey
}

var ctx = context.Background()

func (s *suite) open() store.Coordination {
	s.t.Helper()
	c := s.h.Open(s.t)
	s.t.Cleanup(func() { c.Close() })
	return c
}

func (s *suite) advance(d time.Duration) { s.h.Advance(s.t, d) }

func (s *suite) plan(id string) store.PlanKey { return store.PlanKey{Project: s.h.Project, Plan: id} }

// now reads c's clock.
func (s *suite) now(c store.Coordination) time.Time {
	s.t.Helper()
	now, err := c.Now(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	return now
}

// kinds lists the kinds of p's events.
func (s *suite) kinds(c store.Coordination, p store.PlanKey) []string {
	s.t.Helper()
	var out []string
	if err := c.ScanEvents(ctx, p, func(e events.Event) { out = append(out, e.Event) }); err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *suite) want(what string, d parallel.ClaimDecision, err error, want parallel.Outcome) parallel.ClaimDecision {
	s.t.Helper()
	if err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
	if d.Outcome != want {
		s.t.Fatalf("%s: %v (%v), want %v", what, d.Outcome, d.Err, want)
	}
	return d
}

func testGrantRenewRefuseRelease(t *testing.T, s *suite) {
	c := s.open()
	d, err := c.Claim(ctx, s.key, 1, "a", time.Minute)
	first := s.want("first claim", d, err, parallel.Granted)
	if first.Claim.Agent != "a" || first.Claim.Task != 1 || !first.Claim.Expires.Equal(first.Claim.Acquired.Add(time.Minute)) ||
		!first.Claim.Heartbeat.Equal(first.Claim.Acquired) {
		t.Errorf("granted claim %+v", first.Claim)
	}
	s.advance(10 * time.Second)
	d, err = c.Claim(ctx, s.key, 1, "a", 2*time.Minute)
	d = s.want("claim by the holder", d, err, parallel.Renewed)
	if !d.Claim.Acquired.Equal(first.Claim.Acquired) || !d.Claim.Expires.Equal(d.Claim.Heartbeat.Add(2*time.Minute)) || !d.Claim.Heartbeat.After(first.Claim.Heartbeat) {
		t.Errorf("renewed claim %+v after %+v", d.Claim, first.Claim)
	}
	d, err = c.Claim(ctx, s.key, 1, "b", time.Minute)
	d = s.want("claim by another agent", d, err, parallel.Refused)
	var held *parallel.HeldError
	if !errors.As(d.Err, &held) || held.Holder.Agent != "a" || held.Agent != "b" || d.Previous == nil || d.Previous.Agent != "a" {
		t.Errorf("refusal %v, previous %+v", d.Err, d.Previous)
	}
	d, err = c.Heartbeat(ctx, s.key, 1, "a", time.Minute)
	s.want("heartbeat by the holder", d, err, parallel.Renewed)
	d, err = c.Heartbeat(ctx, s.key, 1, "b", time.Minute)
	s.want("heartbeat by another agent", d, err, parallel.Refused)
	d, err = c.Release(ctx, s.key, 1, "b")
	s.want("release by another agent", d, err, parallel.Refused)
	d, err = c.Release(ctx, s.key, 1, "a")
	if d = s.want("release by the holder", d, err, parallel.Released); d.Claim.Agent != "a" {
		t.Errorf("released %+v", d.Claim)
	}
	if cs, err := c.Claims(ctx, s.key); err != nil || len(cs) != 0 {
		t.Errorf("claims after release: %v, %v", cs, err)
	}
	// Renewals are not logged; refusals change nothing.
	if diff := cmp.Diff([]string{store.EventClaim, store.EventRelease}, s.kinds(c, s.key)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func testRefusals(t *testing.T, s *suite) {
	c := s.open()
	checks := []struct {
		what string
		run  func() (parallel.ClaimDecision, error)
		want error
	}{
		{"claim without an agent", func() (parallel.ClaimDecision, error) { return c.Claim(ctx, s.key, 1, "", time.Minute) }, parallel.ErrNoAgent},
		{"heartbeat of an unclaimed task", func() (parallel.ClaimDecision, error) { return c.Heartbeat(ctx, s.key, 1, "a", time.Minute) }, parallel.ErrNotClaimed},
		{"release of an unclaimed task", func() (parallel.ClaimDecision, error) { return c.Release(ctx, s.key, 1, "a") }, parallel.ErrNotClaimed},
		{"release without an agent", func() (parallel.ClaimDecision, error) { return c.Release(ctx, s.key, 1, "") }, parallel.ErrNoAgent},
	}
	for _, ch := range checks {
		d, err := ch.run()
		if err != nil || d.Outcome != parallel.Refused || !errors.Is(d.Err, ch.want) {
			t.Errorf("%s: %v, %v, %v; want refused with %v", ch.what, d.Outcome, d.Err, err, ch.want)
		}
	}
	if cs, err := c.Claims(ctx, s.key); err != nil || len(cs) != 0 {
		t.Errorf("claims after refusals: %v, %v", cs, err)
	}
	if k := s.kinds(c, s.key); len(k) != 0 {
		t.Errorf("events after refusals: %v", k)
	}
	if _, err := c.Claim(ctx, s.plan("../x"), 1, "a", time.Minute); err == nil {
		t.Error("a plan id with .. was accepted")
	}
}

func testExpiryTakeover(t *testing.T, s *suite) {
	a, b := s.open(), s.open()
	d, err := a.Claim(ctx, s.key, 3, "a", 10*time.Minute)
	granted := s.want("first claim", d, err, parallel.Granted)
	s.advance(9 * time.Minute)
	d, err = b.Claim(ctx, s.key, 3, "b", time.Minute)
	d = s.want("claim of a live lease", d, err, parallel.Refused)
	var held *parallel.HeldError
	if !errors.As(d.Err, &held) || !held.Holder.Live(held.Now) {
		t.Errorf("refusal %v", d.Err)
	}
	s.advance(time.Minute)
	d, err = b.Claim(ctx, s.key, 3, "b", 5*time.Minute)
	d = s.want("claim of an expired lease", d, err, parallel.Takeover)
	if d.Previous == nil || d.Previous.Agent != "a" || !d.Previous.Expires.Equal(granted.Claim.Expires) {
		t.Errorf("previous %+v, want a's lease %+v", d.Previous, granted.Claim)
	}
	if d.Claim.Agent != "b" || !d.Claim.Acquired.Equal(d.Claim.Heartbeat) || !d.Claim.Expires.Equal(d.Claim.Acquired.Add(5*time.Minute)) {
		t.Errorf("taken over %+v", d.Claim)
	}
	var evs []events.Event
	if err := a.ScanEvents(ctx, s.key, func(e events.Event) { evs = append(evs, e) }); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Event != store.EventClaim || evs[1].Event != store.EventClaimTakeover {
		t.Fatalf("events %+v", evs)
	}
	// Events carry their time to the second in every store.
	if e := evs[1]; e.From != "a" || e.To != "b" || e.Task != "3" || e.Plan != "p" || !e.TS.Equal(d.Claim.Acquired.Truncate(time.Second)) {
		t.Errorf("takeover event %+v", e)
	}
	if e := evs[0]; e.Actor != "a" || e.Task != "3" || !e.TS.Equal(granted.Claim.Acquired.Truncate(time.Second)) {
		t.Errorf("claim event %+v", e)
	}
	// a's release after the takeover is refused: b holds the task.
	d, err = a.Release(ctx, s.key, 3, "a")
	s.want("release by the agent taken over", d, err, parallel.Refused)
}

func testDefaultTTL(t *testing.T, s *suite) {
	c := s.open()
	d, err := c.Claim(ctx, s.key, 1, "a", 0)
	d = s.want("claim with no ttl", d, err, parallel.Granted)
	if got := d.Claim.Expires.Sub(d.Claim.Acquired); got != domain.DefaultLeaseTTL {
		t.Errorf("lease of %s, want the default %s", got, domain.DefaultLeaseTTL)
	}
}

func testHeartbeatRevives(t *testing.T, s *suite) {
	c := s.open()
	d, err := c.Claim(ctx, s.key, 1, "a", time.Minute)
	granted := s.want("claim", d, err, parallel.Granted)
	s.advance(2 * time.Minute)
	d, err = c.Heartbeat(ctx, s.key, 1, "a", time.Minute)
	d = s.want("heartbeat of an expired lease nobody took", d, err, parallel.Renewed)
	if !d.Revived || !d.Claim.Acquired.Equal(granted.Claim.Acquired) || !d.Claim.Live(s.now(c)) {
		t.Errorf("revived %+v", d)
	}
}

func testReleaseThenGrant(t *testing.T, s *suite) {
	c := s.open()
	d, err := c.Claim(ctx, s.key, 1, "a", time.Minute)
	s.want("claim", d, err, parallel.Granted)
	d, err = c.Release(ctx, s.key, 1, "a")
	s.want("release", d, err, parallel.Released)
	d, err = c.Claim(ctx, s.key, 1, "b", time.Minute)
	if d = s.want("claim after release", d, err, parallel.Granted); d.Previous != nil {
		t.Errorf("previous %+v after a release", d.Previous)
	}
	if diff := cmp.Diff([]string{store.EventClaim, store.EventRelease, store.EventClaim}, s.kinds(c, s.key)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func testClaimNextOrder(t *testing.T, s *suite) {
	c := s.open()
	ready := []domain.TaskID{1, 2, 3}
	d, err := c.Claim(ctx, s.key, 1, "x", time.Hour)
	s.want("claim of 1", d, err, parallel.Granted)
	d, err = c.Claim(ctx, s.key, 2, "y", time.Second)
	s.want("claim of 2", d, err, parallel.Granted)
	s.advance(2 * time.Second) // y's lease on 2 has expired
	d, ok, err := c.ClaimNext(ctx, s.key, ready, "z", time.Minute)
	if err != nil || !ok || d.Outcome != parallel.Takeover || d.Claim.Task != 2 || d.Previous == nil || d.Previous.Agent != "y" {
		t.Fatalf("next for z: %+v %v %v", d, ok, err)
	}
	d, ok, err = c.ClaimNext(ctx, s.key, ready, "x", time.Minute)
	if err != nil || !ok || d.Outcome != parallel.Renewed || d.Claim.Task != 1 {
		t.Errorf("next for x, the holder of 1: %+v %v %v", d, ok, err)
	}
	d, ok, err = c.ClaimNext(ctx, s.key, []domain.TaskID{3, 1, 2}, "w", time.Minute)
	if err != nil || !ok || d.Outcome != parallel.Granted || d.Claim.Task != 3 {
		t.Errorf("next for w: %+v %v %v", d, ok, err)
	}
	d, ok, err = c.ClaimNext(ctx, s.key, []domain.TaskID{5, 4}, "w", time.Minute)
	if err != nil || !ok || d.Claim.Task != 5 {
		t.Errorf("next in the order given: %+v %v %v", d, ok, err)
	}
}

func testClaimNextNone(t *testing.T, s *suite) {
	c := s.open()
	if _, ok, err := c.ClaimNext(ctx, s.key, nil, "a", time.Minute); ok || err != nil {
		t.Errorf("next of no tasks: %v, %v", ok, err)
	}
	for _, task := range []domain.TaskID{1, 2} {
		d, err := c.Claim(ctx, s.key, task, "a", time.Minute)
		s.want("claim", d, err, parallel.Granted)
	}
	before := s.kinds(c, s.key)
	d, ok, err := c.ClaimNext(ctx, s.key, []domain.TaskID{1, 2}, "b", time.Minute)
	if ok || err != nil || d.Outcome != 0 {
		t.Errorf("next when every task is held: %+v, %v, %v", d, ok, err)
	}
	if after := s.kinds(c, s.key); len(after) != len(before) {
		t.Errorf("events %v after a claim that got nothing, were %v", after, before)
	}
}

func testClaimsListing(t *testing.T, s *suite) {
	c := s.open()
	var want []parallel.Claim
	for _, task := range []domain.TaskID{3, 1, 2} {
		ttl := time.Hour
		if task == 2 {
			ttl = time.Minute
		}
		d, err := c.Claim(ctx, s.key, task, fmt.Sprintf("agent-%d", task), ttl)
		want = append(want, s.want("claim", d, err, parallel.Granted).Claim)
	}
	want[0], want[1], want[2] = want[1], want[2], want[0] // by task
	s.advance(2 * time.Minute)                            // 2 has expired: still listed
	got, err := s.open().Claims(ctx, s.key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	now := s.now(c)
	if got[1].Live(now) || !got[0].Live(now) {
		t.Errorf("liveness at %v: %+v", now, got)
	}
}

func testPlansIsolated(t *testing.T, s *suite) {
	c := s.open()
	q := s.plan("q")
	d, err := c.Claim(ctx, s.key, 1, "a", time.Minute)
	s.want("claim in p", d, err, parallel.Granted)
	d, err = c.Claim(ctx, q, 1, "b", time.Minute)
	s.want("claim of the same task in q", d, err, parallel.Granted)
	if err := c.AppendEvents(ctx, q, events.Event{Event: store.EventTaskResult, Task: "1"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{store.EventClaim}, s.kinds(c, s.key)); diff != "" {
		t.Errorf("events of p (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{store.EventClaim, store.EventTaskResult}, s.kinds(c, q)); diff != "" {
		t.Errorf("events of q (-want +got):\n%s", diff)
	}
}

// agents is how many agents the concurrency cases run, each with its own
// handle (its own descriptors or connection, as a process would have).
const agents = 20

func testOneWinner(t *testing.T, s *suite) {
	handles := make([]store.Coordination, agents)
	for i := range handles {
		handles[i] = s.open()
	}
	outcomes := make([]parallel.Outcome, agents)
	var wg sync.WaitGroup
	for i, c := range handles {
		wg.Go(func() {
			d, err := c.Claim(ctx, s.key, 7, fmt.Sprintf("agent-%02d", i), time.Minute)
			if err != nil {
				t.Error(err)
			}
			outcomes[i] = d.Outcome
		})
	}
	wg.Wait()
	granted := 0
	for _, o := range outcomes {
		switch o {
		case parallel.Granted:
			granted++
		case parallel.Refused:
		default:
			t.Errorf("outcome %v", o)
		}
	}
	if granted != 1 {
		t.Errorf("%d winners, want 1", granted)
	}
	if k := s.kinds(handles[0], s.key); len(k) != 1 {
		t.Errorf("events %v, want one claim", k)
	}
}

func testNextDistinct(t *testing.T, s *suite) {
	ready := make([]domain.TaskID, agents)
	for i := range ready {
		ready[i] = domain.TaskID(i + 1)
	}
	handles := make([]store.Coordination, agents)
	for i := range handles {
		handles[i] = s.open()
	}
	var mu sync.Mutex
	got := map[domain.TaskID]string{}
	var wg sync.WaitGroup
	for i, c := range handles {
		wg.Go(func() {
			agent := fmt.Sprintf("agent-%02d", i)
			d, ok, err := c.ClaimNext(ctx, s.key, ready, agent, time.Minute)
			if err != nil || !ok || d.Outcome != parallel.Granted {
				t.Errorf("%s: %v %v %v", agent, d.Outcome, ok, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if prev, dup := got[d.Claim.Task]; dup {
				t.Errorf("task %d given to %s and %s", d.Claim.Task, prev, agent)
			}
			got[d.Claim.Task] = agent
		})
	}
	wg.Wait()
	if len(got) != agents {
		t.Errorf("%d tasks claimed, want %d", len(got), agents)
	}
	c := s.open()
	if d, ok, err := c.ClaimNext(ctx, s.key, ready, "late", time.Minute); ok || err != nil {
		t.Errorf("a 21st agent got a task: %+v, %v", d, err)
	}
	if cs, err := c.Claims(ctx, s.key); err != nil || len(cs) != agents {
		t.Errorf("%d claims stored (%v), want %d", len(cs), err, agents)
	}
	if k := s.kinds(c, s.key); len(k) != agents {
		t.Errorf("%d events, want %d claims", len(k), agents)
	}
}

// testNoDoubleHolder runs agents that claim and release a few tasks over
// and over, then replays the log: each task goes free → claimed → released
// → claimed…, never claimed twice without a release between.
func testNoDoubleHolder(t *testing.T, s *suite) {
	const rounds, n = 8, 10
	ready := []domain.TaskID{1, 2, 3, 4, 5}
	var wg sync.WaitGroup
	for i := range n {
		c := s.open()
		wg.Go(func() {
			agent := fmt.Sprintf("agent-%02d", i)
			for range rounds {
				d, ok, err := c.ClaimNext(ctx, s.key, ready, agent, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					continue
				}
				if r, err := c.Release(ctx, s.key, d.Claim.Task, agent); err != nil || r.Outcome != parallel.Released {
					t.Errorf("%s releasing %d: %v %v", agent, d.Claim.Task, r.Outcome, err)
				}
			}
		})
	}
	wg.Wait()
	holder := map[string]string{}
	claims := 0
	err := s.open().ScanEvents(ctx, s.key, func(e events.Event) {
		switch e.Event {
		case store.EventClaim:
			claims++
			if h := holder[e.Task]; h != "" {
				t.Errorf("task %s claimed by %s while %s held it", e.Task, e.Actor, h)
			}
			holder[e.Task] = e.Actor
		case store.EventRelease:
			if h := holder[e.Task]; h != e.Actor {
				t.Errorf("task %s released by %s while %q held it", e.Task, e.Actor, h)
			}
			holder[e.Task] = ""
		default:
			t.Errorf("unexpected event %+v", e)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if claims == 0 {
		t.Error("no claim was made")
	}
	if cs, err := s.open().Claims(ctx, s.key); err != nil || len(cs) != 0 {
		t.Errorf("claims left: %v, %v", cs, err)
	}
}

func testEventsRoundTrip(t *testing.T, s *suite) {
	c := s.open()
	before := s.now(c)
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)
	in := []events.Event{
		{Event: store.EventTaskResult, Task: "3", Actor: "agent-1",
			Meta: map[string]any{"status": "complete", "commit": "abc123", "attempt": float64(2), "files": []any{"a.go", "b.go"}}},
		{TS: at, Plan: "p", Event: "CUSTOM", From: "x", To: "y", Reason: "ünïcode \"quoted\"\nline",
			Set:   map[string]json.RawMessage{"phase": json.RawMessage(`"implementation"`), "n": json.RawMessage(`{"a":[1,2.50]}`)},
			Unset: []string{"current_task"}, Tasks: map[string]string{"3": "done"}},
	}
	if err := c.AppendEvents(ctx, s.key, in...); err != nil {
		t.Fatal(err)
	}
	if err := c.AppendEvents(ctx, s.key); err != nil {
		t.Fatalf("appending nothing: %v", err)
	}
	after := s.now(c)
	var got []events.Event
	if err := s.open().ScanEvents(ctx, s.key, func(e events.Event) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d events read back, want 2: %+v", len(got), got)
	}
	if ts := got[0].TS; ts.Before(before.Add(-time.Second)) || ts.After(after.Add(time.Second)) {
		t.Errorf("an event without a time got %v, want the clock's (%v…%v)", ts, before, after)
	}
	want := in
	want[0].TS, want[0].Plan = got[0].TS, "p"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events read back (-want +got):\n%s", diff)
	}
}

func testReplacePlan(t *testing.T, s *suite) {
	c := s.open()
	r, ok := c.(store.Replacer)
	if !ok {
		t.Skip("this store cannot be written whole")
	}
	d, err := c.Claim(ctx, s.key, 9, "old", time.Minute)
	s.want("claim", d, err, parallel.Granted)
	t0 := s.now(c).Add(-time.Hour).Truncate(time.Second)
	data := store.PlanData{
		Claims: []parallel.Claim{
			{Task: 1, Agent: "a", Acquired: t0, Expires: t0.Add(2 * time.Hour), Heartbeat: t0.Add(time.Minute)},
			{Task: 2, Agent: "b", Acquired: t0, Expires: t0.Add(time.Second), Heartbeat: t0},
		},
		Events: []events.Event{
			{TS: t0, Plan: "p", Task: "1", Event: store.EventClaim, Actor: "a", Meta: map[string]any{"ttl": "1h0m0s"}},
			{TS: t0.Add(time.Second), Plan: "p", Task: "2", Event: store.EventClaim, Actor: "b"},
		},
	}
	if err := r.ReplacePlan(ctx, s.key, data); err != nil {
		t.Fatal(err)
	}
	got, err := store.ReadPlan(ctx, s.open(), s.key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(data, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("plan read back (-want +got):\n%s", diff)
	}
	// The replaced data behave as claims: 2 has expired, 1 is held.
	d, err = c.Claim(ctx, s.key, 2, "c", time.Minute)
	s.want("claim of the expired imported lease", d, err, parallel.Takeover)
	d, err = c.Claim(ctx, s.key, 9, "c", time.Minute)
	s.want("claim of a task whose claim was replaced away", d, err, parallel.Granted)
}

// testFencingTokens: every claim granted or taken over gets a token above
// the task's earlier ones, renewals keep it, and after a takeover or a
// release the old token is refused for a heartbeat, a release and a
// fenced append, while the current one is accepted.
func testFencingTokens(t *testing.T, s *suite) {
	c := s.open()
	at := domain.Fence{Place: "m:c:."}
	d, err := c.Claim(ctx, s.key, 1, "a", time.Minute, at)
	t1 := s.want("claim", d, err, parallel.Granted).Claim.Token
	if t1 <= 0 {
		t.Fatalf("granted token %d, want > 0", t1)
	}
	d, err = c.Claim(ctx, s.key, 1, "a", time.Minute, at)
	if d = s.want("renewal", d, err, parallel.Renewed); d.Claim.Token != t1 {
		t.Errorf("renewal token %d, want %d kept", d.Claim.Token, t1)
	}
	s.advance(2 * time.Minute)
	d, err = c.Claim(ctx, s.key, 1, "b", time.Minute, at)
	t2 := s.want("takeover", d, err, parallel.Takeover).Claim.Token
	if t2 <= t1 {
		t.Fatalf("takeover token %d, want above %d", t2, t1)
	}
	d, err = c.Heartbeat(ctx, s.key, 1, "b", time.Minute, domain.Fence{Place: at.Place, Token: t1})
	s.want("heartbeat with b's name and a's token", d, err, parallel.Refused)
	var stale *parallel.StaleTokenError
	if !errors.As(d.Err, &stale) {
		t.Errorf("refusal %v, want a stale token", d.Err)
	}
	if err := c.AppendFenced(ctx, s.key, 1, "a", domain.Fence{Token: t1}, events.Event{Event: "TASK_RESULT", Task: "1"}); !errors.As(err, &stale) {
		t.Errorf("append with a stale token: %v, want refused", err)
	}
	if err := c.AppendFenced(ctx, s.key, 1, "b", domain.Fence{Token: t2}, events.Event{Event: "TASK_RESULT", Task: "1"}); err != nil {
		t.Errorf("append with the current token: %v", err)
	}
	d, err = c.Release(ctx, s.key, 1, "b", domain.Fence{Token: t2})
	s.want("release with the current token", d, err, parallel.Released)
	d, err = c.Heartbeat(ctx, s.key, 1, "b", time.Minute, domain.Fence{Token: t2})
	s.want("heartbeat after the release", d, err, parallel.Refused)
	if err := c.AppendFenced(ctx, s.key, 1, "b", domain.Fence{Token: t2}, events.Event{Event: "TASK_RESULT", Task: "1"}); !errors.As(err, &stale) {
		t.Errorf("append after the release: %v, want refused", err)
	}
	d, err = c.Claim(ctx, s.key, 1, "a", time.Minute, at)
	if t3 := s.want("claim after the release", d, err, parallel.Granted).Claim.Token; t3 <= t2 {
		t.Errorf("token after the release %d, want above %d", t3, t2)
	}
	if got := s.kinds(c, s.key); slices.Index(got, "TASK_RESULT") < 0 || len(slices.DeleteFunc(slices.Clone(got), func(k string) bool { return k != "TASK_RESULT" })) != 1 {
		t.Errorf("events %v, want one TASK_RESULT", got)
	}
}

// testSameNameTwoPlaces: a name holding a live claim from one place is
// refused from another; ClaimNext passes that task by.
func testSameNameTwoPlaces(t *testing.T, s *suite) {
	c := s.open()
	one, two := domain.Fence{Place: "m1:c:."}, domain.Fence{Place: "m2:c:."}
	d, err := c.Claim(ctx, s.key, 1, "w", time.Minute, one)
	if d = s.want("claim", d, err, parallel.Granted); d.Claim.Place != one.Place {
		t.Errorf("place %q, want %q", d.Claim.Place, one.Place)
	}
	d, err = c.Claim(ctx, s.key, 1, "w", time.Minute, two)
	s.want("the same name elsewhere", d, err, parallel.Refused)
	var place *parallel.PlaceError
	if !errors.As(d.Err, &place) {
		t.Errorf("refusal %v, want another place", d.Err)
	}
	d, err = c.Heartbeat(ctx, s.key, 1, "w", time.Minute, two)
	s.want("heartbeat from elsewhere", d, err, parallel.Refused)
	d, err = c.Release(ctx, s.key, 1, "w", two)
	s.want("release from elsewhere", d, err, parallel.Refused)
	d, ok, err := c.ClaimNext(ctx, s.key, []domain.TaskID{1, 2}, "w", time.Minute, two)
	if err != nil || !ok || d.Claim.Task != 2 {
		t.Errorf("claim next from elsewhere: %+v %v %v, want task 2", d, ok, err)
	}
	d, err = c.Heartbeat(ctx, s.key, 1, "w", time.Minute, one)
	s.want("heartbeat from its place", d, err, parallel.Renewed)
}
