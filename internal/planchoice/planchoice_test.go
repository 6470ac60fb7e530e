package planchoice

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// at is a time d before now.
func at(d time.Duration) time.Time { return now.Add(-d) }

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name      string
		session   string
		plans     []Candidate
		mentioned []string
		window    time.Duration
		want      Choice
	}{
		{
			name:    "claude -p per turn: the next session takes the plan the last one allowed",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionAllow, OwnerLastDecisionAt: at(2 * time.Minute)}},
			want:    Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A"},
		},
		{
			name:    "/clear: a new session id takes the plan its predecessor allowed a minute ago",
			session: "A2",
			plans: []Candidate{
				{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionAllow, OwnerLastDecisionAt: at(time.Minute), Mtime: at(time.Minute)},
				{ID: "old", Mtime: at(48 * time.Hour)},
			},
			want: Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A"},
		},
		{
			name:    "a session that claimed the plan but never stopped owns nothing another cannot take",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A"}},
			want:    Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A"},
		},
		{
			name:    "two sessions on two plans: A keeps its own",
			session: "A",
			plans:   twoSessionsTwoPlans,
			want:    Choice{Plan: "x", Reason: Owned},
		},
		{
			name:    "two sessions on two plans: B keeps its own",
			session: "B",
			plans:   twoSessionsTwoPlans,
			want:    Choice{Plan: "y", Reason: Owned},
		},
		{
			name:    "two sessions on two plans: A's own plan named, B's plan not driven",
			session: "A",
			plans: []Candidate{
				{ID: "x", Owner: "A", OwnerLastDecision: DecisionAllow, OwnerLastDecisionAt: at(time.Hour)},
				{ID: "y", Pending: true, Owner: "B", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute)},
			},
			mentioned: []string{"x"},
			want:      Choice{Plan: "x", Reason: Mentioned},
		},
		{
			name:    "two sessions on one plan: B does not drive it while A is mid-turn",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute)}},
			want:    Choice{Reason: MidTurnElsewhere, Candidates: []string{"api"}, Blocker: "A", BlockedAgo: time.Minute},
		},
		{
			name:    "A blocked 30 minutes ago, over the window: B takes the plan",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(30 * time.Minute)}},
			want:    Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A"},
		},
		{
			name:    "the window is the caller's reviewer timeout",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(10 * time.Minute)}},
			window:  5 * time.Minute,
			want:    Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A"},
		},
		{
			name:    "the one free pending plan is chosen beside a plan another session is mid-turn on",
			session: "C",
			plans: []Candidate{
				{ID: "busy", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute), Mtime: at(time.Minute)},
				{ID: "free", Pending: true, Owner: "B", OwnerLastDecision: DecisionAllow, OwnerLastDecisionAt: at(time.Minute), Mtime: at(time.Hour)},
			},
			want: Choice{Plan: "free", Reason: OnlyPending, Takeover: true, PreviousOwner: "B"},
		},
		{
			name:    "a mention takes the plan over even from a session mid-turn on it",
			session: "B",
			plans: []Candidate{
				{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute)},
				{ID: "web", Pending: true},
			},
			mentioned: []string{"web", "api"},
			want:      Choice{Plan: "api", Reason: Mentioned, Takeover: true, PreviousOwner: "A"},
		},
		{
			name:    "own pending plan beats a mention",
			session: "B",
			plans: []Candidate{
				{ID: "mine", Pending: true, Owner: "B", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute)},
				{ID: "named", Pending: true},
			},
			mentioned: []string{"named"},
			want:      Choice{Plan: "mine", Reason: Owned},
		},
		{
			name:    "the newest of several own pending plans",
			session: "B",
			plans: []Candidate{
				{ID: "older", Pending: true, Owner: "B", Mtime: at(time.Hour)},
				{ID: "newer", Pending: true, Owner: "B", Mtime: at(time.Minute)},
			},
			want: Choice{Plan: "newer", Reason: Owned},
		},
		{
			name:      "mentions of plans that do not exist are skipped",
			session:   "B",
			plans:     []Candidate{{ID: "api"}, {ID: "web", Pending: true}},
			mentioned: []string{"api", "gone"},
			want:      Choice{Plan: "api", Reason: Mentioned, Candidates: []string{"web"}},
		},
		{
			name:    "several pending plans and no mention: none is chosen, all are listed",
			session: "C",
			plans: []Candidate{
				{ID: "a", Pending: true, Mtime: at(3 * time.Hour)},
				{ID: "b", Pending: true, Owner: "A", OwnerLastDecision: DecisionAllow, OwnerLastDecisionAt: at(time.Hour), Mtime: at(time.Minute)},
				{ID: "c", Pending: true, Owner: "B", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute)},
				{ID: "d", Mtime: now},
			},
			want: Choice{Reason: SeveralPending, Candidates: []string{"b", "a"}},
		},
		{
			name:    "no pending plan: the newest is validated",
			session: "C",
			plans:   []Candidate{{ID: "a", Mtime: at(time.Hour)}, {ID: "b", Owner: "A", Mtime: at(time.Minute)}},
			want:    Choice{Plan: "b", Reason: NewestForValidation},
		},
		{
			name:    "no pending plan: the session's own plan is validated first",
			session: "C",
			plans:   []Candidate{{ID: "a", Owner: "C", Mtime: at(time.Hour)}, {ID: "b", Mtime: at(time.Minute)}},
			want:    Choice{Plan: "a", Reason: NewestForValidation},
		},
		{
			name:    "no pending plan: a plan another session is mid-turn on is not validated",
			session: "C",
			plans: []Candidate{
				{ID: "a", Mtime: at(time.Hour)},
				{ID: "b", Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute), Mtime: at(time.Minute)},
			},
			want: Choice{Plan: "a", Reason: NewestForValidation},
		},
		{
			name:    "no pending plan and every plan mid-turn elsewhere: nothing",
			session: "C",
			plans:   []Candidate{{ID: "b", Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute)}},
			want:    Choice{Reason: NoFreePlan},
		},
		{
			name:    "a block dated a year ahead (a committed session file) is stale: B takes the plan",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(-365 * 24 * time.Hour)}},
			want:    Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A", Future: []string{"api"}},
		},
		{
			name:    "a block dated two minutes ahead is beyond the clock skew allowed",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(-2 * time.Minute)}},
			want:    Choice{Plan: "api", Reason: OnlyPending, Takeover: true, PreviousOwner: "A", Future: []string{"api"}},
		},
		{
			name:    "a block dated 30 seconds ahead is clock skew: A is still mid-turn",
			session: "B",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(-30 * time.Second)}},
			want:    Choice{Reason: MidTurnElsewhere, Candidates: []string{"api"}, Blocker: "A", BlockedAgo: -30 * time.Second},
		},
		{
			name:    "a future-dated block on a plan not pending is not validated around",
			session: "C",
			plans:   []Candidate{{ID: "b", Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(-time.Hour)}},
			want:    Choice{Plan: "b", Reason: NewestForValidation, Future: []string{"b"}},
		},
		{
			name:    "the session's own future-dated block is its own: not listed",
			session: "A",
			plans:   []Candidate{{ID: "api", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(-time.Hour)}},
			want:    Choice{Plan: "api", Reason: Owned},
		},
		{
			name: "no plans",
			want: Choice{Reason: NoPlans},
		},
		{
			name:  "no session id: an unowned pending plan is claimed, not taken over",
			plans: []Candidate{{ID: "api", Pending: true}},
			want:  Choice{Plan: "api", Reason: OnlyPending},
		},
		{
			name:  "no session id owns nothing, not even plans without an owner",
			plans: []Candidate{{ID: "a", Pending: true}, {ID: "b", Pending: true}},
			want:  Choice{Reason: SeveralPending, Candidates: []string{"a", "b"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{SessionID: tc.session, Plans: tc.plans, Mentioned: tc.mentioned, Now: now, MidTurnWindow: tc.window}
			got := Choose(in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Choose (-want +got):\n%s", diff)
			}
			checkNeverSilent(t, in, got)
		})
	}
}

