package fsafe

import (
	"fmt"
	"path"
	"strings"
)

// Size limits of the files taskie reads whole, per kind (docs/reliability.md).
// A repository is someone else's content: a file over its limit is refused
// with an error naming it, never read into memory. The limits are far above
// what taskie writes, so only a damaged or hostile file meets them.
const (
	// LimitState bounds state.json (taskie writes well under 4 KiB).
	LimitState int64 = 1 << 20
	// LimitTasks bounds tasks.md.
	LimitTasks int64 = 16 << 20
	// LimitTaskFile bounds a task file, task-T.md.
	LimitTaskFile int64 = 4 << 20
	// LimitSession bounds a session's memory in .taskie/sessions/.
	LimitSession int64 = 1 << 20
	// LimitDefault bounds every other file ReadFile reads (plan.md, review
	// files, the progress archive, config.json, claims).
	LimitDefault int64 = 16 << 20
)

// limitKind is the limit of one kind of file and what to do about a file
// over it.
type limitKind struct {
	name  string
	limit int64
	hint  string
}

// limitFor returns the kind of the file rel for its size limit.
func limitFor(rel string) limitKind {
	rel = strings.ReplaceAll(rel, "\\", "/")
	base := path.Base(rel)
	switch {
	case base == "state.json":
		return limitKind{"state.json", LimitState,
			"rebuild it from the plan's log (`taskie recover <plan> --write --force`) or remove it"}
	case strings.HasPrefix(rel, ".taskie/sessions/"):
		return limitKind{"a session file", LimitSession, "remove it; taskie starts the session's memory afresh"}
	case strings.HasPrefix(rel, ".taskie/archive/"):
	case base == "tasks.md":
		return limitKind{"tasks.md", LimitTasks, "split the plan or trim the table"}
	case isTaskFile(base):
		return limitKind{"a task file", LimitTaskFile, "trim it or split the task"}
	}
	return limitKind{"a file taskie reads", LimitDefault, "trim it or move it out of the way"}
}

// LimitFor returns the size limit ReadFile applies to rel.
func LimitFor(rel string) int64 { return limitFor(rel).limit }

// isTaskFile reports a task file name, task-<digits>.md.
func isTaskFile(base string) bool {
	id, ok := strings.CutPrefix(base, "task-")
	if !ok {
		return false
	}
	id, ok = strings.CutSuffix(id, ".md")
	if !ok || id == "" {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tooLarge is the error for rel being over limit bytes.
func (r *Root) tooLarge(rel string, limit int64) error {
	k := limitFor(rel)
	if k.limit != limit {
		return fmt.Errorf("%s: %w: more than %s; taskie reads at most that much of it", r.Path(rel), ErrTooLarge, size(limit))
	}
	return fmt.Errorf("%s: %w: more than %s, the limit for %s; %s", r.Path(rel), ErrTooLarge, size(limit), k.name, k.hint)
}

// size renders a byte count in MiB or KiB when it is a whole number of them.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
