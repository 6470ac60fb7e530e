package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

// claimRow is a row of taskie_claims; agent "" is a free task.
type claimRow struct {
	task                         int32
	agent                        string
	acquired, expires, heartbeat *time.Time
	token                        int64 // kept by a free row: the floor of the next claim's
	place                        string
}

// dest is the row's columns as claimCols lists them.
func (r *claimRow) dest() []any {
	return []any{&r.task, &r.agent, &r.acquired, &r.expires, &r.heartbeat, &r.token, &r.place}
}

func (r claimRow) claim() *domain.Claim {
	if r.agent == "" || r.expires == nil {
		return nil
	}
	c := domain.Claim{Task: domain.TaskID(r.task), Agent: r.agent, Expires: r.expires.UTC(), Token: r.token, Place: r.place}
	if r.acquired != nil {
		c.Acquired = r.acquired.UTC()
	}
	if r.heartbeat != nil {
		c.Heartbeat = r.heartbeat.UTC()
	}
	return &c
}

// ts is a claim's timestamp column as taskie reads it: a row set by hand
// to infinity (or past domain.Never) reads as domain.Never, a lease
// that never expires, and -infinity as the year 1, long expired; a Go
// time cannot hold either infinity, and a row that fails to scan would
// break every command of the plan. NULL stays NULL.
func ts(col string) string {
	return "(CASE WHEN " + col + " IS NULL THEN NULL ELSE LEAST(GREATEST(" + col +
		", '0001-01-01T00:00:00Z'::timestamptz), '" + domain.Never.Format(time.RFC3339) + "'::timestamptz) END)"
}

// claimCols are the columns of a claim row, as claimRow.dest scans them,
// of the table aliased a ("" for none).
func claimCols(a string) string {
	if a != "" {
		a += "."
	}
	return a + "task, " + a + "agent, " + ts(a+"acquired") + ", " + ts(a+"expires") + ", " + ts(a+"heartbeat") + ", " + a + "token, " + a + "place"
}

// checkKey refuses a key no file store could hold either.
func checkKey(p store.PlanKey) error {
	if p.Project == "" {
		return fmt.Errorf("plan %s: no project names the repository across clones", p.Plan)
	}
	return plan.ValidID(p.Plan)
}

// lockTaskSQL locks the row of a task, making a free one first, and
// returns it with the coordination clock. ON CONFLICT … DO UPDATE waits
// for and locks an existing row like SELECT … FOR UPDATE.
func lockTaskSQL() string {
	return `INSERT INTO taskie_claims AS c (project, plan, task) VALUES ($1, $2, $3)
ON CONFLICT (project, plan, task) DO UPDATE SET agent = c.agent
RETURNING ` + claimCols("c") + `, ` + nowSQL(4)
}

// holderSQL locks the row of a task, when there is one.
func holderSQL() string {
	return `SELECT ` + claimCols("") + `, ` + nowSQL(4) + `
FROM taskie_claims WHERE project = $1 AND plan = $2 AND task = $3 FOR UPDATE`
}

// lockTask locks task's row for the transaction and returns its claim
// (nil when free), the last token the task had and the coordination
// clock. create makes the row of a task never claimed, so that two first
// claims queue on it.
func (s *Store) lockTask(ctx context.Context, t *pipe, p store.PlanKey, task domain.TaskID, create bool) (*domain.Claim, int64, time.Time, error) {
	q := holderSQL()
	if create {
		q = lockTaskSQL()
	}
	var r claimRow
	var now time.Time
	err := t.queryRow(ctx, q, []any{p.Project, p.Plan, int32(task), s.skewMicros()}, append(r.dest(), &now)...)
	if err == pgx.ErrNoRows && !create {
		err = t.queryRow(ctx, "SELECT "+nowSQL(1), []any{s.skewMicros()}, &now)
		return nil, 0, now.UTC(), err
	}
	return r.claim(), r.token, now.UTC(), err
}

