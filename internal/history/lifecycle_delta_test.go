package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
)

// lifecycleAt returns records for tasks 1..n, task i in the state moves[i]
// says (pending when absent), all created at t0.
func lifecycleAt(t *testing.T, n int, moves map[int]lifecycle.State) state.LifecycleJSON {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tasks := map[domain.TaskID]lifecycle.Task{}
	for i := 1; i <= n; i++ {
		tk, _, err := lifecycle.New(domain.TaskID(i), lifecycle.ActorAgent, t0)
		if err != nil {
			t.Fatal(err)
		}
		for tk.State != moves[i] && moves[i] != "" {
			next := lifecycle.Next(tk)[0]
			if tk, _, err = lifecycle.Move(tk, next, lifecycle.ActorAgent, "", t0.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		tasks[tk.ID] = tk
	}
	return lifecycle.Encode(tasks)
}

// TestLifecycleDeltaReplays: a commit that changes some lifecycle records
// logs those records only — its line does not grow with the plan's tasks —
// and the replay of the log (recover, recover --check) merges them into
// exactly the state.json the store wrote; removals and the field's
// appearing and going away replay too.
func TestLifecycleDeltaReplays(t *testing.T) {
	m := newSim(t, false, false)
	const tasks = 200
	steps := []struct {
		name string
		lc   state.LifecycleJSON
	}{
		{"records appear", lifecycleAt(t, tasks, nil)},
		{"one task moves", lifecycleAt(t, tasks, map[int]lifecycle.State{7: lifecycle.Assigned})},
		{"two more move", lifecycleAt(t, tasks, map[int]lifecycle.State{7: lifecycle.Assigned, 150: lifecycle.Planning, 3: lifecycle.Assigned})},
		{"a record goes away", lifecycleAt(t, tasks-1, map[int]lifecycle.State{7: lifecycle.Assigned, 150: lifecycle.Planning, 3: lifecycle.Assigned})},
		{"the field goes away", nil},
		{"and comes back", lifecycleAt(t, 3, nil)},
	}
	for _, s := range steps {
		n := m.s.Clone()
		n.Lifecycle = s.lc
		m.commit(s.name, n) // checks the replay against state.json
	}
	data, err := os.ReadFile(filepath.Join(m.root, ".taskie", "plans", simPlan, events.FileName))
	if err != nil {
		t.Fatal(err)
	}
	commit := func(reason string) string {
		for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			if bytes.Contains(l, []byte(`"reason":"`+reason+`"`)) {
				return string(l)
			}
		}
		t.Fatalf("no commit %q in the log", reason)
		return ""
	}
	for i, want := range []struct {
		whole, delta string
		maxLen       int
	}{
		{whole: `"set":{"lifecycle":{"1":`, maxLen: 1 << 20},
		{delta: `"lifecycle":{"7":{"state":"assigned"`, maxLen: 700},
		{delta: `"lifecycle":{"150":`, maxLen: 900},
		{delta: `"lifecycle":{"200":null}`, maxLen: 400},
		{whole: `"unset":["lifecycle"]`, maxLen: 400},
		{whole: `"set":{"lifecycle":{"1":`, maxLen: 1000},
	} {
		line := commit(steps[i].name)
		if want.whole != "" && !strings.Contains(line, want.whole) || want.delta != "" && !strings.Contains(line, want.delta) {
			t.Errorf("commit %q logs\n%.400s…\nwant %s%s", steps[i].name, line, want.whole, want.delta)
		}
		if want.delta != "" && strings.Contains(line, `"set":{"lifecycle"`) {
			t.Errorf("commit %q logs the whole field: %.200s…", steps[i].name, line)
		}
		if len(line) > want.maxLen {
			t.Errorf("commit %q is %d bytes, want at most %d", steps[i].name, len(line), want.maxLen)
		}
	}
}

// TestLifecycleWholeMapLogReplays: a log written before the deltas, whose
// commits carry the whole lifecycle field each time, still replays; and a
// log that mixes both forms does.
func TestLifecycleWholeMapLogReplays(t *testing.T) {
	a := lifecycleAt(t, 5, nil)
	b := lifecycleAt(t, 5, map[int]lifecycle.State{2: lifecycle.Planning})
	c := lifecycleAt(t, 5, map[int]lifecycle.State{2: lifecycle.Planning, 4: lifecycle.Assigned})
	ts := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	line := func(i int, extra string) string {
		return fmt.Sprintf(`{"ts":"%s","plan":"p","event":"LIFECYCLE_CHANGED","actor":"cli",%s,"sha":"s%d","prev":"s%d"}`, ts.Format(time.RFC3339), extra, i, i-1)
	}
	whole := func(lc state.LifecycleJSON) string { return `"set":{"lifecycle":` + string(lc) + `}` }
	delta := func(id string, from state.LifecycleJSON) string {
		var recs map[string]json.RawMessage
		if err := json.Unmarshal(from, &recs); err != nil {
			t.Fatal(err)
		}
		return `"lifecycle":{"` + id + `":` + string(recs[id]) + `}`
	}
	for _, tc := range []struct {
		name string
		log  []string
	}{
		{"whole maps", []string{whole(a), whole(b), whole(c)}},
		{"whole, then deltas", []string{whole(a), delta("2", b), delta("4", c)}},
		{"deltas, then whole", []string{whole(a), delta("2", b), whole(c)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := `{"ts":"2026-03-01T09:00:00Z","plan":"p","event":"PHASE_CHANGE","to":"new-plan","actor":"cli","set":{"consecutive_clean":0,"current_task":null,"max_reviews":8,"next_phase":null,"phase":"new-plan","phase_iteration":null,"review_model":"opus","tdd":false},"sha":"s0"}`
			var evs []events.Event
			for i, l := range append([]string{first}, func() []string {
				var out []string
				for j, x := range tc.log {
					out = append(out, line(j+1, x))
				}
				return out
			}()...) {
				var e events.Event
				if err := json.Unmarshal([]byte(l), &e); err != nil {
					t.Fatalf("line %d: %v", i, err)
				}
				evs = append(evs, e)
			}
			got := Replay(evs, Defaults{Models: domain.DefaultModels()})
			if len(got.Notes) > 0 {
				t.Fatalf("notes: %v", got.Notes)
			}
			if string(got.State.Lifecycle) != string(c) {
				t.Errorf("replayed lifecycle\n%s\nwant\n%s", got.State.Lifecycle, c)
			}
		})
	}
}
