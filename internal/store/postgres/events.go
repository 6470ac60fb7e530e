package postgres

import (
	"context"
	"encoding/json"
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
				now = now.UTC()
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

// ScanEvents streams the plan's coordination events in log order. An
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
WHERE project = $1 AND plan = $2 AND id > $3 ORDER BY id LIMIT $4`, p.Project, p.Plan, after, scanPage)
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