// Claim gives task to agent unless another agent holds a live lease. The
// task's row is locked for the decision, so two agents claiming it queue
// and the second sees the first's lease.
func (s *Store) Claim(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, ttl time.Duration, fs ...domain.Fence) (d domain.ClaimDecision, err error) {
	if err := checkKey(p); err != nil {
		return d, err
	}
	ttl = roundTTL(ttl)
	err = s.claimTx(ctx, fmt.Sprintf("claiming task %d of plan %s", task, p.Plan), p, func(ctx context.Context, t *pipe) (*pgx.Batch, error) {
		cur, last, now, err := s.lockTask(ctx, t, p, task, true)
		if err != nil {
			return nil, err
		}
		d = store.Rules().Claim(task, cur, agent, store.FenceOf(fs), now, ttl)
		return writes(p, &d, cur, last, ttl, now)
	})
	return decided(d, err)
}

// nextSQL locks the first task of $3 (in its order), not in $5, that is
// free, held by agent $4 or expired, skipping rows another transaction
// holds: the claim in progress of another agent.
func nextSQL() string {
	return `SELECT ` + claimCols("c") + `, ` + nowSQL(6) + `
FROM unnest($3::int[]) WITH ORDINALITY AS r(task, ord)
JOIN taskie_claims c ON c.project = $1 AND c.plan = $2 AND c.task = r.task
WHERE NOT (c.task = ANY($5::int[]))
  AND (c.agent = '' OR c.agent = $4 OR c.expires <= ` + nowSQL(6) + `)
ORDER BY r.ord
LIMIT 1
FOR UPDATE OF c SKIP LOCKED`
}

// offerSQL makes the rows of ready tasks that have none, in task order so
// that two agents offering the same tasks never wait on each other in a
// circle. NOT EXISTS reads the snapshot and leaves out the rows there,
// which ON CONFLICT alone would wait on while another agent's claim holds
// them. Free rows need not survive a crash (they are offered again), so
// their commit does not wait for the disk; a claim's commit, which does,
// flushes them too.
const offerSQL = `WITH async AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO taskie_claims (project, plan, task)
SELECT $1, $2, t FROM unnest($3::int[]) AS t, async
WHERE NOT EXISTS (SELECT 1 FROM taskie_claims c WHERE c.project = $1 AND c.plan = $2 AND c.task = t)
ORDER BY t
ON CONFLICT (project, plan, task) DO NOTHING`

