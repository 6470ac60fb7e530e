package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
)

// PlanLog is a shared coordination store that also keeps the plans' own
// events — the lines every clone appends to its events.jsonl — beside the
// coordination events, so that every clone reads one history.
type PlanLog interface {
	// AppendPlanLines adds plan events, each a line as events.jsonl holds
	// it, in order, keyed by keys (nil: PlanKeys(lines)). A line the store
	// already holds for the plan (the same key) is skipped: appending
	// twice adds once. It returns how many lines were added.
	AppendPlanLines(ctx context.Context, p PlanKey, lines [][]byte, keys []string) (int, error)
	// ScanLog streams the plan's events in the store's order, each as its
	// line: the plan events of every clone and, with q.Coord, the
	// coordination events between them.
	ScanLog(ctx context.Context, p PlanKey, q LogQuery, fn func(line []byte) error) error
	// MissingPlanKeys returns the positions in keys (EventKey) of the
	// plan events the store does not hold, in order.
	MissingPlanKeys(ctx context.Context, p PlanKey, keys []string) ([]int, error)
}

// PlanLocker is a shared store in which the clones' lifecycle moves of a
// plan take turns: each reads the shared record, decides and appends its
// events holding the plan's lock, so that two clones never both decide
// from the same record.
type PlanLocker interface {
	LockPlan(ctx context.Context, p PlanKey) (release func(), err error)
}

// importChunk is how many lines ImportMissing sends at once.
const importChunk = 1000

// ImportMissing adds to the shared store the lines of a clone's log it
// lacks (compared by EventKey, as `taskie store import` does), in order,
// in chunks; progress, when set, is told after each chunk (done, of all
// missing). It returns how many were added. Running it again adds nothing.
func ImportMissing(ctx context.Context, log PlanLog, p PlanKey, lines [][]byte, progress func(done, total int)) (int, error) {
	if len(lines) == 0 {
		return 0, nil
	}
	keys := PlanKeys(lines)
	missing, err := log.MissingPlanKeys(ctx, p, keys)
	if err != nil || len(missing) == 0 {
		return 0, err
	}
	added := 0
	for i := 0; i < len(missing); i += importChunk {
		part := missing[i:min(i+importChunk, len(missing))]
		chunk, ck := make([][]byte, len(part)), make([]string, len(part))
		for j, k := range part {
			chunk[j], ck[j] = lines[k], keys[k]
		}
		n, err := log.AppendPlanLines(ctx, p, chunk, ck)
		added += n
		if err != nil {
			return added, err
		}
		if progress != nil {
			progress(i+len(part), len(missing))
		}
	}
	return added, nil
}

// LogQuery narrows ScanLog.
type LogQuery struct {
	Task  string   // only this task's events ("" for all)
	Kinds []string // only these kinds (nil for all)
	Last  int      // only the last N that pass (0 for all)
	Coord bool     // the coordination events too (claims, releases, results)
}

// EventKey identifies a plan event across clones and re-runs: the SHA-256
// of its line as events.jsonl holds it (spaces around it trimmed). The
// same line mirrored twice, or reaching another clone through git and
// imported from there, is one event; two events that are the same line
// byte for byte (same second, same fields) count as one.
func EventKey(line []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(line))
	return hex.EncodeToString(sum[:])
}

// PlanKeys are the keys of a clone's log, line by line: EventKey, and for
// a line the same byte for byte as an earlier one (the same move made
// twice within one second: claimed, released, claimed again) EventKey
// with its occurrence, so that the store keeps every one — a fold of the
// shared log must see both moves. The same log keys the same way however
// often it is imported.
func PlanKeys(lines [][]byte) []string {
	keys := make([]string, len(lines))
	seen := make(map[string]int, len(lines))
	for i, l := range lines {
		k := EventKey(l)
		n := seen[k]
		seen[k] = n + 1
		if n > 0 {
			k = fmt.Sprintf("%s#%d", k, n+1)
		}
		keys[i] = k
	}
	return keys
}

