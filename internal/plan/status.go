package plan

import "strings"

// Task statuses, canonical lower-case spelling.
const (
	StatusPending    = "pending"
	StatusInProgress = "in-progress"
	StatusDone       = "done"
	StatusCancelled  = "cancelled"
	StatusPostponed  = "postponed"
	StatusBlocked    = "blocked"
)

// statuses lists the known statuses in the order used in messages.
var statuses = []string{
	StatusPending, StatusInProgress, StatusDone,
	StatusCancelled, StatusPostponed, StatusBlocked,
}

// KnownStatus reports whether s is a known status; case and surrounding
// spaces are ignored because tasks.md is hand-edited.
func KnownStatus(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, k := range statuses {
		if s == k {
			return true
		}
	}
	return false
}
