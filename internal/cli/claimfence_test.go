package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// A write for a claim is fenced atomically: the guard decided on the
// claim as it was, a takeover came before the write, and the write —
// a lifecycle move, a status, a note — is refused by the stale token,
// never made; the holder's own write goes through. Both stores.
func TestFencedWriteAfterTakeover(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// open opens the store; pass lets its lease clock run on.
		open func(t *testing.T) (c store.Coordination, key store.PlanKey, pass func(time.Duration))
	}{
		{"files", func(t *testing.T) (store.Coordination, store.PlanKey, func(time.Duration)) {
			dir := t.TempDir()
			fc, err := store.OpenFileCoordAt(dir, ".taskie/coord", false)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			fc.Clock = func() (time.Time, error) { return now, nil }
			return fc, store.PlanKey{Plan: "x"}, func(d time.Duration) { now = now.Add(d) }
		}},
		{"postgres", func(t *testing.T) (store.Coordination, store.PlanKey, func(time.Duration)) {
			url := pgtest.DB(t)
			m, err := postgres.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, _, err := m.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			s, err := postgres.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			return s, store.PlanKey{Project: "github.com/o/r", Plan: "x"}, time.Sleep
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, key, pass := tc.open(t)
			defer c.Close()
			here := domain.Fence{Place: "m1:clone:."}
			a, err := c.Claim(ctx, key, 1, "a", 10*time.Millisecond, here)
			if err != nil || a.Outcome != parallel.Granted {
				t.Fatalf("a's claim: %v %v", a.Outcome, err)
			}
			guard := func(agent string, token int64) *claimGuard {
				return &claimGuard{c: c, key: key, ctx: ctx, task: 1, actor: agent, command: "task move",
					fence: domain.Fence{Place: here.Place, Token: token}, d: parallel.WriteDecision{Outcome: parallel.WriteHolder}}
			}
			stale := guard("a", a.Claim.Token) // decided while a held it
			pass(time.Second)
			b, err := c.Claim(ctx, key, 1, "b", time.Minute, here)
			if err != nil || b.Outcome != parallel.Takeover {
				t.Fatalf("b's takeover: %v %v", b.Outcome, err)
			}
			wrote := false
			err = stale.fenced(func() error { wrote = true; return nil })
			var se *parallel.StaleTokenError
			if wrote || !errors.As(err, &se) {
				t.Errorf("a's write after the takeover: written %v, error %v; want refused by its stale token", wrote, err)
			}
			wrote = false
			if err := guard("b", b.Claim.Token).fenced(func() error { wrote = true; return nil }); err != nil || !wrote {
				t.Errorf("b's own write: written %v, error %v", wrote, err)
			}
		})
	}
}
