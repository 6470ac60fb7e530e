package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// pgPlan is a repository with one plan of two tasks, its claims in the
// database at url. Its config names the project, which counts only once
// the user trusts it.
func pgPlan(t *testing.T) string {
	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md":  "# Plan\n",
		".taskie/plans/p/tasks.md": "| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | one |\n| 2 | pending | two |\n",
		".taskie/config.json":      `{"project": "example.com/team/app"}`,
	})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var out, errb bytes.Buffer
	if code := Run([]string{"-C", dir, "trust"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("taskie trust: exit %d\n%s", code, errb.String())
	}
	return dir
}

// A connection lost in the middle of a command is the database's failure,
// not bad usage: exit 1 (not 2), saying the connection was lost and that
// running the command again is safe.
func TestConnectionLostExitsOne(t *testing.T) {
	raw := migratedDB(t)
	dir := pgPlan(t)
	// the schema check passes; the claim's first statement is cut
	t.Setenv(store.DatabaseURLEnv, pgtest.CutProxy(t, raw, "taskie_claims"))
	for _, args := range [][]string{
		{"claim", "1", "--as", "a"},
		{"claim", "--next", "--as", "a"},
		{"query", "--claimed"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(append([]string{"-C", dir}, args...), Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code != ExitProblems {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitProblems, errb.String())
			}
			if !strings.Contains(errb.String(), "was lost") {
				t.Errorf("stderr does not say the connection was lost:\n%s", errb.String())
			}
		})
	}
}

// `taskie store migrate` on a database a newer taskie migrated says so and
// exits 1, instead of calling it up to date.
func TestMigrateNewerSchema(t *testing.T) {
	raw := migratedDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "INSERT INTO taskie_schema_version (version, name) VALUES (99, '0099_future.sql')")
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(store.DatabaseURLEnv, raw)
	dir := pgPlan(t)
	var out, errb bytes.Buffer
	code := Run([]string{"-C", dir, "store", "migrate"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	if code != ExitProblems {
		t.Errorf("exit %d, want %d", code, ExitProblems)
	}
	got := errb.String()
	for _, want := range []string{"schema is newer than this taskie", "version 99", "upgrade taskie"} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "up to date") {
		t.Errorf("stderr calls it up to date:\n%s", got)
	}
}
