package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
	"github.com/taskie-dev/taskie/internal/trust"
)

// A database that accepts the connection and then goes silent (a network
// cut without a reset) holds the subagent gate up for CoordDeadline at
// most, not for the store's 30 s operation timeout: the schema check, the
// clock and the claims share one deadline. The stop is allowed with a
// message naming the URL without its password.
func TestSubagentStopSilentDatabase(t *testing.T) {
	srv := pgtest.StartFor(t)
	url, err := srv.NewDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	silent := strings.Replace(pgtest.SilentProxy(t, url), "postgres@", "postgres:s3cret@", 1)

	dir := t.TempDir()
	for name, data := range map[string]string{
		".taskie/plans/p/plan.md":  "# Plan\n",
		".taskie/plans/p/tasks.md": "| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | one |\n",
		".taskie/config.json":      `{"store": "` + silent + `", "project": "example.com/team/app"}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(store.DatabaseURLEnv, "")
	// The repository's store counts once the user trusts the file.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cfgFile := filepath.Join(dir, ".taskie", "config.json")
	cfgData, _ := os.ReadFile(cfgFile)
	if ts, err := trust.Open(); err != nil {
		t.Fatal(err)
	} else if _, err := ts.TrustPinned(cfgFile, cfgData, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"session_id": "s1", "cwd": dir, "hook_event_name": "SubagentStop", "agent_id": "worker-1"})
	var out, errb bytes.Buffer
	e := Env{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		InputDeadline: time.Second, Format: FormatJSON}
	start := time.Now()
	code := SubagentStop(e)
	took := time.Since(start)
	if took > 4500*time.Millisecond {
		t.Errorf("the gate waited %s for a silent database (deadline %s)", took, CoordDeadline)
	}
	if code != 0 || strings.Contains(out.String(), `"block"`) {
		t.Errorf("exit %d, stdout %q: want the stop allowed", code, out.String())
	}
	if !strings.Contains(out.String(), "subagent stop allowed") || !strings.Contains(out.String(), "xxxxx") || strings.Contains(out.String(), "s3cret") {
		t.Errorf("stdout %q: want a message naming the URL without its password", out.String())
	}
}