var twoSessionsTwoPlans = []Candidate{
	{ID: "x", Pending: true, Owner: "A", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(time.Minute), Mtime: at(time.Minute)},
	{ID: "y", Pending: true, Owner: "B", OwnerLastDecision: DecisionBlock, OwnerLastDecisionAt: at(2 * time.Minute), Mtime: at(2 * time.Minute)},
}

// checkNeverSilent asserts docs/hook.md's "never silent": when a plan is pending
// and none is chosen, the user is told why.
func checkNeverSilent(t *testing.T, in Input, c Choice) {
	t.Helper()
	pending := false
	for _, p := range in.Plans {
		pending = pending || p.Pending
	}
	if pending && c.Plan == "" && Message(c) == "" {
		t.Errorf("a plan is pending, none was chosen (%s), and Message is empty", c.Reason)
	}
}

// TestChooseInvariants checks random inputs against the rules that must
// always hold.
func TestChooseInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sessions := []string{"", "A", "B", "C"}
	decisions := []Decision{DecisionNone, DecisionAllow, DecisionBlock}
	for range 5000 {
		in := Input{SessionID: sessions[r.IntN(len(sessions))], Now: now}
		for i := range r.IntN(5) {
			in.Plans = append(in.Plans, Candidate{
				ID: string(rune('a' + i)), Pending: r.IntN(2) == 0,
				Owner: sessions[r.IntN(len(sessions))], OwnerLastDecision: decisions[r.IntN(len(decisions))],
				OwnerLastDecisionAt: at(time.Duration(r.IntN(60)) * time.Minute), Mtime: at(time.Duration(r.IntN(5)) * time.Hour),
			})
			if r.IntN(4) == 0 {
				in.Mentioned = append(in.Mentioned, string(rune('a'+i)))
			}
		}
		c := Choose(in)
		checkNeverSilent(t, in, c)
		checkChoice(t, in, c)
	}
}

func checkChoice(t *testing.T, in Input, c Choice) {
	t.Helper()
	var chosen *Candidate
	for i := range in.Plans {
		if in.Plans[i].ID == c.Plan {
			chosen = &in.Plans[i]
		}
	}
	switch {
	case c.Plan == "" && chosen == nil:
		return
	case chosen == nil:
		t.Fatalf("chose %q, not among the plans: %+v", c.Plan, in)
	case c.Reason != Mentioned && c.Reason != Owned && in.midTurnElsewhere(*chosen):
		t.Errorf("chose %q (%s) while another session is mid-turn on it: %+v", c.Plan, c.Reason, in)
	case c.Takeover != (chosen.Owner != "" && chosen.Owner != in.SessionID && (c.Reason == Mentioned || c.Reason == OnlyPending)):
		t.Errorf("Takeover %v for %q (%s): %+v", c.Takeover, c.Plan, c.Reason, in)
	}
}
