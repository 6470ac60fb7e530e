// Package benchfix generates the large plans the benchmarks of docs/performance.md run
// on, shared by the Go benchmarks and bench/.
package benchfix

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Plan writes a project at root with one plan "big": tasks task files,
// reviews review/post-review pairs spread over the tasks, and a state.json
// whose next_phase is not a review (so a stop has nothing to do).
func Plan(root string, tasks, reviews int) (string, error) {
	dir := filepath.Join(root, ".taskie", "plans", "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var tb strings.Builder
	tb.WriteString("| Id | Status | Priority | Title | Depends on |\n|----|--------|----------|-------|------------|\n")
	write := func(name, text string) error { return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644) }
	for i := 1; i <= tasks; i++ {
		status := "done"
		if i > tasks/2 {
			status = "pending"
		}
		fmt.Fprintf(&tb, "| %d | %s | high | Task number %d with a \\| pipe | %d |\n", i, status, i, i-1)
		if err := write(fmt.Sprintf("task-%d.md", i), fmt.Sprintf("# Task %d\n\n### Subtask %d.1: do it\n- **Status**: done\n", i, i)); err != nil {
			return "", err
		}
	}
	// Pairs: review n and post-review n for task t; the latest review of a
	// series has its post-review too, which is legal.
	for k := 0; k < reviews/2; k++ {
		t, n := k%tasks+1, k/tasks+1
		if err := write(fmt.Sprintf("task-%d-review-%d.md", t, n), "review\n"); err != nil {
			return "", err
		}
		if err := write(fmt.Sprintf("task-%d-post-review-%d.md", t, n), "post\n"); err != nil {
			return "", err
		}
	}
	if err := write("tasks.md", tb.String()); err != nil {
		return "", err
	}
	if err := write("plan.md", "# Big plan\n"); err != nil {
		return "", err
	}
	state := fmt.Sprintf(`{"max_reviews": 8, "current_task": "%d", "phase": "post-code-review", "phase_iteration": 1, "next_phase": null, "review_model": "sonnet", "consecutive_clean": 0, "tdd": false}`, tasks/2)
	return dir, write("state.json", state+"\n")
}

// Plans writes n small plans "p1" … "pn" under root, every one waiting on
// the hook (a review is next, owned by a session that ended its turn), and
// a transcript of about size bytes of agent talk naming none of them: the
// worst case of plan choice, which reads every plan and the transcript's
// tail. It returns the transcript's path.
func Plans(root string, n, size int) (string, error) {
	for i := 1; i <= n; i++ {
		dir := filepath.Join(root, ".taskie", "plans", fmt.Sprintf("p%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "plan.md"), []byte("# Plan\n"), 0o644); err != nil {
			return "", err
		}
		state := `{"max_reviews": 8, "current_task": null, "phase": "new-plan", "phase_iteration": 0, "next_phase": "plan-review", "review_model": "opus", "consecutive_clean": 0, "tdd": false, "session_id": "other"}`
		if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(state+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	line := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"I read the plan and ran the tests; the plan looks fine and the next step is planned."}]}}` + "\n"
	for b.Len() < size {
		b.WriteString(line)
	}
	path := filepath.Join(root, "transcript.jsonl")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}
