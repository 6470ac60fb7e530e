package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/store"
)

var _ store.Replacer = (*Store)(nil)

// ReplacePlan replaces the plan's claims and coordination events with d in
// one transaction (`taskie store import`): claims and events as they are,
// events in their order. The plan events mirrored from the clones stay.
func (s *Store) ReplacePlan(ctx context.Context, p store.PlanKey, d store.PlanData) error {
	if err := checkKey(p); err != nil {
		return err
	}
	return s.tx(ctx, "importing plan "+p.Plan, p, func(ctx context.Context, tx pgx.Tx) (bool, error) {
		b := &pgx.Batch{}
		b.Queue("DELETE FROM taskie_claims WHERE project = $1 AND plan = $2", p.Project, p.Plan)
		b.Queue("DELETE FROM taskie_events WHERE project = $1 AND plan = $2 AND stream = 'coord'", p.Project, p.Plan)
		for _, c := range d.Claims {
			b.Queue(`INSERT INTO taskie_claims (project, plan, task, agent, acquired, expires, heartbeat, token, place)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, p.Project, p.Plan, int32(c.Task), c.Agent, c.Acquired, c.Expires, c.Heartbeat, c.Token, c.Place)
		}
		for _, e := range d.Events {
			if err := queueEvent(b, p, e); err != nil {
				return false, err
			}
		}
		return true, tx.SendBatch(ctx, b).Close()
	})
}

// Counts are what `taskie store status` counts.
type Counts struct {
	Projects   int64 `json:"projects"`
	Plans      int64 `json:"plans"`
	Claims     int64 `json:"claims"`
	LiveClaims int64 `json:"live_claims"`
	Events     int64 `json:"events"`
}

// Info is the state of the database for `taskie store status`.
type Info struct {
	ServerVersion string        `json:"server_version"`
	Schema        int           `json:"schema_version"`
	Latest        int           `json:"schema_latest"`
	RoundTrip     time.Duration `json:"-"`
	All           Counts        `json:"all"`     // every project
	Project       Counts        `json:"project"` // project's plans
}

// Status reads the server's version, the schema version and the counts,
// for every project and for project.
func (s *Store) Status(ctx context.Context, project string) (Info, error) {
	info := Info{Latest: Latest()}
	err := s.do(ctx, "reading the status", func(ctx context.Context, conn *pgx.Conn) error {
		start := time.Now()
		if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&info.ServerVersion); err != nil {
			return err
		}
		info.RoundTrip = time.Since(start)
		return nil
	})
	if err != nil {
		return info, err
	}
	if info.Schema, err = s.SchemaVersion(ctx); err != nil || info.Schema == 0 {
		return info, err
	}
	if info.All, err = s.counts(ctx, ""); err != nil || project == "" {
		return info, err
	}
	info.Project, err = s.counts(ctx, project)
	return info, err
}

// countsSQL counts the data of project $1, of every project when "".
func countsSQL() string {
	return `SELECT
  (SELECT count(DISTINCT project) FROM (SELECT project FROM taskie_claims UNION ALL SELECT project FROM taskie_events) x
    WHERE $1 = '' OR project = $1),
  (SELECT count(*) FROM (SELECT project, plan FROM taskie_claims WHERE agent <> '' AND ($1 = '' OR project = $1)
    UNION SELECT project, plan FROM taskie_events WHERE $1 = '' OR project = $1) y),
  (SELECT count(*) FROM taskie_claims WHERE agent <> '' AND ($1 = '' OR project = $1)),
  (SELECT count(*) FROM taskie_claims WHERE agent <> '' AND expires > ` + nowSQL(2) + ` AND ($1 = '' OR project = $1)),
  (SELECT count(*) FROM taskie_events WHERE $1 = '' OR project = $1)`
}

func (s *Store) counts(ctx context.Context, project string) (Counts, error) {
	var c Counts
	err := s.do(ctx, "counting claims and events", func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, countsSQL(), project, s.skewMicros()).Scan(&c.Projects, &c.Plans, &c.Claims, &c.LiveClaims, &c.Events)
	})
	return c, err
}

// Plans lists the plans of project that hold claims or events here.
func (s *Store) Plans(ctx context.Context, project string) ([]string, error) {
	var out []string
	err := s.do(ctx, "listing plans", func(ctx context.Context, conn *pgx.Conn) error {
		out = nil
		rows, err := conn.Query(ctx, `SELECT plan FROM taskie_claims WHERE project = $1 AND agent <> ''
UNION SELECT plan FROM taskie_events WHERE project = $1 ORDER BY 1`, project)
		if err != nil {
			return err
		}
		var p string
		_, err = pgx.ForEachRow(rows, []any{&p}, func() error { out = append(out, p); return nil })
		return err
	})
	return out, err
}

// PlanEvents counts the plan events of p every clone shared (not the
// coordination events).
func (s *Store) PlanEvents(ctx context.Context, p store.PlanKey) (int, error) {
	var n int
	err := s.do(ctx, "counting the events of plan "+p.Plan, func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT count(*) FROM taskie_events WHERE project = $1 AND plan = $2 AND stream = 'plan'`,
			p.Project, p.Plan).Scan(&n)
	})
	return n, err
}
