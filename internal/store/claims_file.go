package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// holds is set when this is the store of the claims (OpenCoordination
	// without a database): the tokens held are then the claims' own
	// (HeldToken), and held.json is left alone.
	holds bool
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
	Token     int64     `json:"token,omitempty"`
	Place     string    `json:"place,omitempty"`
}

// claimsDoc is claims.json.
type claimsDoc struct {
	Plan   string      `json:"plan"`
	Claims []claimJSON `json:"claims"`
	// LastToken is the last fencing token issued for the plan's claims:
	// the next claim granted or taken over gets the one after it.
	LastToken int64 `json:"last_token,omitempty"`
	// Lost are claims taken over or released by force, newest last: their
	// holders' later commands present these tokens and are refused as
	// stale (HeldToken).
	Lost []claimJSON `json:"lost,omitempty"`
}

// maxLost bounds the lost claims kept: the oldest go first.
const maxLost = 200

// claimsFile is claims.json as read: the claims by task and the last
// token issued (never below any claim's).
type claimsFile struct {
	claims map[domain.TaskID]domain.Claim
	last   int64
	lost   []domain.Claim
}

// readClaims reads a plan's claims; a missing file holds none. A file that
// does not parse is an error naming it and is never overwritten.
func (c *FileCoord) readClaims(p PlanKey) (map[domain.TaskID]domain.Claim, error) {
	f, err := c.readClaimsFile(p)
	return f.claims, err
}

// readClaimsFile reads claims.json whole.
func (c *FileCoord) readClaimsFile(p PlanKey) (claimsFile, error) {
	rel, err := c.rel(p, ClaimsName)
	if err != nil {
		return claimsFile{}, err
	}
	data, err := c.root.ReadFileLimit(rel, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return claimsFile{claims: map[domain.TaskID]domain.Claim{}}, nil
	}
	if err != nil {
		return claimsFile{}, err
	}
	return decodeClaims(c.root.Path(rel), data)
}

