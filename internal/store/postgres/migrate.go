package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one step of the schema: migrations/NNNN_name.sql.
type Migration struct {
	Version int
	Name    string // the file's name
	SQL     string
}

// Migrations returns the migrations embedded in the binary, in order.
func Migrations() []Migration {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	var out []Migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			panic("postgres: migration " + base + " does not start with its version number")
		}
		data, _ := migrationFiles.ReadFile(n)
		out = append(out, Migration{Version: v, Name: base, SQL: string(data)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// Latest is the schema version this taskie brings.
func Latest() int {
	ms := Migrations()
	return ms[len(ms)-1].Version
}

// migrateLock is the advisory lock that makes migrations take turns, from
// any number of machines: "taskie" in ASCII.
const migrateLock int64 = 0x7461736b6965

const versionTableSQL = `CREATE TABLE IF NOT EXISTS taskie_schema_version (
    version integer     PRIMARY KEY,
    name    text        NOT NULL,
    applied timestamptz NOT NULL DEFAULT now()
)`

// Migrate brings the schema to Latest: every migration the database lacks,
// in order, in one transaction under an advisory lock. Run twice, or from
// two machines at once, the second finds nothing to do; a migration that
// fails leaves the schema as it was. It returns the versions before and
// after.
func (s *Store) Migrate(ctx context.Context) (from, to int, err error) {
	err = s.do(ctx, "migrating the schema", func(ctx context.Context, conn *pgx.Conn) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, versionTableSQL); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM taskie_schema_version").Scan(&from); err != nil {
				return err
			}
			to = from
			if from > Latest() {
				return fmt.Errorf("%w: it is at version %d, this taskie brings %d", ErrSchemaNewer, from, Latest())
			}
			for _, m := range Migrations() {
				if m.Version <= from {
					continue
				}
				if _, err := tx.Exec(ctx, m.SQL); err != nil {
					return fmt.Errorf("migration %s: %w", m.Name, err)
				}
				if _, err := tx.Exec(ctx, "INSERT INTO taskie_schema_version (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
					return err
				}
				to = m.Version
			}
			return nil
		})
	})
	return from, to, err
}

// ErrSchemaNewer is the error of a migration of a database whose schema a
// newer taskie made: this one cannot know what its migrations did.
var ErrSchemaNewer = errors.New("the database's schema is newer than this taskie")

// SchemaVersion returns the database's schema version, 0 when taskie's
// schema is not there.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.do(ctx, "reading the schema version", func(ctx context.Context, conn *pgx.Conn) error {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass('taskie_schema_version') IS NOT NULL").Scan(&exists); err != nil || !exists {
			return err
		}
		return conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM taskie_schema_version").Scan(&v)
	})
	return v, err
}