// ClaimNext claims the first task of ready that no other agent holds live:
// free, held by agent itself (renewed) or expired (taken over). Ready
// tasks get a row first (committed at once), so that agents claiming at
// the same time lock distinct rows with FOR UPDATE SKIP LOCKED instead of
// queueing on one.
func (s *Store) ClaimNext(ctx context.Context, p store.PlanKey, ready []domain.TaskID, agent string, ttl time.Duration, fs ...domain.Fence) (d domain.ClaimDecision, ok bool, err error) {
	if err := checkKey(p); err != nil {
		return d, false, err
	}
	if len(ready) == 0 {
		return d, false, nil
	}
	if agent == "" {
		return store.Rules().Claim(ready[0], nil, agent, store.FenceOf(fs), time.Time{}, ttl), true, nil
	}
	ttl = roundTTL(ttl)
	ids := make([]int32, len(ready))
	for i, t := range ready {
		ids[i] = int32(t)
	}
	what := fmt.Sprintf("claiming the next ready task of plan %s", p.Plan)
	err = s.claimTx(ctx, what, p, func(ctx context.Context, t *pipe) (*pgx.Batch, error) {
		tried := []int32{}
		// The offer and the first pick in one round trip; a session that
		// cannot take it offers first, on its own.
		first, firstNow, found, err := s.offerAndPick(ctx, t, p, ids, agent)
		if err == errNoFastPath {
			if _, err = t.conn.Exec(ctx, offerSQL, p.Project, p.Plan, ids); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, err
		}
		fast := err == nil
		for {
			var r claimRow
			var now time.Time
			var err error
			if fast {
				fast = false
				r, now = first, firstNow
				if !found {
					err = pgx.ErrNoRows
				}
			} else {
				err = t.queryRow(ctx, nextSQL(), []any{p.Project, p.Plan, ids, agent, tried, s.skewMicros()}, append(r.dest(), &now)...)
			}
			if err == pgx.ErrNoRows {
				ok = false
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			task := domain.TaskID(r.task)
			cur := r.claim()
			d = store.Rules().Claim(task, cur, agent, store.FenceOf(fs), now.UTC(), ttl)
			if d.Outcome == domain.ClaimRefused {
				// The lease was renewed between the row's choice and its
				// clock, or it is agent's own from another place: try the
				// next one.
				tried = append(tried, r.task)
				continue
			}
			ok = true
			return writes(p, &d, cur, r.token, ttl, now.UTC())
		}
	})
	if err != nil || !ok {
		return domain.ClaimDecision{}, false, err
	}
	return d, true, nil
}

// Heartbeat renews agent's lease on task.
func (s *Store) Heartbeat(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, ttl time.Duration, fs ...domain.Fence) (d domain.ClaimDecision, err error) {
	if err := checkKey(p); err != nil {
		return d, err
	}
	ttl = roundTTL(ttl)
	err = s.claimTx(ctx, fmt.Sprintf("renewing the lease on task %d of plan %s", task, p.Plan), p, func(ctx context.Context, t *pipe) (*pgx.Batch, error) {
		cur, last, now, err := s.lockTask(ctx, t, p, task, false)
		if err != nil {
			return nil, err
		}
		d = store.Rules().Heartbeat(task, cur, agent, store.FenceOf(fs), now, ttl)
		return writes(p, &d, cur, last, ttl, now)
	})
	return decided(d, err)
}

// Release lets agent's claim on task go.
func (s *Store) Release(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, fs ...domain.Fence) (d domain.ClaimDecision, err error) {
	if err := checkKey(p); err != nil {
		return d, err
	}
	err = s.claimTx(ctx, fmt.Sprintf("releasing task %d of plan %s", task, p.Plan), p, func(ctx context.Context, t *pipe) (*pgx.Batch, error) {
		cur, last, now, err := s.lockTask(ctx, t, p, task, false)
		if err != nil {
			return nil, err
		}
		d = store.Rules().Release(task, cur, agent, store.FenceOf(fs), now)
		return writes(p, &d, cur, last, 0, now)
	})
	return decided(d, err)
}

// fencedEventSQL inserts an event only while the task's claim is agent's
// with the token presented: the fence and the write are one statement.
const fencedEventSQL = `INSERT INTO taskie_events (project, plan, ts, kind, task, body)
SELECT $1, $2, $3, $4, $5, $6::json
WHERE EXISTS (SELECT 1 FROM taskie_claims WHERE project = $1 AND plan = $2 AND task = $7 AND agent = $8 AND token = $9)`

// AppendFenced appends evs while agent's claim on task is the one f
// names: the task's row is locked for the rules' decision, and with a
// token each insert is conditional on it.
func (s *Store) AppendFenced(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, evs ...events.Event) error {
	if err := checkKey(p); err != nil {
		return err
	}
	evs = slices.Clone(evs)
	var refusal error
	err := s.claimTx(ctx, fmt.Sprintf("writing for the claim on task %d of plan %s", task, p.Plan), p, func(ctx context.Context, t *pipe) (*pgx.Batch, error) {
		cur, _, now, err := s.lockTask(ctx, t, p, task, false)
		if err != nil {
			return nil, err
		}
		if refusal = store.Rules().Fence(task, cur, agent, f, now); refusal != nil || len(evs) == 0 {
			return nil, nil
		}
		b := &pgx.Batch{}
		for _, e := range evs {
			if e.TS.IsZero() {
				e.TS = now.Truncate(time.Second)
			}
			if e.Plan == "" {
				e.Plan = p.Plan
			}
			body, err := json.Marshal(e)
			if err != nil {
				return nil, err
			}
			if f.Token > 0 {
				b.Queue(fencedEventSQL, p.Project, p.Plan, e.TS, e.Event, e.Task, string(body), int32(task), agent, f.Token)
			} else {
				b.Queue(insertEventSQL, p.Project, p.Plan, e.TS, e.Event, e.Task, string(body))
			}
			queueResult(b, p, e)
		}
		return b, nil
	})
	return cmp.Or(err, refusal)
}

// decided is a decision that was stored, or none when storing it failed.
func decided(d domain.ClaimDecision, err error) (domain.ClaimDecision, error) {
	if err != nil {
		return domain.ClaimDecision{}, err
	}
	return d, nil
}

// roundTTL keeps a lease to the database's precision, a microsecond, so
// that the claim returned is the claim stored.
func roundTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return ttl
	}
	return max(ttl.Round(time.Microsecond), time.Microsecond)
}