func decodeClaims(name string, data []byte) (claimsFile, error) {
	out := claimsFile{claims: map[domain.TaskID]domain.Claim{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	doc, ok := decodeClaimsDoc(data)
	if !ok {
		doc = claimsDoc{}
		if err := json.Unmarshal(data, &doc); err != nil {
			return claimsFile{}, fmt.Errorf("%s: malformed claims file: %v; remove it to drop every claim of the plan", name, err)
		}
	}
	out.last = doc.LastToken
	for _, cj := range doc.Claims {
		id, err := domain.ParseTaskID(cj.Task)
		if err != nil || cj.Agent == "" {
			return claimsFile{}, fmt.Errorf("%s: malformed claim %+v; remove the file to drop every claim of the plan", name, cj)
		}
		cl := domain.Claim{Task: id, Agent: cj.Agent, Acquired: cj.Acquired, Expires: cj.Expires, Heartbeat: cj.Heartbeat,
			Token: cj.Token, Place: cj.Place}
		if old, dup := out.claims[id]; !dup || cl.Expires.After(old.Expires) {
			out.claims[id] = cl
		}
		out.last = max(out.last, cj.Token)
	}
	for _, cj := range doc.Lost {
		if id, err := domain.ParseTaskID(cj.Task); err == nil && cj.Token > 0 {
			out.lost = append(out.lost, domain.Claim{Task: id, Agent: cj.Agent, Token: cj.Token, Place: cj.Place, Expires: cj.Expires})
		}
	}
	return out, nil
}

// lose keeps cl among the lost claims, unless it has no token.
func (f *claimsFile) lose(cl domain.Claim) {
	if cl.Token <= 0 {
		return
	}
	f.lost = append(f.lost, cl)
	if len(f.lost) > maxLost {
		f.lost = f.lost[len(f.lost)-maxLost:]
	}
}

// heldToken is the token of agent's claim on task from place: the
// current claim's when it is theirs, else the newest lost one's.
func (f claimsFile) heldToken(task domain.TaskID, agent, place string) (int64, bool) {
	if cl, ok := f.claims[task]; ok && cl.Agent == agent && cl.Place == place && cl.Token > 0 {
		return cl.Token, true
	}
	for _, cl := range slices.Backward(f.lost) {
		if cl.Task == task && cl.Agent == agent && cl.Place == place {
			return cl.Token, true
		}
	}
	return 0, false
}

// writeClaims replaces claims.json atomically.
func (c *FileCoord) writeClaims(p PlanKey, f claimsFile) error {
	rel, err := c.rel(p, ClaimsName)
	if err != nil {
		return err
	}
	doc := claimsDoc{Plan: p.Plan, Claims: make([]claimJSON, 0, len(f.claims)), LastToken: f.last}
	for _, cl := range sortedClaims(f.claims) {
		doc.Claims = append(doc.Claims, claimJSON{Task: cl.Task.String(), Agent: cl.Agent,
			Acquired: cl.Acquired, Expires: cl.Expires, Heartbeat: cl.Heartbeat, Token: cl.Token, Place: cl.Place})
		doc.LastToken = max(doc.LastToken, cl.Token)
	}
	for _, cl := range f.lost {
		doc.Lost = append(doc.Lost, claimJSON{Task: cl.Task.String(), Agent: cl.Agent, Expires: cl.Expires, Token: cl.Token, Place: cl.Place})
	}
	data, err := encodeClaimsDoc(doc)
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
// change did not happen. A claim granted or taken over gets the plan's
// next fencing token, under the lock.
func (c *FileCoord) apply(p PlanKey, f claimsFile, d *domain.ClaimDecision, ttl time.Duration, now time.Time) error {
	if d.Outcome == domain.ClaimGranted || d.Outcome == domain.ClaimTakeover {
		f.last++
		d.Claim.Token = f.last
	}
	claims := f.claims
	if d.Outcome == domain.ClaimTakeover && d.Previous != nil {
		f.lose(*d.Previous)
	}
	if d.Outcome == domain.ClaimGranted || d.Outcome == domain.ClaimTakeover {
		// A claim granted again from the same place supersedes its lost one.
		cl := d.Claim
		f.lost = slices.DeleteFunc(f.lost, func(x domain.Claim) bool {
			return x.Task == cl.Task && x.Agent == cl.Agent && x.Place == cl.Place
		})
	}
	ev, changed := claimEvent(p, *d, ttl, now)
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
	return c.writeClaims(p, f)
}

// claimEvent is the event a decision logs, if any, and whether it changes
// the stored claims.
func claimEvent(p PlanKey, d domain.ClaimDecision, ttl time.Duration, now time.Time) (*events.Event, bool) {
	cl := d.Claim
	ev := events.Event{TS: now, Plan: p.Plan, Task: cl.Task.String(), Actor: cl.Agent}
	switch d.Outcome {
	case domain.ClaimGranted:
		ev.Event = EventClaim
		ev.Meta = claimMeta(cl, ttl)
	case domain.ClaimTakeover:
		ev.Event, ev.To = EventClaimTakeover, cl.Agent
		ev.Meta = claimMeta(cl, ttl)
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

// claimMeta is the meta of a claim's event: its lease, token and place.
func claimMeta(cl domain.Claim, ttl time.Duration) map[string]any {
	return events.Meta(events.ClaimMeta{Expires: cl.Expires.Format(time.RFC3339), TTL: ttlText(ttl), Token: max(cl.Token, 0), Place: cl.Place})
}

func ttlText(ttl time.Duration) string {
	if ttl <= 0 {
		ttl = domain.DefaultLeaseTTL
	}
	return ttl.String()
}

// Claim gives task to agent unless another agent holds a live lease.
func (c *FileCoord) Claim(ctx context.Context, p PlanKey, task domain.TaskID, agent string, ttl time.Duration, fs ...domain.Fence) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		f, err := c.readClaimsFile(p)
		if err != nil {
			return err
		}
		d = Rules().Claim(task, current(f.claims, task), agent, FenceOf(fs), now, ttl)
		return c.apply(p, f, &d, ttl, now)
	})
	return d, err
}

// ClaimNext claims the first task of ready that no other agent holds live:
// free, held by agent itself (renewed), or expired (taken over).
func (c *FileCoord) ClaimNext(ctx context.Context, p PlanKey, ready []domain.TaskID, agent string, ttl time.Duration, fs ...domain.Fence) (d domain.ClaimDecision, ok bool, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		d, ok, err = c.claimNextLocked(p, ready, agent, ttl, FenceOf(fs), now)
		return err
	})
	return d, ok, err
}

// claimNextLocked is ClaimNext under the lock.
func (c *FileCoord) claimNextLocked(p PlanKey, ready []domain.TaskID, agent string, ttl time.Duration, fence domain.Fence, now time.Time) (d domain.ClaimDecision, ok bool, err error) {
	f, err := c.readClaimsFile(p)
	if err != nil {
		return d, false, err
	}
	return c.claimFirst(p, f, ready, agent, ttl, fence, now)
}

// claimFirst claims the first of ready nobody else holds live, on the
// claims f as read under the lock.
func (c *FileCoord) claimFirst(p PlanKey, f claimsFile, ready []domain.TaskID, agent string, ttl time.Duration, fence domain.Fence, now time.Time) (d domain.ClaimDecision, ok bool, err error) {
	for _, task := range ready {
		cur := current(f.claims, task)
		if cur != nil && cur.Agent != agent && cur.Live(now) {
			continue
		}
		d = Rules().Claim(task, cur, agent, fence, now, ttl)
		if d.Outcome == domain.ClaimRefused { // agent's own claim, from another place
			continue
		}
		return d, true, c.apply(p, f, &d, ttl, now)
	}
	return d, false, nil
}

