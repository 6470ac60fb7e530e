package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/store"
)

// AppendEvents appends coordination events in one transaction; events
// without a time get the database's clock, events without a plan the
// plan's id.
func (s *Store) AppendEvents(ctx context.Context, p store.PlanKey, evs ...events.Event) error {
	if err := checkKey(p); err != nil || len(evs) == 0 {
		return err
	}
	evs = slices.Clone(evs)
	return s.tx(ctx, "appending events of plan "+p.Plan, p, func(ctx context.Context, tx pgx.Tx) (bool, error) {
		var now time.Time
		for i := range evs {
			if evs[i].TS.IsZero() && now.IsZero() {
				if err := tx.QueryRow(ctx, "SELECT "+nowSQL(1), s.skewMicros()).Scan(&now); err != nil {
					return false, err
				}
				now = now.UTC().Truncate(time.Second) // to the second, as a file store's
			}
			if evs[i].TS.IsZero() {
				evs[i].TS = now
			}
			if evs[i].Plan == "" {
				evs[i].Plan = p.Plan
			}
		}
		b := &pgx.Batch{}
		for _, e := range evs {
			if err := queueEvent(b, p, e); err != nil {
				return false, err
			}
		}
		return true, tx.SendBatch(ctx, b).Close()
	})
}

// scanPage is how many events ScanEvents reads per query: memory stays
// bounded over any log, and fn runs between queries, free to use the
// store.
const scanPage = 1000

// ScanEvents streams the plan's coordination events in log order (not the
// plan events mirrored beside them: ScanLog reads those). An
// event whose body no longer decodes is skipped, as the file store skips
// a torn line.
func (s *Store) ScanEvents(ctx context.Context, p store.PlanKey, fn func(events.Event)) error {
	if err := checkKey(p); err != nil {
		return err
	}
	var after int64
	for {
		page, last, err := s.eventPage(ctx, p, after)
		if err != nil {
			return err
		}
		for _, e := range page {
			fn(e)
		}
		if last == 0 {
			return nil
		}
		after = last
	}
}

// eventPage reads up to scanPage events after id after; last is the id of
// the last row read, 0 at the end of the log.
func (s *Store) eventPage(ctx context.Context, p store.PlanKey, after int64) (page []events.Event, last int64, err error) {
	err = s.do(ctx, "reading the events of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		page, last = page[:0], 0
		rows, err := conn.Query(ctx, `SELECT id, ts, body::text FROM taskie_events
WHERE project = $1 AND plan = $2 AND id > $3 AND stream = 'coord' ORDER BY id LIMIT $4`, p.Project, p.Plan, after, scanPage)
		if err != nil {
			return err
		}
		var id int64
		var ts time.Time
		var body string
		n := 0
		_, err = pgx.ForEachRow(rows, []any{&id, &ts, &body}, func() error {
			n++
			last = id
			var e events.Event
			if json.Unmarshal([]byte(body), &e) != nil {
				return nil
			}
			if e.TS.IsZero() {
				e.TS = ts.UTC()
			}
			page = append(page, e)
			return nil
		})
		if n < scanPage && err == nil {
			last = 0
		}
		return err
	})
	return page, last, err
}

var _ store.PlanLog = (*Store)(nil)

// appendPlanSQL adds plan events in their order, one statement for any
// number: a line already there (the same key) is skipped.
const appendPlanSQL = `INSERT INTO taskie_events (project, plan, ts, kind, task, body, stream, key)
SELECT $1, $2, t.ts, t.kind, t.task, t.body::json, 'plan', t.key
FROM unnest($3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS t(ts, kind, task, body, key, ord)
ORDER BY t.ord
ON CONFLICT (project, plan, key) DO NOTHING`

// AppendPlanLines adds plan events, each a line of a clone's events.jsonl,
// keyed by store.PlanKeys so that a line appended twice is stored once.
// A line that is no event is refused whole: nothing is added.
func (s *Store) AppendPlanLines(ctx context.Context, p store.PlanKey, lines [][]byte, keys []string) (int, error) {
	if err := checkKey(p); err != nil || len(lines) == 0 {
		return 0, err
	}
	if keys == nil {
		keys = store.PlanKeys(lines)
	}
	if len(keys) != len(lines) {
		return 0, fmt.Errorf("plan %s: %d keys for %d events", p.Plan, len(keys), len(lines))
	}
	n := len(lines)
	ts, kinds, tasks, bodies := make([]time.Time, n), make([]string, n), make([]string, n), make([]string, n)
	for i, line := range lines {
		var l events.Lean
		if err := events.ParseLean(line, &l); err != nil {
			return 0, fmt.Errorf("plan %s: event %d is not an event line: %v", p.Plan, i+1, err)
		}
		t, err := time.Parse(time.RFC3339Nano, l.TS)
		if err != nil {
			t = time.Now() // kept as the line says; the column is for queries
		}
		ts[i], kinds[i], tasks[i], bodies[i] = t, l.Event, l.Task, string(line)
	}
	var added int64
	err := s.do(ctx, "sharing the events of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		tag, err := conn.Exec(ctx, appendPlanSQL, p.Project, p.Plan, ts, kinds, tasks, bodies, keys)
		if err != nil {
			return err
		}
		if added = tag.RowsAffected(); added > 0 {
			notify(ctx, conn, p)
		}
		return nil
	})
	return int(added), err
}

