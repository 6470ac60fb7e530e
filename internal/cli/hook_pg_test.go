package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// A Stop hook that commits (here: reviews disabled, the phase moves on)
// with a shared store that accepts the connection and then goes silent
// keeps its change in the clone, logs the mirror's warning in hook.log and
// returns within the hooks' 3 s bound, never the 5 s of other commands.
func TestHookStopSilentDatabase(t *testing.T) {
	raw := migratedDB(t)
	silent := strings.Replace(pgtest.SilentProxy(t, raw), "postgres@", "postgres:s3cret@", 1)
	t.Setenv(store.DatabaseURLEnv, silent)

	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md":    "# Plan\n",
		".taskie/plans/p/tasks.md":   "| Id | Status | Title |\n|----|--------|-------|\n| 1 | in-progress | one |\n",
		".taskie/plans/p/task-1.md":  "# Task 1\n",
		".taskie/plans/p/state.json": `{"max_reviews": 0, "phase": "next-task", "current_task": "1", "phase_iteration": 0, "next_phase": "code-review", "review_model": "opus", "consecutive_clean": 0}`,
		".taskie/config.json":        `{"project": "example.com/team/app"}`,
	})
	in, _ := json.Marshal(map[string]string{"session_id": "s1", "cwd": dir, "hook_event_name": "Stop"})
	var out, errb bytes.Buffer
	start := time.Now()
	code := Run([]string{"hook", "stop"}, Streams{In: bytes.NewReader(in), Out: &out, Err: &errb})
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("hook stop exited %d: %s%s", code, out.String(), errb.String())
	}
	if took > 4500*time.Millisecond {
		t.Errorf("the hook waited %s on a silent database", took)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr (the agent's block reason) got %q", errb.String())
	}
	log, err := os.ReadFile(filepath.Join(dir, ".taskie/logs/hook.log"))
	if err != nil || !bytes.Contains(log, []byte("did not reach the shared store")) || bytes.Contains(log, []byte("s3cret")) {
		t.Errorf("hook.log = %q, %v; want the mirror's warning without the password", log, err)
	}
	st, _ := os.ReadFile(filepath.Join(dir, ".taskie/plans/p/state.json"))
	if !bytes.Contains(st, []byte(`"phase": "code-review"`)) {
		t.Errorf("the change was not kept in the clone: %s", st)
	}
}
