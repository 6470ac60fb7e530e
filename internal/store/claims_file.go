package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/plan"
)

// Files of a plan's coordination directory.
const (
	ClaimsName    = "claims.json"
	CoordLogName  = "events.jsonl"
	coordLockName = ".lock"
)

// coordBase is the coordination directory under the git common directory,
// and fallbackBase the one under the repository root outside git
// (git-ignored by taskie init).
const (
	coordBase    = "taskie"
	fallbackBase = ".taskie/coord"
)

// FileCoord is the file implementation of Coordination: each plan's claims
// live in <git common dir>/taskie/<plan>/claims.json, which every worktree
// of the clone shares, with the plan's coordination events beside them in
// events.jsonl. Outside git the directory is .taskie/coord/<plan>/ of the
// repository. Every change is read-modify-write under an exclusive lock on
// the sidecar .lock; the policy is package parallel's.
//
// The worktrees taskie made for the plan are recorded there too
// (worktrees.json): worktrees belong to one clone, so that record stays in
// files whatever store holds the claims.
type FileCoord struct {
	root   *fsafe.Root
	base   string // relative to root
	shared bool   // root is the git common directory
	// Clock is "now" for every lease: the real clock unless the caller
	// hands its lease clock (OpenCoordination, clock.Clock.Lease); tests
	// replace it.
	Clock func() (time.Time, error)
	// LockTimeout bounds the wait for a plan's coordination lock.
	LockTimeout time.Duration
	// Durable fsyncs every write. It is off by default: the claims of a
	// clone are held by processes of this machine, which an OS crash or a
	// power cut ends too, so a claim lost with the page cache is never
	// held by a live agent (one that resumes later finds it not claimed
	// and claims again); a process killed mid-write loses nothing, the
	// page cache being the kernel's. Under I/O load the three fsyncs of a
	// claim cost more than the rest of it together.
	Durable bool
}

var _ Coordination = (*FileCoord)(nil)

// OpenFileCoord opens the coordination directory of the repository at
// repoRoot: under its git common directory (found once, with `git
// rev-parse --git-common-dir`), or under .taskie/coord/ when repoRoot is in
// no git repository. A git that fails for another reason (a repository it
// refuses to read) is an error: falling back would split the claims of
// the clone's worktrees.
func OpenFileCoord(repoRoot string) (*FileCoord, error) {
	dir, base, shared := repoRoot, fallbackBase, false
	common, err := gitwt.CommonDir(repoRoot)
	switch {
	case err == nil:
		dir, base, shared = common, coordBase, true
	case !errors.Is(err, gitwt.ErrNotRepo):
		return nil, fmt.Errorf("finding the git common directory of %s: %w", repoRoot, err)
	}
	return OpenFileCoordAt(dir, base, shared)
}

// OpenFileCoordAt opens the coordination directory base under dir.
func OpenFileCoordAt(dir, base string, shared bool) (*FileCoord, error) {
	root, err := fsafe.Open(dir)
	if err != nil {
		return nil, err
	}
	return &FileCoord{root: root, base: base, shared: shared, Clock: realClock, LockTimeout: LockTimeout}, nil
}

// Close releases the directory.
func (c *FileCoord) Close() error { return c.root.Close() }

// Shared reports whether the claims live in the git common directory
// (seen by every worktree of the clone) rather than under .taskie/coord.
func (c *FileCoord) Shared() bool { return c.shared }

// Dir returns the absolute coordination directory of a plan.
func (c *FileCoord) Dir(p PlanKey) string { return c.root.Path(path.Join(c.base, p.Plan)) }

// realClock is the machine's clock, to the second.
func realClock() (time.Time, error) { return clock.Real().Now(), nil }

// Now is the coordination clock: the local clock (TASKIE_NOW in tests).
func (c *FileCoord) Now(context.Context) (time.Time, error) { return c.Clock() }

// rel returns a file of a plan's coordination directory, relative to root.
func (c *FileCoord) rel(p PlanKey, name string) (string, error) {
	if err := plan.ValidID(p.Plan); err != nil {
		return "", err
	}
	return path.Join(c.base, p.Plan, name), nil
}

// locked runs fn under the plan's coordination lock, with "now".
func (c *FileCoord) locked(ctx context.Context, p PlanKey, fn func(now time.Time) error) error {
	dir, err := c.rel(p, "")
	if err != nil {
		return err
	}
	if err := c.root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	unlock, err := c.lock(ctx, path.Join(dir, coordLockName))
	if err != nil {
		return err
	}
	defer unlock()
	// Every writer of the directory holds this lock, so any temp file in it
	// was left by a writer that was killed.
	if _, err := c.root.CleanTemps(dir, 0); err != nil {
		return err
	}
	now, err := c.Clock()
	if err != nil {
		return err
	}
	return fn(now)
}

