package hook

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/taskie-dev/taskie/internal/plan"
)

// planLog is the per-plan structured log in .taskie/logs/{plan}.log: one
// JSON line per hook decision.
type planLog struct {
	f   *os.File
	l   *slog.Logger
	dir string
}

func openLog(r *plan.Repo, id string) *planLog {
	dir := filepath.Join(r.TaskieDir(), "logs")
	pl := &planLog{dir: dir}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		pl.f, _ = os.OpenFile(filepath.Join(dir, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	if pl.f != nil {
		pl.l = slog.New(slog.NewJSONHandler(pl.f, nil)).With("plan", id)
	}
	return pl
}

func (pl *planLog) decision(in Input, decision, why string, attrs ...any) {
	if pl.l == nil {
		return
	}
	pl.l.Info("stop", append([]any{"session", in.SessionID, "active", in.StopHookActive, "decision", decision, "why", why}, attrs...)...)
}

func (pl *planLog) info(msg string, attrs ...any) {
	if pl.l != nil {
		pl.l.Info(msg, attrs...)
	}
}

func (pl *planLog) close() {
	if pl.f != nil {
		pl.f.Close()
	}
}