// The claim writes are fenced: each changes the row only while its token
// is the one the decision was made on ($n), so a write can never land on
// a claim it was not decided for.
const (
	setClaimSQL = `UPDATE taskie_claims SET agent = $4, acquired = $5, expires = $6, heartbeat = $7, token = $8, place = $9
WHERE project = $1 AND plan = $2 AND task = $3 AND token = $10`
	freeClaimSQL = `UPDATE taskie_claims SET agent = '', acquired = NULL, expires = NULL, heartbeat = NULL, place = ''
WHERE project = $1 AND plan = $2 AND task = $3 AND token = $4`
	insertEventSQL = `INSERT INTO taskie_events (project, plan, ts, kind, task, body) VALUES ($1, $2, $3, $4, $5, $6::json)`
)

// writes are the statements that store what a decision says, with its
// event; nil when the decision changes nothing. last is the row's token
// under the lock: a claim granted or taken over gets the one after it.
func writes(p store.PlanKey, d *domain.ClaimDecision, cur *domain.Claim, last int64, ttl time.Duration, now time.Time) (*pgx.Batch, error) {
	if d.Outcome == domain.ClaimGranted || d.Outcome == domain.ClaimTakeover {
		d.Claim.Token = last + 1
	}
	// Events carry the time to the second, as a file store's do.
	ev, changed := store.ClaimEvent(p, *d, ttl, now.Truncate(time.Second))
	if !changed {
		return nil, nil
	}
	cl := d.Claim
	b := &pgx.Batch{}
	if d.Outcome == domain.ClaimReleased {
		b.Queue(freeClaimSQL, p.Project, p.Plan, int32(cl.Task), last)
	} else {
		b.Queue(setClaimSQL, p.Project, p.Plan, int32(cl.Task), cl.Agent, cl.Acquired, cl.Expires, cl.Heartbeat, cl.Token, cl.Place, last)
	}
	if ev != nil {
		if err := queueEvent(b, p, *ev); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// errFenced is a fenced write that found the claim's token changed; the
// row lock makes it unreachable unless the row was edited by hand.
var errFenced = errors.New("the claim changed while it was written (its fencing token is not the one decided on); nothing was stored, run the same command again")

// pipe is a claim's transaction on the store's connection, in two round
// trips: BEGIN goes in the same pipeline as the first query, COMMIT (and
// the notification after it) in the same as the writes.
type pipe struct {
	conn *pgx.Conn
	open bool // BEGIN was sent: the transaction must end
}

// queryRow runs q and scans its one row into dest (pgx.ErrNoRows when
// none), opening the transaction with the first query.
func (t *pipe) queryRow(ctx context.Context, q string, args []any, dest ...any) error {
	if t.open {
		return t.conn.QueryRow(ctx, q, args...).Scan(dest...)
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(q, args...)
	br := t.conn.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		t.open = true
		err = br.QueryRow().Scan(dest...)
	}
	if cerr := br.Close(); cerr != nil && (err == nil || err == pgx.ErrNoRows) {
		err = cerr
	}
	return err
}

// claimTx runs fn in a pipelined transaction and commits the writes it
// returns; when there are any, the plan's watchers are notified after the
// commit. On any error the transaction is rolled back (by the server, when
// the connection is gone): nothing of it survives.
func (s *Store) claimTx(ctx context.Context, what string, p store.PlanKey, fn func(ctx context.Context, t *pipe) (*pgx.Batch, error)) error {
	return s.do(ctx, what, func(ctx context.Context, conn *pgx.Conn) error {
		t := &pipe{conn: conn}
		w, err := fn(ctx, t)
		if err == nil && t.open {
			err = s.commit(ctx, t, w, p)
		}
		if err != nil && t.open {
			rollback(conn)
		}
		return err
	})
}

// commit sends the writes, COMMIT and the notification in one round trip.
func (s *Store) commit(ctx context.Context, t *pipe, w *pgx.Batch, p store.PlanKey) error {
	changed := w != nil
	if w == nil {
		w = &pgx.Batch{}
	}
	if s.beforeCommit != nil {
		if err := t.conn.SendBatch(ctx, w).Close(); err != nil {
			return err
		}
		if err := s.beforeCommit(ctx, t.conn); err != nil {
			return err
		}
		w = &pgx.Batch{}
	}
	n := w.Len()
	w.Queue("COMMIT")
	if changed {
		w.Queue(notifySQL, Channel, payload(p))
	}
	br := t.conn.SendBatch(ctx, w)
	for i := range n + 1 {
		tag, err := br.Exec()
		if err == nil && i == n && tag.String() != "COMMIT" {
			err = fmt.Errorf("the transaction was rolled back (%s)", tag)
		}
		if err == nil && i < n && (tag.Update() || tag.Insert()) && tag.RowsAffected() == 0 {
			// A fenced write found another token: nothing of it is kept.
			err = errFenced
		}
		if err != nil {
			br.Close()
			return err
		}
	}
	t.open = false
	br.Close() // the notification's own failure changes nothing committed
	return nil
}

// rollback ends a transaction cut short; a connection that is gone needs
// none (the server rolls back).
func rollback(conn *pgx.Conn) {
	if conn.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn.Exec(ctx, "ROLLBACK")
}

// queueEvent queues the insertion of one event, its body as events.jsonl
// writes it, and for a task result the task's latest result status.
func queueEvent(b *pgx.Batch, p store.PlanKey, e events.Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b.Queue(insertEventSQL, p.Project, p.Plan, e.TS, e.Event, e.Task, string(body))
	queueResult(b, p, e)
	return nil
}

// resultSQL keeps a task's latest result status on its claim row, which
// the one-statement claim reads.
const resultSQL = `INSERT INTO taskie_claims (project, plan, task, result) VALUES ($1, $2, $3, $4)
ON CONFLICT (project, plan, task) DO UPDATE SET result = EXCLUDED.result`

// queueResult queues resultSQL for a task result.
func queueResult(b *pgx.Batch, p store.PlanKey, e events.Event) {
	if e.Event != store.EventTaskResult {
		return
	}
	id, err := domain.ParseTaskID(e.Task)
	if err != nil {
		return
	}
	m, _ := events.MetaOf[events.TaskResultMeta](e)
	b.Queue(resultSQL, p.Project, p.Plan, int32(id), m.Status)
}

// payload is the NOTIFY payload of a plan's changes.
func payload(p store.PlanKey) string { return p.Project + "/" + p.Plan }

// Claims lists the plan's claims, live and expired, by task.
func (s *Store) Claims(ctx context.Context, p store.PlanKey) ([]domain.Claim, error) {
	if err := checkKey(p); err != nil {
		return nil, err
	}
	var out []domain.Claim
	err := s.do(ctx, "listing the claims of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		out = nil
		rows, err := conn.Query(ctx, `SELECT `+claimCols("")+` FROM taskie_claims
WHERE project = $1 AND plan = $2 AND agent <> '' ORDER BY task`, p.Project, p.Plan)
		if err != nil {
			return err
		}
		var r claimRow
		_, err = pgx.ForEachRow(rows, r.dest(), func() error {
			if c := r.claim(); c != nil {
				out = append(out, *c)
			}
			return nil
		})
		return err
	})
	return out, err
}