// lockTimeoutErr is the error of a lock not taken within LockTimeout.
func (c *FileCoord) lockTimeoutErr(rel string) error {
	return fmt.Errorf("%s: %w after %s; another process holds it", c.root.Path(rel), fsafe.ErrLockTimeout, c.LockTimeout)
}

// claimJSON is one claim in claims.json.
type claimJSON struct {
	Task      string    `json:"task"`
	Agent     string    `json:"agent"`
	Acquired  time.Time `json:"acquired"`
	Expires   time.Time `json:"expires"`
	Heartbeat time.Time `json:"heartbeat"`
}

// claimsDoc is claims.json.
type claimsDoc struct {
	Plan   string      `json:"plan"`
	Claims []claimJSON `json:"claims"`
}

// readClaims reads a plan's claims; a missing file holds none. A file that
// does not parse is an error naming it and is never overwritten.
func (c *FileCoord) readClaims(p PlanKey) (map[domain.TaskID]domain.Claim, error) {
	rel, err := c.rel(p, ClaimsName)
	if err != nil {
		return nil, err
	}
	data, err := c.root.ReadFileLimit(rel, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return map[domain.TaskID]domain.Claim{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeClaims(c.root.Path(rel), data)
}

func decodeClaims(name string, data []byte) (map[domain.TaskID]domain.Claim, error) {
	out := map[domain.TaskID]domain.Claim{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	var doc claimsDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: malformed claims file: %v; remove it to drop every claim of the plan", name, err)
	}
	for _, cj := range doc.Claims {
		id, err := domain.ParseTaskID(cj.Task)
		if err != nil || cj.Agent == "" {
			return nil, fmt.Errorf("%s: malformed claim %+v; remove the file to drop every claim of the plan", name, cj)
		}
		cl := domain.Claim{Task: id, Agent: cj.Agent, Acquired: cj.Acquired, Expires: cj.Expires, Heartbeat: cj.Heartbeat}
		if old, dup := out[id]; !dup || cl.Expires.After(old.Expires) {
			out[id] = cl
		}
	}
	return out, nil
}

// writeClaims replaces claims.json atomically.
func (c *FileCoord) writeClaims(p PlanKey, claims map[domain.TaskID]domain.Claim) error {
	rel, err := c.rel(p, ClaimsName)
	if err != nil {
		return err
	}
	doc := claimsDoc{Plan: p.Plan, Claims: make([]claimJSON, 0, len(claims))}
	for _, cl := range sortedClaims(claims) {
		doc.Claims = append(doc.Claims, claimJSON{Task: cl.Task.String(), Agent: cl.Agent,
			Acquired: cl.Acquired, Expires: cl.Expires, Heartbeat: cl.Heartbeat})
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return c.root.WriteFile(rel, append(data, '\n'), c.Durable)
}

func sortedClaims(m map[domain.TaskID]domain.Claim) []domain.Claim {
	out := make([]domain.Claim, 0, len(m))
	for _, cl := range m {
		out = append(out, cl)
	}
	slices.SortFunc(out, func(a, b domain.Claim) int { return int(a.Task) - int(b.Task) })
	return out
}

// apply stores what a decision says and logs its event: the event first,
// as the plan store does, so that a crash leaves at most an event whose
// change did not happen.
func (c *FileCoord) apply(p PlanKey, claims map[domain.TaskID]domain.Claim, d domain.ClaimDecision, ttl time.Duration, now time.Time) error {
	ev, changed := claimEvent(p, d, ttl, now)
	if ev != nil {
		if err := c.appendLocked(p, *ev); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	switch d.Outcome {
	case domain.ClaimReleased:
		delete(claims, d.Claim.Task)
	default:
		claims[d.Claim.Task] = d.Claim
	}
	return c.writeClaims(p, claims)
}

// claimEvent is the event a decision logs, if any, and whether it changes
// the stored claims.
func claimEvent(p PlanKey, d domain.ClaimDecision, ttl time.Duration, now time.Time) (*events.Event, bool) {
	cl := d.Claim
	ev := events.Event{TS: now, Plan: p.Plan, Task: cl.Task.String(), Actor: cl.Agent}
	switch d.Outcome {
	case domain.ClaimGranted:
		ev.Event = EventClaim
		ev.Meta = map[string]any{"expires": cl.Expires.Format(time.RFC3339), "ttl": ttlText(ttl)}
	case domain.ClaimTakeover:
		ev.Event, ev.To = EventClaimTakeover, cl.Agent
		ev.Meta = map[string]any{"expires": cl.Expires.Format(time.RFC3339), "ttl": ttlText(ttl)}
		if d.Previous != nil {
			ev.From = d.Previous.Agent
			ev.Reason = fmt.Sprintf("lease of %s expired at %s", d.Previous.Agent, d.Previous.Expires.Format(time.RFC3339))
		}
	case domain.ClaimReleased:
		ev.Event = EventRelease
	case domain.ClaimRenewed:
		return nil, true
	default:
		return nil, false
	}
	return &ev, true
}

func ttlText(ttl time.Duration) string {
	if ttl <= 0 {
		ttl = domain.DefaultLeaseTTL
	}
	return ttl.String()
}

// Claim gives task to agent unless another agent holds a live lease.
func (c *FileCoord) Claim(ctx context.Context, p PlanKey, task domain.TaskID, agent string, ttl time.Duration) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		claims, err := c.readClaims(p)
		if err != nil {
			return err
		}
		d = Rules().Claim(task, current(claims, task), agent, now, ttl)
		return c.apply(p, claims, d, ttl, now)
	})
	return d, err
}

// ClaimNext claims the first task of ready that no other agent holds live:
// free, held by agent itself (renewed), or expired (taken over).
func (c *FileCoord) ClaimNext(ctx context.Context, p PlanKey, ready []domain.TaskID, agent string, ttl time.Duration) (d domain.ClaimDecision, ok bool, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		claims, err := c.readClaims(p)
		if err != nil {
			return err
		}
		for _, task := range ready {
			cur := current(claims, task)
			if cur != nil && cur.Agent != agent && cur.Live(now) {
				continue
			}
			d, ok = Rules().Claim(task, cur, agent, now, ttl), true
			return c.apply(p, claims, d, ttl, now)
		}
		return nil
	})
	return d, ok, err
}