// ScanLog streams the plan's events ordered by event time, ties by the
// order the database received them (a stable sequence), each as the line
// it was stored as: the plan events of every clone and, with q.Coord, the
// coordination events. An import adds a clone's older events late; they
// are still listed where their time puts them. q.Last reads the last N.
func (s *Store) ScanLog(ctx context.Context, p store.PlanKey, q store.LogQuery, fn func(line []byte) error) error {
	if err := checkKey(p); err != nil {
		return err
	}
	kinds := q.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	where := `project = $1 AND plan = $2 AND ($3 = '' OR task = $3) AND (cardinality($4::text[]) = 0 OR kind = ANY($4::text[]))
AND (stream = 'plan' OR $5)`
	if q.Last > 0 {
		var lines [][]byte
		err := s.do(ctx, "reading the events of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
			lines = lines[:0]
			rows, err := conn.Query(ctx, `SELECT body::text FROM (SELECT id, ts, body FROM taskie_events WHERE `+where+`
ORDER BY ts DESC, id DESC LIMIT $6) x ORDER BY ts, id`, p.Project, p.Plan, q.Task, kinds, q.Coord, q.Last)
			if err != nil {
				return err
			}
			var body []byte
			_, err = pgx.ForEachRow(rows, []any{&body}, func() error { lines = append(lines, slices.Clone(body)); return nil })
			return err
		})
		if err != nil {
			return err
		}
		for _, l := range lines {
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	}
	// Pages follow (ts, id): the position of the last row read.
	var afterTS time.Time
	var afterID int64
	first := true
	for {
		var page [][]byte
		var more bool
		err := s.do(ctx, "reading the events of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
			page, more = page[:0], false
			rows, err := conn.Query(ctx, `SELECT id, ts, body::text FROM taskie_events WHERE `+where+`
AND ($6 OR (ts, id) > ($7, $8)) ORDER BY ts, id LIMIT $9`, p.Project, p.Plan, q.Task, kinds, q.Coord, first, afterTS, afterID, scanPage)
			if err != nil {
				return err
			}
			var id int64
			var ts time.Time
			var body []byte
			_, err = pgx.ForEachRow(rows, []any{&id, &ts, &body}, func() error {
				afterID, afterTS = id, ts
				page = append(page, slices.Clone(body))
				return nil
			})
			more = len(page) == scanPage
			return err
		})
		if err != nil {
			return err
		}
		first = false
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
	}
}

// MissingPlanKeys returns the positions in keys (store.EventKey) of the
// plan events the database does not hold, in order.
func (s *Store) MissingPlanKeys(ctx context.Context, p store.PlanKey, keys []string) ([]int, error) {
	if err := checkKey(p); err != nil || len(keys) == 0 {
		return nil, err
	}
	var missing []int
	err := s.do(ctx, "comparing the events of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		missing = missing[:0]
		rows, err := conn.Query(ctx, `SELECT t.ord FROM unnest($3::text[]) WITH ORDINALITY AS t(key, ord)
WHERE NOT EXISTS (SELECT 1 FROM taskie_events e WHERE e.project = $1 AND e.plan = $2 AND e.key = t.key) ORDER BY t.ord`, p.Project, p.Plan, keys)
		if err != nil {
			return err
		}
		var ord int64
		_, err = pgx.ForEachRow(rows, []any{&ord}, func() error { missing = append(missing, int(ord)-1); return nil })
		return err
	})
	return missing, err
}

// planLockSQL takes the advisory lock of one plan: a session lock, so it
// spans the reading of the record, the decision and the appending of its
// events (each its own statement), and the server drops it when the
// session ends, a killed process included.
const planLockSQL = `SELECT pg_advisory_lock(hashtextextended('taskie plan ' || $1 || ' ' || $2, 0))`

// LockPlan makes the moves of one plan take turns across clones: every
// clone that decides a lifecycle move takes it before reading the shared
// record and releases it once the move's events are appended. The
// returned func releases it (best effort: the session's end does too).
func (s *Store) LockPlan(ctx context.Context, p store.PlanKey) (func(), error) {
	if err := checkKey(p); err != nil {
		return nil, err
	}
	err := s.do(ctx, "waiting for the other clones' moves of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, planLockSQL, p.Project, p.Plan)
		return err
	})
	if err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.do(ctx, "releasing plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended('taskie plan ' || $1 || ' ' || $2, 0))`, p.Project, p.Plan)
			return err
		})
	}, nil
}

var _ store.PlanLocker = (*Store)(nil)