// Heartbeat renews agent's lease on task.
func (c *FileCoord) Heartbeat(ctx context.Context, p PlanKey, task domain.TaskID, agent string, ttl time.Duration, fs ...domain.Fence) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		f, err := c.readClaimsFile(p)
		if err != nil {
			return err
		}
		d = Rules().Heartbeat(task, current(f.claims, task), agent, FenceOf(fs), now, ttl)
		return c.apply(p, f, &d, ttl, now)
	})
	return d, err
}

// Release lets agent's claim on task go.
func (c *FileCoord) Release(ctx context.Context, p PlanKey, task domain.TaskID, agent string, fs ...domain.Fence) (d domain.ClaimDecision, err error) {
	err = c.locked(ctx, p, func(now time.Time) error {
		f, err := c.readClaimsFile(p)
		if err != nil {
			return err
		}
		d = Rules().Release(task, current(f.claims, task), agent, FenceOf(fs), now)
		return c.apply(p, f, &d, 0, now)
	})
	return d, err
}

// AppendFenced appends evs under the plan's lock while agent's claim on
// task is the one f names: a holder whose claim was taken over or
// released can no longer log for it.
func (c *FileCoord) AppendFenced(ctx context.Context, p PlanKey, task domain.TaskID, agent string, f domain.Fence, evs ...events.Event) error {
	return c.locked(ctx, p, func(now time.Time) error {
		claims, err := c.readClaims(p)
		if err != nil {
			return err
		}
		if err := Rules().Fence(task, current(claims, task), agent, f, now); err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		stampEvents(p, evs, now)
		return c.appendLocked(p, evs...)
	})
}

func current(claims map[domain.TaskID]domain.Claim, task domain.TaskID) *domain.Claim {
	if cl, ok := claims[task]; ok {
		return &cl
	}
	return nil
}

// Fenced runs write under the plan's coordination lock, after check has
// accepted task's claim as read under it (FenceLocker).
func (c *FileCoord) Fenced(ctx context.Context, p PlanKey, task domain.TaskID, check func(cur *domain.Claim, now time.Time) error, write func() error) error {
	return c.locked(ctx, p, func(now time.Time) error {
		f, err := c.readClaimsFile(p)
		if err != nil {
			return err
		}
		if err := check(current(f.claims, task), now); err != nil {
			return err
		}
		return write()
	})
}

var _ FenceLocker = (*FileCoord)(nil)

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
		stampEvents(p, evs, now)
		return c.appendLocked(p, evs...)
	})
}

// stampEvents gives events without a time or plan now and the plan's.
func stampEvents(p PlanKey, evs []events.Event, now time.Time) {
	for i := range evs {
		if evs[i].TS.IsZero() {
			evs[i].TS = now
		}
		if evs[i].Plan == "" {
			evs[i].Plan = p.Plan
		}
	}
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

// ErrLogShrank is the error of a scan from an offset past the end of the
// coordination log: it was replaced, and is read again from the start.
var ErrLogShrank = errors.New("the coordination log is shorter than where it was read to")

// ScanEventsOf streams the events of one kind from byte offset from of the
// plan's coordination log (0: all of it), and returns the offset it read
// to: the end of the last whole line. A line is tested on its bytes before
// it is decoded, so a claim that needs the results does not decode every
// claim and release of the plan's history; one that names no kind
// literally may spell it with escapes, and is decoded to be sure. A last
// line without its newline is being written (or was torn by a crash): it
// is left for the next scan from the offset returned, which under the
// coordination lock reads what was logged since.
func (c *FileCoord) ScanEventsOf(_ context.Context, p PlanKey, kind string, from int64, fn func(events.Event)) (int64, error) {
	rel, err := c.rel(p, CoordLogName)
	if err != nil {
		return 0, err
	}
	f, err := c.root.OpenRead(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if from > size {
		return 0, ErrLogShrank
	}
	end, err := lastNewline(f, from, size)
	if err != nil || end == from {
		return from, err
	}
	word, esc := []byte(kind), []byte(`\u`)
	err = events.ScanLines(io.NewSectionReader(f, from, end-from), events.MaxLine, func(_ int, raw []byte) error {
		if !bytes.Contains(raw, word) && !bytes.Contains(raw, esc) {
			return nil
		}
		line := bytes.TrimSpace(raw)
		var e events.Event
		if len(line) == 0 || json.Unmarshal(line, &e) != nil || e.Event != kind {
			return nil // a torn line is skipped, as ScanEvents does
		}
		fn(e)
		return nil
	}, func(int) {})
	return end, err
}

// lastNewline is the offset just past the last newline of f in [from,
// size), from when there is none.
func lastNewline(f io.ReaderAt, from, size int64) (int64, error) {
	buf := make([]byte, 4096)
	for hi := size; hi > from; {
		lo := max(from, hi-int64(len(buf)))
		n, err := f.ReadAt(buf[:hi-lo], lo)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return lo + int64(i) + 1, nil
		}
		hi = lo
	}
	return from, nil
}
