package history

import (
	"strconv"

	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// The lifecycle's event kinds (lifecycle.Kind), as the log writes them.
const (
	lcCreated    = string(lifecycle.KindCreated)
	lcTransition = string(lifecycle.KindTransition)
	lcFailure    = string(lifecycle.KindFailure)
	lcCTO        = string(lifecycle.KindCTO)
	lcEscalated  = string(lifecycle.KindEscalated)
	lcRecovery   = string(lifecycle.KindRecovery)
	lcTimeout    = string(lifecycle.KindTimeout)
)

// lifecycleMessage renders a lifecycle effect: "in_progress → testing by
// hook: code review started", "failure 2 in quality_review by hook: …",
// "retry cto_intervention → testing by cto (CTO attempt 1): …".
func lifecycleMessage(e eventText, m metaView) string {
	var msg string
	switch e.event {
	case lcCreated:
		msg = "created in " + orDash(e.to)
	case lcTimeout:
		msg = "timeout " + orDash(m.str("level")) + " in " + orDash(e.from)
	case lcFailure:
		msg = "failure in " + orDash(e.from)
		if n, ok := m.num("failures"); ok && n > 0 {
			msg = "failure " + strconv.Itoa(int(n)) + " in " + orDash(e.from)
		}
	default:
		msg = orDash(e.from) + " → " + orDash(e.to)
		if a := m.str("action"); a != "" {
			msg = a + " " + msg
		}
	}
	if e.actor != "" {
		msg += " by " + e.actor
	}
	if n, ok := m.num("cto_attempts"); ok && n > 0 {
		msg += " (CTO attempt " + strconv.Itoa(int(n)) + ")"
	}
	if note := m.str("note"); note != "" && note != e.reason {
		msg += " [note: " + oneLine(note, 120) + "]"
	}
	if e.reason != "" {
		msg += ": " + oneLine(e.reason, 120)
	}
	return msg
}
