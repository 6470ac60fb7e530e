package cli

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// TestPostgresScripts runs testdata/pgscripts/*.txtar against a real
// PostgreSQL server started for this test (skipped, saying why, where none
// can be): each script gets a new empty database in $PGURL, and
// TASKIE_DATABASE_URL names it, so every command uses the shared store.
func TestPostgresScripts(t *testing.T) {
	srv := pgtest.StartFor(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/pgscripts",
		Setup: func(env *testscript.Env) error {
			url, err := srv.NewDB(context.Background())
			if err != nil {
				return err
			}
			env.Setenv("PGURL", url)
			env.Setenv(store.DatabaseURLEnv, url)
			env.Setenv("TASKIE_HOOK_SKIP", "")
			env.Setenv("CLAUDECODE", "")
			for _, kv := range []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
				"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1"} {
				k, v, _ := cut(kv)
				env.Setenv(k, v)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sql": cmdSQL,
		},
	})
}

// cmdSQL runs one statement on $PGURL: `sql 'UPDATE …'` (a row tampered
// with by hand).
func cmdSQL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sql 'STATEMENT'")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ts.Getenv("PGURL"))
	ts.Check(err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, args[0])
	ts.Check(err)
}

func cut(kv string) (string, string, bool) {
	for i := range kv {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