// Mirror receives the events a file store has just appended to a plan's
// log, under the plan lock, so that they are shared beyond the clone. It
// never fails the change: the events are in the log already.
type Mirror interface {
	Events(plan string, evs []events.Event)
	Close() error
}

var (
	mirrorMu  sync.Mutex
	newMirror func(r *plan.Repo) Mirror
)

// SetMirror makes every file store opened from now on share its plans'
// events through the mirror fn returns for its repository (nil: none).
// The command line sets it, so that this package imports no database.
func SetMirror(fn func(r *plan.Repo) Mirror) {
	mirrorMu.Lock()
	defer mirrorMu.Unlock()
	newMirror = fn
}

// mirrorFor is the mirror of a new file store of r; nil when none is set.
func mirrorFor(r *plan.Repo) Mirror {
	mirrorMu.Lock()
	fn := newMirror
	mirrorMu.Unlock()
	if fn == nil || r == nil {
		return nil
	}
	return fn(r)
}

// MirrorTimeout bounds one mirroring: connecting (itself at most 3 s for
// PostgreSQL) and appending. The plan lock is held meanwhile.
var MirrorTimeout = 5 * time.Second

// SharedMirror mirrors a repository's plan events into the shared store
// its settings name. It does nothing until a plan's events are appended —
// a command that commits nothing never reads the settings or connects —
// and nothing at all with the file store. When the store cannot be
// reached, Warn is told once (the URL without password) and the process
// stops trying: the local change is kept, and `taskie store import`
// adds the missing events later.
type SharedMirror struct {
	Root     string               // the repository
	Settings func() CoordSettings // read on first use
	Warn     func(msg string)
	// Progress, when set, hears how an import on first use goes (done of
	// total lines), to show it on a terminal.
	Progress func(plan string, done, total int)

	mu       sync.Mutex
	lines    func(plan string) ([][]byte, error) // the clone's log (Files.PlanLines)
	imported map[string]bool                     // plans whose clone log was compared this process
	started  bool
	c        Coordination
	log      PlanLog
	project  string
	url      string // redacted
	failed   bool
}

// Events appends evs to the shared store's log of plan.
func (m *SharedMirror) Events(plan string, evs []events.Event) {
	if len(evs) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), MirrorTimeout)
	defer cancel()
	if !m.started {
		m.started = true
		if err := m.open(ctx); err != nil {
			m.fail(plan, err)
			return
		}
	}
	if m.log == nil {
		return
	}
	lines := make([][]byte, 0, len(evs))
	for _, e := range evs {
		line, err := json.Marshal(e) // as appendLog wrote it
		if err != nil {
			continue
		}
		lines = append(lines, line)
	}
	key := PlanKey{Project: m.project, Plan: plan}
	// The clone's log ends with evs (the plan lock is held): keyed within
	// the whole log, a line the same as an earlier one is kept too.
	var all [][]byte
	var err error
	if m.lines != nil {
		all, err = m.lines(plan)
	}
	tail := len(all) - len(lines)
	if m.lines == nil || err != nil || tail < 0 || !sameLines(all[tail:], lines) {
		if _, err := m.log.AppendPlanLines(ctx, key, lines, nil); err != nil {
			m.fail(plan, err)
		}
		return
	}
	if !m.imported[plan] {
		// First use of the store with this plan in this process: the
		// clone's earlier events (those before it used the store) go
		// first, so that switching a clone to the store hides nothing.
		if m.imported == nil {
			m.imported = map[string]bool{}
		}
		m.imported[plan] = true
		if err := m.importClone(ctx, key, all[:tail]); err != nil {
			m.fail(plan, err)
			return
		}
	}
	if _, err := m.log.AppendPlanLines(ctx, key, all[tail:], PlanKeys(all)[tail:]); err != nil {
		m.fail(plan, err)
	}
}

// sameLines reports whether a and b hold the same lines.
func sameLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(bytes.TrimSpace(a[i]), bytes.TrimSpace(b[i])) {
			return false
		}
	}
	return true
}

