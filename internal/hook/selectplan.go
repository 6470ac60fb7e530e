package hook

import (
	"fmt"
	"time"

	"github.com/taskie-dev/taskie/internal/planchoice"
	"github.com/taskie-dev/taskie/internal/store"
)

// Selection is the plan a stop acts on, and what it says when it acts on
// none although a plan awaits the hook (never silent).
type Selection struct {
	planchoice.Choice
	Message string
	Plans   int // how many plans the project has
	// Stale says, per plan, why an owner's block dated in the future was
	// not taken as mid-turn; the hook logs it.
	Stale map[string]string
}

// SelectPlan gathers the facts of plan choice — every plan's state.json
// (read once, reused by the chosen plan's snapshot), the owners' last hook
// decisions, the plans the agent's own recent words name (the transcript's
// tail scanned once) — and lets planchoice.Choose decide (docs/hook.md).
func SelectPlan(fs *store.Files, in Input, now time.Time, window time.Duration) Selection {
	ids, err := fs.Repo.Plans()
	if err != nil || len(ids) == 0 {
		return Selection{Choice: planchoice.Choice{Reason: planchoice.NoPlans}}
	}
	known := map[string]bool{}
	awaits := map[string]string{} // plan → next phase, for the message
	owners := map[string]*Session{}
	cin := planchoice.Input{SessionID: in.SessionID, Now: now, MidTurnWindow: window}
	for _, id := range ids {
		known[id] = true
		c := planchoice.Candidate{ID: id}
		if len(ids) > 1 { // the age orders plans; one plan needs no order
			c.Mtime = fs.Repo.Mtime(id)
		}
		if s, err := fs.PeekState(id); err == nil {
			c.Owner, c.Pending = s.SessionID, s.IsEnabled() && s.Next() != ""
			awaits[id] = string(s.Next())
		}
		if c.Owner != "" && c.Owner != in.SessionID {
			o, ok := owners[c.Owner]
			if !ok { // one read per owner, not per plan
				o = LoadSession(fs.Root(), c.Owner)
				owners[c.Owner] = o
			}
			if o.Plan == id {
				c.OwnerLastDecision, c.OwnerLastDecisionAt = planchoice.Decision(o.LastDecision), o.LastSeen
			}
		}
		cin.Plans = append(cin.Plans, c)
	}
	var tail []byte
	if in.TranscriptPath != "" {
		tail, _ = planchoice.ReadTail(in.TranscriptPath, planchoice.DefaultTailSize)
	}
	cin.Mentioned = planchoice.AgentMentions(tail, []byte(in.LastAssistantMessage), func(id string) bool { return known[id] })
	c := planchoice.Choose(cin)
	c.Awaits = awaits
	sel := Selection{Choice: c, Message: planchoice.Message(c), Plans: len(ids)}
	for _, id := range c.Future {
		for _, p := range cin.Plans {
			if p.ID == id {
				if sel.Stale == nil {
					sel.Stale = map[string]string{}
				}
				sel.Stale[id] = fmt.Sprintf("plan choice: session %s's last block on plan %q is dated %s, more than %s ahead of this clock: taken as stale, not as mid-turn (a session file from another machine or committed to the repository)",
					p.Owner, id, p.OwnerLastDecisionAt.UTC().Format(time.RFC3339), planchoice.MaxClockSkew)
			}
		}
	}
	return sel
}
