package parallel

import (
	"strconv"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// Task is what scheduling needs to know about one row of tasks.md.
type Task struct {
	ID       domain.TaskID
	Status   string // lower-case: pending, in-progress, done, cancelled, postponed, blocked
	Priority int    // rank: lower runs first (see ParsePriority)
	Deps     []domain.TaskID
	Files    []string
	// Life is the task's lifecycle state, "" when it has none; the caller
	// fills it in (FromTable reads tasks.md only). See StandingOf.
	Life lifecycle.State
	// Retry: the task's latest result failed and it waits for its retry.
	// Its work is under way in the lifecycle (tasks.md says in progress),
	// yet it is ready again while no live lease holds it.
	Retry bool
}

// Priority ranks. Numbers written in tasks.md are ranks too, so "1" is
// high and "5" comes after low.
const (
	PriorityHighest = 0
	PriorityHigh    = 1
	PriorityMedium  = 2
	PriorityLow     = 3
	PriorityLowest  = 4
)

// priorityWords maps the words plans use to ranks.
var priorityWords = map[string]int{
	"critical": PriorityHighest, "urgent": PriorityHighest, "highest": PriorityHighest,
	"high":   PriorityHigh,
	"medium": PriorityMedium, "med": PriorityMedium, "normal": PriorityMedium,
	"low":    PriorityLow,
	"lowest": PriorityLowest,
}

// ParsePriority reads a Priority cell: a word (high, medium, low, …), a
// number ("1") or a P-number ("P1"), ignoring case, spaces and markdown
// emphasis. An empty cell is medium; ok is false for anything else it
// cannot read, which is then medium too.
func ParsePriority(s string) (rank int, ok bool) {
	s = strings.ToLower(strings.Trim(s, " \t*_`"))
	if s == "" {
		return PriorityMedium, true
	}
	if r, found := priorityWords[s]; found {
		return r, true
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(s, "p")); err == nil && n >= 0 {
		return n, true
	}
	return PriorityMedium, false
}

// PriorityName renders a rank for messages: the word for 0–4, else
// "priority N".
func PriorityName(rank int) string {
	switch rank {
	case PriorityHighest:
		return "highest"
	case PriorityHigh:
		return "high"
	case PriorityMedium:
		return "medium"
	case PriorityLow:
		return "low"
	case PriorityLowest:
		return "lowest"
	}
	return "priority " + strconv.Itoa(rank)
}

// closed reports whether t is over for scheduling: done, cancelled,
// completed or abandoned tasks satisfy their dependents and are never
// scheduled (StandingOf).
func closed(t Task) bool { return t.standing().Closed() }