// importClone adds the clone's earlier plan events the store lacks.
func (m *SharedMirror) importClone(ctx context.Context, key PlanKey, lines [][]byte) error {
	var progress func(done, total int)
	if m.Progress != nil {
		progress = func(done, total int) { m.Progress(key.Plan, done, total) }
	}
	// An import of a long log may take longer than one mirroring.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), MirrorTimeout+time.Duration(len(lines)/importChunk)*time.Second)
	defer cancel()
	_, err := ImportMissing(ctx, m.log, key, lines, progress)
	return err
}

// readsFrom lets the mirror read the clone's log of a plan, to import it
// on first use.
func (m *SharedMirror) readsFrom(f *Files) {
	m.mu.Lock()
	m.lines = f.PlanLines
	m.mu.Unlock()
}

// open connects to the shared store, when the settings name one.
func (m *SharedMirror) open(ctx context.Context) error {
	s := CoordSettings{}
	if m.Settings != nil {
		s = m.Settings()
	}
	raw, _ := s.URL()
	if raw == "" {
		return nil // the file store: the log is the clone's alone
	}
	m.url = RedactURL(raw)
	c, project, err := OpenCoordination(ctx, m.Root, s)
	if err != nil {
		return err
	}
	l, ok := c.(PlanLog)
	if !ok {
		c.Close()
		return fmt.Errorf("%s: this store does not keep plan events", m.url)
	}
	m.c, m.log, m.project = c, l, project
	return nil
}

func (m *SharedMirror) fail(plan string, err error) {
	m.failed = true
	if m.Warn != nil {
		m.Warn(fmt.Sprintf("plan %s: the change is kept in this clone, but its events did not reach the shared store (%v); `taskie store import %s` adds them once the database is back", plan, err, plan))
	}
}

// Close closes the connection, if one was opened.
func (m *SharedMirror) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.c == nil {
		return nil
	}
	err := m.c.Close()
	m.c, m.log = nil, nil
	return err
}

// PlanLines reads the lines of a plan's events.jsonl that parse as JSON
// objects (a torn line is left out, as every reader skips it), in order.
func (f *Files) PlanLines(id string) ([][]byte, error) {
	return readLines(f, Rel(id, events.FileName))
}

// readLines reads a JSON-lines file under the repository root: its lines
// that are JSON, trimmed; none when the file is absent.
func readLines(f *Files, rel string) ([][]byte, error) {
	r, err := f.root.OpenRead(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]byte
	// A line over events.MaxLine is left out like a torn one.
	err = events.ScanLines(r, events.MaxLine, func(_ int, raw []byte) error {
		line := bytes.TrimSpace(raw)
		if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
			return nil
		}
		out = append(out, bytes.Clone(line))
		return nil
	}, func(int) {})
	return out, err
}

// SharedLogName is the file of the coordination directory in which `taskie
// store export` writes a plan's events as the shared store holds them,
// every clone's: the plan's own events.jsonl is the record of this
// clone's state.json and never gets another clone's lines.
const SharedLogName = "plan-events.jsonl"

// SharedLogPath is the file export writes the shared plan events of p to.
func (c *FileCoord) SharedLogPath(p PlanKey) string { return path.Join(c.Dir(p), SharedLogName) }

// WriteSharedLog replaces the plan's exported shared log with lines, under
// the plan's coordination lock.
func (c *FileCoord) WriteSharedLog(ctx context.Context, p PlanKey, lines [][]byte) error {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(bytes.TrimSpace(l))
		buf.WriteByte('\n')
	}
	return c.locked(ctx, p, func(time.Time) error {
		rel, err := c.rel(p, SharedLogName)
		if err != nil {
			return err
		}
		if err := c.root.MkdirAll(path.Dir(rel), 0o755); err != nil {
			return err
		}
		return c.root.WriteFile(rel, buf.Bytes(), c.Durable)
	})
}

// SharedLines reads the plan's exported shared log (none when absent).
func (c *FileCoord) SharedLines(p PlanKey) ([][]byte, error) {
	rel, err := c.rel(p, SharedLogName)
	if err != nil {
		return nil, err
	}
	return readLines(&Files{root: c.root}, rel)
}
