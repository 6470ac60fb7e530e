package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// status --watch keeps its connections for the whole watch: a redraw every
// 50 ms for a second opens no new session (it opened one per redraw).
func TestStatusWatchOneConnection(t *testing.T) {
	raw := migratedDB(t)
	var sessions atomic.Int64
	proxied := pgtest.Proxy(t, raw, &sessions, nil)
	t.Setenv(store.DatabaseURLEnv, proxied)

	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md":  "# Plan\n",
		".taskie/plans/p/tasks.md": "| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | one |\n",
		".taskie/config.json":      `{"project": "example.com/team/app"}`,
	})
	r, err := plan.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := implied.Get(r, "p", clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { watchPoll = d }(watchPoll)
	watchPoll = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	if err := watchStatus(ctx, &Streams{Out: &out, Err: &errb}, p, true); err != nil {
		t.Fatal(err)
	}
	// the listener's store, the listening session, the claims' session
	if n := sessions.Load(); n > 3 {
		t.Errorf("%d sessions opened by a one-second watch; want at most 3 (stderr %q)", n, errb.String())
	}
}

// migratedDB starts (or reuses) the test PostgreSQL and returns the URL of
// a new database with taskie's schema.
func migratedDB(t *testing.T) string {
	t.Helper()
	srv := pgtest.StartFor(t)
	raw, err := srv.NewDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Connect(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return raw
}

// writeTree writes files (path → content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
