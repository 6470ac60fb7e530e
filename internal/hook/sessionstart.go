package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/continuity"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

// SummaryBudget bounds the context injected at session start (docs/continuity.md).
const SummaryBudget = continuity.Budget + 64

// SessionStart prints where the plan stands as additionalContext, so a fresh
// or compacted session resumes from facts, not guesses. It always exits 0.
func SessionStart(e Env) int {
	if e.Getenv("TASKIE_HOOK_SKIP") != "" {
		return 0
	}
	in, err := readInput(e, "session-start")
	if err != nil {
		return 0
	}
	exportSession(e, in.SessionID) // also before any plan exists: `plan new` claims it
	repo, ok := findRepo("session-start", in.Cwd)
	if !ok {
		return 0
	}
	fs, err := store.Open(repo, e.Clock)
	if err != nil {
		return 0
	}
	defer fs.Close()
	cfg, _ := config.Load(repo.TaskieDir())
	sel := SelectPlan(fs, in, e.Clock.Now(), cfg.ReviewerTimeout.D())
	id := sel.Plan
	if sel.Message != "" {
		logChoice(fs.Root(), "session-start", in, sel)
	}
	logStale(fs.Root(), "session-start", in, sel)
	if id == "" {
		if sel.Message != "" {
			writeContext(e, sel.Message)
		}
		return 0
	}
	p, err := implied.With(fs, id)
	if err != nil {
		return 0
	}
	// A task's commit made since the last write is recorded now, so that
	// tasks.md says done as the summary does (docs/lifecycle.md). A
	// failure only leaves it for the next write.
	_ = implied.SettleCommits(p, "hook")
	text := Summary(p)
	if snap, err := p.Snapshot(); err == nil && snap.State != nil {
		pending := snap.PendingOther(snap.State.Task())
		if lines := needsLines(id, store.PlanFlagFor(id, sel.Plans), snap.State, pending, cfg, e.Clock.Now()); lines != "" {
			text += lines + "\n"
		}
	}
	writeContext(e, text)
	return 0
}

// writeContext prints the SessionStart answer that adds text to the
// session's context.
func writeContext(e Env, text string) {
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": "SessionStart", "additionalContext": text}})
	fmt.Fprintf(e.Stdout, "%s\n", out)
}

// Summary is the short text of where a plan stands: `taskie context` for
// the current task, within the same budget. An unreadable state.json is
// reported instead, so the session fixes it first.
func Summary(p *store.Plan) string {
	b, err := continuity.Context(p, 0)
	if err != nil {
		return fmt.Sprintf("taskie plan %q (.taskie/plans/%s/): %v. Fix it before continuing (`taskie validate %s`).\n", p.ID, p.ID, err, p.ID)
	}
	return b.Text() + "\nRun `taskie continue` for the exact next action.\n"
}

// exportSession makes the session id visible to the agent's shell commands
// (Claude Code sources CLAUDE_ENV_FILE before each Bash call), so `taskie
// plan new --auto` and `taskie start --auto` can claim their plan for this
// session at once instead of at its first review.
func exportSession(e Env, id string) {
	path := e.Getenv("CLAUDE_ENV_FILE")
	if path == "" || plan.ValidID(id) != nil {
		return
	}
	line := "export TASKIE_SESSION_ID=" + id + "\n"
	// Bounded and non-blocking: a FIFO or a huge file there is left alone.
	data, err := fsafe.ReadPath(path, 1<<20)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil || strings.Contains(string(data), line):
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(line)
}
