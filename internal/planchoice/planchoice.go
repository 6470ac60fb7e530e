// Package planchoice decides which plan a Stop (or SessionStart) hook acts
// on (docs/hook.md), and finds the plans a session's transcript names.
//
// Choose is pure: the caller reads state.json, the session memories and the
// transcript, and hands Choose the facts. Message renders what the user is
// told when a plan awaits the hook and the hook does not act on it.
package planchoice

import (
	"cmp"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// DefaultMidTurnWindow is how long after a block a session still counts as
// mid-turn on its plan: the reviewer timeout's default (docs/configuration.md).
const DefaultMidTurnWindow = domain.DefaultReviewerTimeout

// MaxClockSkew is how far in the future a session's last decision may be
// dated and still count: a little skew between machines sharing a
// repository is normal, a date further ahead is a committed or forged
// session file, and trusting it would keep the plan mid-turn forever.
const MaxClockSkew = time.Minute

// Decision is a session's last hook decision on a plan.
type Decision string

// The decisions a hook records.
const (
	DecisionNone  Decision = ""
	DecisionAllow Decision = "allow"
	DecisionBlock Decision = "block"
)

// Candidate is what Choose needs to know about one plan.
type Candidate struct {
	ID string
	// Pending reports that automation awaits the hook on the plan:
	// next_phase is set and the plan is not paused.
	Pending bool
	// Owner is the session_id recorded in the plan's state.json.
	Owner string
	// OwnerLastDecision is the owner's last hook decision on this plan, and
	// OwnerLastDecisionAt when it was made.
	OwnerLastDecision   Decision
	OwnerLastDecisionAt time.Time
	// Mtime orders plans from newest to oldest.
	Mtime time.Time
}

// Input is everything Choose decides from.
type Input struct {
	// SessionID is the session whose hook runs; it may be empty.
	SessionID string
	Plans     []Candidate
	// Mentioned lists the plan ids the session's recent words name, the
	// most recent last (see Mentions).
	Mentioned []string
	Now       time.Time
	// MidTurnWindow is how long a block keeps its session mid-turn on the
	// plan (the reviewer timeout); zero means DefaultMidTurnWindow.
	MidTurnWindow time.Duration
}

// ReasonCode says why Choose chose a plan, or none.
type ReasonCode string

// The reasons, in the order Choose tries them.
const (
	// NoPlans: the repository has no plan.
	NoPlans ReasonCode = "no-plans"
	// Owned: a pending plan this session owns (the newest if several).
	Owned ReasonCode = "owned"
	// Mentioned: the plan the session's recent words name last.
	Mentioned ReasonCode = "mentioned"
	// OnlyPending: the one pending plan no other session is mid-turn on.
	OnlyPending ReasonCode = "only-pending"
	// SeveralPending: several pending plans could be driven and the session
	// named none of them; Candidates lists them and no plan is chosen.
	SeveralPending ReasonCode = "several-pending"
	// MidTurnElsewhere: every pending plan has another session mid-turn on
	// it; Candidates lists them, Blocker is the first one's session, and no
	// plan is chosen.
	MidTurnElsewhere ReasonCode = "mid-turn-elsewhere"
	// NewestForValidation: no plan is pending; the newest plan (this
	// session's own first) is chosen to be validated only.
	NewestForValidation ReasonCode = "newest-for-validation"
	// NoFreePlan: no plan is pending and another session is mid-turn on
	// every plan, so there is nothing to validate either.
	NoFreePlan ReasonCode = "no-free-plan"
)

// Choice is the plan the hook acts on, and why.
type Choice struct {
	// Plan is the chosen plan's id, or "" for none.
	Plan   string
	Reason ReasonCode
	// Takeover reports that the session takes the plan over from
	// PreviousOwner; the caller records it (event OWNER_CHANGED) when it
	// acts on the plan.
	Takeover      bool
	PreviousOwner string
	// Candidates lists pending plans the choice leaves aside, newest first:
	// the several candidates (SeveralPending), the plans other sessions are
	// mid-turn on (MidTurnElsewhere), or the plans that await the hook while
	// the session works on a plan that does not (Mentioned).
	Candidates []string
	// Blocker is the session mid-turn on Candidates[0] (MidTurnElsewhere),
	// and BlockedAgo how long ago its last block was.
	Blocker    string
	BlockedAgo time.Duration
	// Awaits maps a candidate's id to its next phase, for Message to say
	// what each plan waits for (filled by the caller, which read the
	// plans' states).
	Awaits map[string]string
	// Future lists the plans whose owner's last block is dated more than
	// MaxClockSkew ahead of now: not trusted as mid-turn (the caller logs
	// it).
	Future []string
}

// Choose picks the plan a session's hook acts on (docs/hook.md):
//  1. a pending plan this session owns, the newest if several;
//  2. else the plan the session's recent words name last, even if another
//     session owns it (naming a plan takes it over);
//  3. else, when exactly one pending plan has no other session mid-turn on
//     it, that plan; a session whose turn ended owns nothing another
//     session cannot take;
//  4. else, with no pending plan, the newest plan, for validation only.
//
// When a plan is pending and none is chosen, the reason says why and
// Message says what to do.
func Choose(in Input) Choice {
	c := choose(in)
	for _, p := range in.Plans {
		if in.blockedInFuture(p) {
			c.Future = append(c.Future, p.ID)
		}
	}
	slices.Sort(c.Future)
	return c
}

func choose(in Input) Choice {
	if len(in.Plans) == 0 {
		return Choice{Reason: NoPlans}
	}
	plans := slices.Clone(in.Plans)
	slices.SortStableFunc(plans, newestFirst)
	if c, ok := ownPending(in, plans); ok {
		return Choice{Plan: c.ID, Reason: Owned}
	}
	if c, ok := lastMentioned(in, plans); ok {
		ch := takeChoice(in, c, Mentioned)
		if !c.Pending {
			ch.Candidates = ids(freePending(in, plans))
		}
		return ch
	}
	return choosePending(in, plans)
}

// choosePending applies rules 3 and 4 to plans sorted newest first.
func choosePending(in Input, plans []Candidate) Choice {
	free := freePending(in, plans)
	switch {
	case len(free) == 1:
		return takeChoice(in, free[0], OnlyPending)
	case len(free) > 1:
		return Choice{Reason: SeveralPending, Candidates: ids(free)}
	}
	var busy []Candidate
	for _, c := range plans {
		if c.Pending {
			busy = append(busy, c)
		}
	}
	if len(busy) > 0 {
		return Choice{Reason: MidTurnElsewhere, Candidates: ids(busy),
			Blocker: busy[0].Owner, BlockedAgo: in.Now.Sub(busy[0].OwnerLastDecisionAt)}
	}
	return newestForValidation(in, plans)
}

// newestForValidation prefers the session's own plan, then the newest plan
// no other session is mid-turn on.
func newestForValidation(in Input, plans []Candidate) Choice {
	for _, c := range plans {
		if in.owns(c) {
			return Choice{Plan: c.ID, Reason: NewestForValidation}
		}
	}
	for _, c := range plans {
		if !in.midTurnElsewhere(c) {
			return Choice{Plan: c.ID, Reason: NewestForValidation}
		}
	}
	return Choice{Reason: NoFreePlan}
}

func ownPending(in Input, plans []Candidate) (Candidate, bool) {
	for _, c := range plans {
		if c.Pending && in.owns(c) {
			return c, true
		}
	}
	return Candidate{}, false
}

func lastMentioned(in Input, plans []Candidate) (Candidate, bool) {
	for i := len(in.Mentioned) - 1; i >= 0; i-- {
		for _, c := range plans {
			if c.ID == in.Mentioned[i] {
				return c, true
			}
		}
	}
	return Candidate{}, false
}

// freePending returns the pending plans no other session is mid-turn on.
func freePending(in Input, plans []Candidate) []Candidate {
	var free []Candidate
	for _, c := range plans {
		if c.Pending && !in.midTurnElsewhere(c) {
			free = append(free, c)
		}
	}
	return free
}

func takeChoice(in Input, c Candidate, r ReasonCode) Choice {
	ch := Choice{Plan: c.ID, Reason: r}
	if c.Owner != "" && !in.owns(c) {
		ch.Takeover, ch.PreviousOwner = true, c.Owner
	}
	return ch
}

func (in Input) owns(c Candidate) bool {
	return in.SessionID != "" && c.Owner == in.SessionID
}

// midTurnElsewhere reports whether another session's last hook decision on
// the plan was a block less than the window ago.
func (in Input) midTurnElsewhere(c Candidate) bool {
	if c.Owner == "" || in.owns(c) || c.OwnerLastDecision != DecisionBlock || in.blockedInFuture(c) {
		return false
	}
	window := in.MidTurnWindow
	if window <= 0 {
		window = DefaultMidTurnWindow
	}
	return in.Now.Sub(c.OwnerLastDecisionAt) < window
}

// blockedInFuture reports that another session's last block on the plan
// is dated beyond the clock skew allowed: such a date proves nothing about
// a live turn, so the block is taken as stale.
func (in Input) blockedInFuture(c Candidate) bool {
	return c.Owner != "" && !in.owns(c) && c.OwnerLastDecision == DecisionBlock &&
		c.OwnerLastDecisionAt.After(in.Now.Add(MaxClockSkew))
}

func newestFirst(a, b Candidate) int {
	if c := b.Mtime.Compare(a.Mtime); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func ids(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}
