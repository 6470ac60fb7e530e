package hook

import (
	"errors"
	"log/slog"
	"os"

	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/store"
)

// planLog is the per-plan structured log in .taskie/logs/{plan}.log: one
// JSON line per hook decision.
type planLog struct {
	f   *os.File
	l   *slog.Logger
	dir string
}

func openLog(root *fsafe.Root, id string) *planLog {
	pl := &planLog{dir: root.Path(".taskie/logs")}
	if err := root.MkdirAll(".taskie/logs", 0o755); err == nil {
		pl.f, _ = root.OpenAppend(".taskie/logs/" + id + ".log")
	}
	return pl.start(id)
}

// openLogs opens the logs directory once for the logs of many plans (a
// stop tells 50 plans' logs why none was driven): each is then opened with
// one lookup. nil when the directory cannot be made or opened.
func openLogs(root *fsafe.Root) *fsafe.Dir {
	if root.MkdirAll(".taskie/logs", 0o755) != nil {
		return nil
	}
	d, _ := root.OpenDir(".taskie/logs")
	return d
}

// openLogIn opens a plan's log in the logs directory d (openLogs), or as
// openLog does when d is nil.
func openLogIn(root *fsafe.Root, d *fsafe.Dir, id string) *planLog {
	if d == nil {
		return openLog(root, id)
	}
	pl := &planLog{dir: root.Path(".taskie/logs")}
	pl.f, _ = d.OpenAppend(id + ".log")
	return pl.start(id)
}

func (pl *planLog) start(id string) *planLog {
	if pl.f != nil {
		pl.l = slog.New(slog.NewJSONHandler(pl.f, nil)).With("plan", id)
	}
	return pl
}

func (pl *planLog) decision(in Input, decision, why string, attrs ...any) {
	pl.event("stop", in, decision, why, attrs...)
}

// event is one decision of a hook (stop, session-start).
func (pl *planLog) event(hook string, in Input, decision, why string, attrs ...any) {
	if pl.l == nil {
		return
	}
	pl.l.Info(hook, append([]any{"session", in.SessionID, "active", in.StopHookActive, "decision", decision, "why", why}, attrs...)...)
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

// Warn writes a warning of the hook's own making (not a decision) to
// .taskie/logs/hook.log under root: a hook's stderr is the agent's block
// reason or the user's notice, not a place for taskie's housekeeping.
func Warn(root, msg string) {
	r, err := fsafe.Open(root)
	if err != nil {
		return
	}
	defer r.Close()
	pl := openLog(r, "hook")
	defer pl.close()
	pl.info("warning", "message", msg)
}

// findRepo is the project a hook acts on from the agent's cwd: in a
// linked worktree, the main checkout's (store.Locate, as every command
// does). The hook says so in .taskie/logs/hook.log, never on stderr; a
// worktree refused for want of a main checkout is logged in its own
// .taskie and the hook stays out of the way.
func findRepo(hook, cwd string) (*plan.Repo, bool) {
	loc, err := store.Locate(cwd)
	if err != nil {
		var nm *store.NoMainError
		if errors.As(err, &nm) {
			Warn(nm.Worktree, hook+": "+err.Error()+"; the hook does nothing here (run taskie against the checkout that holds the plan)")
		}
		return nil, false
	}
	if n := loc.Notice(); n != "" {
		Warn(loc.Repo.Root, hook+": "+n+" (cwd "+cwd+")")
	}
	return loc.Repo, true
}
