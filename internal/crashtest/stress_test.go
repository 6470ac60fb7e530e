package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStressMixedCommands runs many taskie processes at once against one
// plan for a bounded time — state writers, tasks writers, progress notes,
// plain reads and Stop hooks — and then checks that nothing was lost:
// validation and `recover --check` pass, every note that reported success
// is in its task file, and the log holds exactly one event per change.
func TestStressMixedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test: skipped with -short")
	}
	home := t.TempDir()
	h := newHarness(t, home)
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	setup(t, h, root, rand.New(rand.NewPCG(1, 2)))
	h.must(root, "set", "next_phase", "null") // the Stop hooks below find no review due
	before := countEvents(t, filepath.Join(planDir(root), "events.jsonl"))

	const workers = 8
	deadline := time.Now().Add(stressDuration())
	var mu sync.Mutex
	var notes []string // the texts of notes that reported success
	sets, statuses := 0, 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				switch w % 4 {
				case 0: // progress notes on two tasks
					task := fmt.Sprint(1 + n%2)
					text := fmt.Sprintf("w%d-n%d", w, n)
					if r, err := h.run(root, "task", "note", task, "--did", text, "--issues", "none", "--next", "go on"); err == nil && r.code == 0 {
						mu.Lock()
						notes = append(notes, task+":"+text)
						mu.Unlock()
					}
				case 1: // state writers: each a distinct value, so each is a change
					if r, err := h.run(root, "set", "review_model", fmt.Sprintf("m-w%d-%d", w, n)); err == nil && r.code == 0 {
						mu.Lock()
						sets++
						mu.Unlock()
					}
				case 2: // tasks writers: task 3 flips; only a real flip is a change
					status := []string{"done", "pending"}[n%2]
					if r, err := h.run(root, "task", "status", "3", status); err == nil && r.code == 0 {
						mu.Lock()
						statuses++
						mu.Unlock()
					}
				case 3: // readers and the Stop hook (no review is due)
					_, _ = h.run(root, "status", "--json")
					c, _, _ := h.command(root, []string{"hook", "stop"})
					c.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"stress-%d","cwd":%q,"stop_hook_active":false}`, w, root))
					_ = c.Run()
				}
			}
		}()
	}
	wg.Wait()

	for _, args := range [][]string{{"validate"}, {"recover", "--check"}} {
		if r, err := h.run(root, args...); err != nil || r.code != 0 {
			t.Errorf("taskie %s after the stress: %v %s", strings.Join(args, " "), err, r)
		}
	}
	for _, n := range notes {
		task, text, _ := strings.Cut(n, ":")
		data, _ := os.ReadFile(filepath.Join(planDir(root), "task-"+task+".md"))
		arch, _ := os.ReadFile(filepath.Join(archiveDir(root), "task-"+task+".md"))
		if !bytes.Contains(data, []byte(text)) && !bytes.Contains(arch, []byte(text)) {
			t.Errorf("note %q of task %s reported success but is in neither its task file nor the archive", text, task)
		}
	}
	after := countEvents(t, filepath.Join(planDir(root), "events.jsonl"))
	if got := after["PROGRESS"] - before["PROGRESS"]; got != len(notes) {
		t.Errorf("PROGRESS events: %d, want one per successful note (%d)", got, len(notes))
	}
	if got := after["FIELD_SET"] - before["FIELD_SET"]; got != sets {
		t.Errorf("FIELD_SET events: %d, want one per successful set (%d)", got, sets)
	}
	if got := after["TASK_STATUS"] - before["TASK_STATUS"]; got > statuses || got == 0 && statuses > 1 {
		t.Errorf("TASK_STATUS events: %d for %d successful status commands", got, statuses)
	}
	if after["unreadable"] > 0 {
		t.Errorf("%d unreadable lines in events.jsonl", after["unreadable"])
	}
	t.Logf("%d workers for %v: %d notes, %d sets, %d status commands; events by kind: %v",
		workers, stressDuration(), len(notes), sets, statuses, after)
}

// stressDuration bounds the stress test; TASKIE_STRESS overrides it.
func stressDuration() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TASKIE_STRESS")); err == nil && d > 0 {
		return d
	}
	return 8 * time.Second
}

// countEvents counts the log's events by kind ("unreadable": lines that do
// not parse).
func countEvents(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Event string `json:"event"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			out["unreadable"]++
			continue
		}
		out[e.Event]++
	}
	return out
}
