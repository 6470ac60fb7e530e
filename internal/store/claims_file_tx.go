package store

import (
	"context"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// CoordTx is one session under a plan's coordination lock: the clone's
// own records of a claim (the token held, the checkout or worktree it
// was claimed from) are written in the session that decides the claim,
// so that a claim through the binary takes the lock once, not three
// times (each wait behind twenty agents).
type CoordTx struct {
	c   *FileCoord
	p   PlanKey
	now time.Time
	doc *worktreesDoc // read once per session
}

// Now is the coordination clock of the session.
func (t *CoordTx) Now() time.Time { return t.now }

// Records runs fn in a session of its own under the plan's lock.
func (c *FileCoord) Records(ctx context.Context, p PlanKey, fn func(tx *CoordTx)) error {
	return c.locked(ctx, p, func(now time.Time) error {
		fn(&CoordTx{c: c, p: p, now: now})
		return nil
	})
}

// ClaimThen is Claim, running then in the same session once decided.
func (c *FileCoord) ClaimThen(ctx context.Context, p PlanKey, task domain.TaskID, agent string, ttl time.Duration, f domain.Fence, then func(d domain.ClaimDecision, tx *CoordTx)) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		cf, err := c.readClaimsFile(p)
		if err != nil {
			return err
		}
		d = Rules().Claim(task, current(cf.claims, task), agent, f, now, ttl)
		if err := c.apply(p, cf, &d, ttl, now); err != nil {
			return err
		}
		then(d, &CoordTx{c: c, p: p, now: now})
		return nil
	})
	return d, err
}

// ReleaseForced releases task's claim whoever holds it, in the holder's
// name: its token is kept among the lost claims, so that the holder's
// later commands are refused as stale.
func (c *FileCoord) ReleaseForced(ctx context.Context, p PlanKey, task domain.TaskID, holder string) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		cf, err := c.readClaimsFile(p)
		if err != nil {
			return err
		}
		d = Rules().Release(task, current(cf.claims, task), holder, domain.Fence{}, now)
		if d.Outcome == domain.ClaimReleased {
			cf.lose(d.Claim)
		}
		return c.apply(p, cf, &d, 0, now)
	})
	return d, err
}

// RecordHeld is FileCoord.RecordHeld in the session.
func (t *CoordTx) RecordHeld(h Held) error {
	if t.c.holds {
		return nil // the claim itself keeps its token (HeldToken)
	}
	hs, err := t.c.readHeld(t.p)
	if err != nil {
		return err
	}
	n := len(hs)
	hs = slices.DeleteFunc(hs, func(x Held) bool { return x.Task == h.Task && x.Agent == h.Agent && x.Place == h.Place })
	if h.Token <= 0 && len(hs) == n {
		return nil // nothing recorded to drop
	}
	if h.Token > 0 {
		h.At = t.now
		hs = append(hs, h)
	}
	if len(hs) > maxHeld {
		hs = hs[len(hs)-maxHeld:]
	}
	rel, err := t.c.rel(t.p, HeldName)
	if err != nil {
		return err
	}
	data, err := encodeHeld(hs)
	if err != nil {
		return err
	}
	return t.c.root.WriteFile(rel, append(data, '\n'), t.c.Durable)
}

// Worktrees is the plan's worktree record as the session reads it.
func (t *CoordTx) Worktrees() ([]Worktree, error) {
	doc, err := t.worktrees()
	if err != nil {
		return nil, err
	}
	return doc.Worktrees, nil
}

func (t *CoordTx) worktrees() (*worktreesDoc, error) {
	if t.doc == nil {
		doc, err := t.c.readWorktrees(t.p)
		if err != nil {
			return nil, err
		}
		t.doc = &doc
	}
	return t.doc, nil
}

// UpdateWorktrees is FileCoord.UpdateWorktrees in the session.
func (t *CoordTx) UpdateWorktrees(fn func(ws []Worktree, now time.Time) ([]Worktree, error)) error {
	return t.updateDoc(func(doc *worktreesDoc, now time.Time) error {
		ws, err := fn(doc.Worktrees, now)
		doc.Worktrees = ws
		return err
	})
}

// RecordCheckout is FileCoord.RecordCheckout in the session: a line
// appended to checkouts.jsonl, the newest line of a task replacing the
// ones before it. Appending creates no file: replacing worktrees.json on
// every claim cost the kernel a new inode, under the lock. The log is
// compacted to the newest line of each task when it passes
// maxCheckoutLog.
func (t *CoordTx) RecordCheckout(task domain.TaskID, path, head string) error {
	rel, err := t.c.rel(t.p, CheckoutsName)
	if err != nil {
		return err
	}
	line, err := encodeCheckoutLine(Checkout{Task: task, Path: path, Head: head, Claimed: t.now})
	if err != nil {
		return err
	}
	if err := t.c.root.AppendFile(rel, line, 0o644, t.c.Durable); err != nil {
		return err
	}
	if fi, err := t.c.root.Lstat(rel); err == nil && fi.Size() > maxCheckoutLog {
		ks, err := t.c.readCheckouts(t.p)
		if err != nil {
			return err
		}
		var data []byte
		for _, k := range ks {
			l, err := encodeCheckoutLine(k)
			if err != nil {
				return err
			}
			data = append(data, l...)
		}
		return t.c.root.WriteFile(rel, data, t.c.Durable)
	}
	return nil
}

func (t *CoordTx) updateDoc(fn func(doc *worktreesDoc, now time.Time) error) error {
	doc, err := t.worktrees()
	if err != nil {
		return err
	}
	next := worktreesDoc{Worktrees: slices.Clone(doc.Worktrees), Checkouts: slices.Clone(doc.Checkouts)}
	if err := fn(&next, t.now); err != nil {
		return err
	}
	slices.SortFunc(next.Worktrees, func(a, b Worktree) int { return int(a.Task) - int(b.Task) })
	slices.SortFunc(next.Checkouts, func(a, b Checkout) int { return int(a.Task) - int(b.Task) })
	rel, err := t.c.rel(t.p, WorktreesName)
	if err != nil {
		return err
	}
	data, err := encodeWorktreesDoc(next)
	if err != nil {
		return err
	}
	if err := t.c.root.WriteFile(rel, append(data, '\n'), t.c.Durable); err != nil {
		return err
	}
	*doc = next
	return nil
}

// ClaimNextBy is ClaimNext whose ready tasks are picked under the lock,
// from the claims as found there (the claims are read once), running
// then in the same session when a task was claimed.
func (c *FileCoord) ClaimNextBy(ctx context.Context, p PlanKey, agent string, ttl time.Duration, f domain.Fence, pick func(claims []domain.Claim, now time.Time) []domain.TaskID, then func(d domain.ClaimDecision, tx *CoordTx)) (d domain.ClaimDecision, ok bool, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		cf, err := c.readClaimsFile(p)
		if err != nil {
			return err
		}
		if d, ok, err = c.claimFirst(p, cf, pick(sortedClaims(cf.claims), now), agent, ttl, f, now); err != nil || !ok {
			return err
		}
		then(d, &CoordTx{c: c, p: p, now: now})
		return nil
	})
	return d, ok, err
}