// Heartbeat renews agent's lease on task.
func (c *FileCoord) Heartbeat(ctx context.Context, p PlanKey, task domain.TaskID, agent string, ttl time.Duration) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		claims, err := c.readClaims(p)
		if err != nil {
			return err
		}
		d = Rules().Heartbeat(task, current(claims, task), agent, now, ttl)
		return c.apply(p, claims, d, ttl, now)
	})
	return d, err
}

// Release lets agent's claim on task go.
func (c *FileCoord) Release(ctx context.Context, p PlanKey, task domain.TaskID, agent string) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		claims, err := c.readClaims(p)
		if err != nil {
			return err
		}
		d = Rules().Release(task, current(claims, task), agent, now)
		return c.apply(p, claims, d, 0, now)
	})
	return d, err
}

func current(claims map[domain.TaskID]domain.Claim, task domain.TaskID) *domain.Claim {
	if cl, ok := claims[task]; ok {
		return &cl
	}
	return nil
}

// Claims lists the plan's claims, live and expired, by task. It reads
// without the lock: claims.json is replaced atomically.
func (c *FileCoord) Claims(_ context.Context, p PlanKey) ([]domain.Claim, error) {
	claims, err := c.readClaims(p)
	if err != nil {
		return nil, err
	}
	return sortedClaims(claims), nil
}

// AppendEvents appends coordination events under the plan's lock; events
// without a time get the coordination clock's.
func (c *FileCoord) AppendEvents(ctx context.Context, p PlanKey, evs ...events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	return c.locked(ctx, p, func(now time.Time) error {
		for i := range evs {
			if evs[i].TS.IsZero() {
				evs[i].TS = now
			}
			if evs[i].Plan == "" {
				evs[i].Plan = p.Plan
			}
		}
		return c.appendLocked(p, evs...)
	})
}

// appendLocked appends events in one write; the caller holds the lock.
func (c *FileCoord) appendLocked(p PlanKey, evs ...events.Event) error {
	rel, err := c.rel(p, CoordLogName)
	if err != nil {
		return err
	}
	return appendLog(c.root, rel, evs, c.Durable)
}

// ScanEvents streams the plan's coordination events in log order; a torn
// line is skipped.
func (c *FileCoord) ScanEvents(_ context.Context, p PlanKey, fn func(events.Event)) error {
	rel, err := c.rel(p, CoordLogName)
	if err != nil {
		return err
	}
	f, err := c.root.OpenRead(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return events.ScanReader(f, c.root.Path(rel), fn, func(string) {})
}
