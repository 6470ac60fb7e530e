package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/storetest"
)

// TestFileCoordConformance runs the conformance suite of the coordination
// stores against the file store: one directory per case, a clock the case
// moves.
func TestFileCoordConformance(t *testing.T) {
	type fixture struct {
		root string
		mu   sync.Mutex
		now  time.Time
	}
	var mu sync.Mutex
	fixtures := map[*testing.T]*fixture{}
	get := func(t *testing.T) *fixture {
		mu.Lock()
		defer mu.Unlock()
		f := fixtures[t]
		if f == nil {
			f = &fixture{root: t.TempDir(), now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
			fixtures[t] = f
		}
		return f
	}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) store.Coordination {
			f := get(t)
			c, err := store.OpenFileCoord(f.root)
			if err != nil {
				t.Fatal(err)
			}
			c.Durable = false
			c.Clock = func() (time.Time, error) {
				f.mu.Lock()
				defer f.mu.Unlock()
				return f.now, nil
			}
			return c
		},
		Advance: func(t *testing.T, d time.Duration) {
			f := get(t)
			f.mu.Lock()
			defer f.mu.Unlock()
			f.now = f.now.Add(d)
		},
	})
}
