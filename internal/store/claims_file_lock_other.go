//go:build !unix

package store

import (
	"context"
	"math/rand/v2"
	"time"
)

// lock takes the sidecar lock file rel where flock(2) is not available:
// fsafe's TryLock, tried again after a short random wait (fsafe's Lock
// polls every 20 ms, too slowly for 20 agents claiming at once).
func (c *FileCoord) lock(ctx context.Context, rel string) (unlock func(), err error) {
	deadline := time.Now().Add(c.LockTimeout)
	wait := 200 * time.Microsecond
	for {
		l, ok, err := c.root.TryLock(rel)
		if err != nil {
			return nil, err
		}
		if ok {
			return func() { l.Unlock() }, nil
		}
		if !time.Now().Before(deadline) {
			return nil, c.lockTimeoutErr(rel)
		}
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 3*time.Millisecond)
	}
}
