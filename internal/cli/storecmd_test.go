package cli

import (
	"context"
	"testing"

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
	})
}

func cut(kv string) (string, string, bool) {
	for i := range kv {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
