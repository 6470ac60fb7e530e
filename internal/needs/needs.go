// Package needs computes the "needs you" list: every state of the plans of
// a repository that waits for a human, with since when and the exact
// command or decision that clears it (docs/needs-you.md).
//
// It is pure: the shell gathers plain values (Input) and the clock (now);
// For decides. Every surface — `taskie status`, `taskie query --needs-you`,
// the hooks' messages — shows the same list.
package needs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/planchoice"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// Kind is why an item needs a human.
type Kind string

// The kinds, one per reason (docs/needs-you.md).
const (
	StoreUnreachable Kind = "store_unreachable"  // the shared store cannot be reached
	CloneNotImported Kind = "clone_not_imported" // a shared store holds nothing of this clone's plan
	ConfigUntrusted  Kind = "config_untrusted"   // .taskie/config.json waits for `taskie trust`
	CodexHook        Kind = "codex_hook"         // a Codex hook Codex skips (untrusted, changed)
	ReviewerFailing  Kind = "reviewer_failing"   // the reviewer failed the same way twice in a row
	HumanEscalation  Kind = "human_escalation"   // a task in human_escalation
	NeedsHuman       Kind = "needs_human"        // the review cycle does not converge
	ReviewCap        Kind = "review_cap"         // max_reviews reached in a review cycle
	BudgetSpent      Kind = "budget_spent"       // budget_usd or review_budget used up
	Timeout          Kind = "timeout"            // a task past 150 % of its state's timeout
	ExpiredLease     Kind = "expired_lease"      // a claim whose holder stopped renewing it
	Stalled          Kind = "stalled"            // a review loop without progress, its session gone
	ReviewLock       Kind = "review_lock"        // the review lock held by what a killed hook started
	PlanUnnamed      Kind = "plan_unnamed"       // several plans wait and the session named none
	BlocksIgnored    Kind = "blocks_ignored"     // the session ended its turn without the post-review
	BlockCap         Kind = "block_cap"          // the session's blocks in a row reached block_cap
)

// Severity orders the items: what stops every plan first, then decisions
// a plan waits for, then what may resolve by itself.
type Severity int

// Severities, most urgent first.
const (
	Blocking Severity = iota + 1 // nothing reviews until it is fixed
	Decision                     // a plan waits for a human's decision
	Stuck                        // work stopped moving
)

// severity is each kind's severity.
var severity = map[Kind]Severity{
	StoreUnreachable: Blocking, CloneNotImported: Blocking, ConfigUntrusted: Blocking, CodexHook: Blocking, ReviewerFailing: Blocking, ReviewLock: Blocking,
	HumanEscalation: Decision, NeedsHuman: Decision, ReviewCap: Decision, BudgetSpent: Decision, PlanUnnamed: Decision,
	Timeout: Stuck, ExpiredLease: Stuck, Stalled: Stuck, BlocksIgnored: Stuck, BlockCap: Stuck,
}

// Severity returns the kind's severity.
func (k Kind) Severity() Severity { return severity[k] }

// Reason is an item's kind and its text.
type Reason struct {
	Kind Kind
	Text string
}

// Item is one thing that needs a human.
type Item struct {
	Plan   string        // "" for the repository
	Task   domain.TaskID // 0: the plan (or repository) as a whole
	Reason Reason
	Since  time.Time
	// Clear is the command or decision that clears it.
	Clear string
}

// Input is what the shell gathered: the repository's facts and each plan's.
type Input struct {
	Repo  Repo
	Plans []Plan
	// StallAfter is stall_after: how long a review loop may make no
	// progress while its session is gone; 0 is the default (30 min).
	StallAfter time.Duration
}

// DefaultStallAfter is stall_after's default.
const DefaultStallAfter = domain.DefaultStallAfter

// Repo are the facts about the repository as a whole.
type Repo struct {
	// StoreErr is why the shared store cannot be reached; "" when it can
	// (or there is none).
	StoreErr   string
	StoreSince time.Time
	// Untrusted is what waits for `taskie trust` ("" when nothing does):
	// the settings ignored or the program files changed.
	Untrusted      string
	UntrustedSince time.Time
	// CodexHook is why Codex skips taskie's hooks ("" when it does not),
	// and the command that fixes it.
	CodexHook      string
	CodexHookFix   string
	CodexHookSince time.Time
}

// Plan are one plan's facts.
type Plan struct {
	ID string
	// PlanFlag is " --plan ID" when the repository has several plans.
	PlanFlag string
	// Tasks are the lifecycle records; Timeouts the configured timeouts.
	Tasks    []lifecycle.Task
	Timeouts lifecycle.Timeouts
	// Cycle is the review cycle in progress.
	Cycle Cycle
	// Budget is what the plan's reviews cost and may cost.
	Budget Budget
	// Claims are the claims on the plan's tasks; ClaimsNow is the
	// coordination clock they are read at (zero: now).
	Claims    []parallel.Claim
	ClaimsNow time.Time
	// Hook is the hook's last decisions on the plan, oldest first (the
	// last two are enough).
	Hook []HookDecision
	// NotImported is how many of the clone's Events plan events a shared
	// store lacks (`taskie store import` adds them); 0 when none or no
	// shared store.
	NotImported, Events int
	// BlockOpen: the review block the driving session got last is still
	// unanswered (the plan is where it was at that block).
	BlockOpen bool
	// Lock is the review lock's holder when its hook is gone; nil when
	// the lock is free, or held by a live hook.
	Lock *OrphanLock
	// LastProgress is the time of the plan's last event; SessionSeen when
	// the session driving it last stopped (zero: none known).
	LastProgress time.Time
	SessionSeen  time.Time
	// Paused: automation is off for the plan (nothing is expected to move).
	Paused bool
}

// Cycle is the review cycle a plan is in.
type Cycle struct {
	// Review is the review phase due or running ("" when no cycle).
	Review domain.Phase
	// Iteration is the reviews run in the cycle; MaxReviews the cap.
	Iteration, MaxReviews int
	// NextIsReview: the next stop would run a review (next_phase is one).
	NextIsReview bool
	// NeedsHuman is state.json's needs_human; Why says why when known.
	NeedsHuman bool
	Why        string
	// Since is when the cycle last changed (the plan's last commit).
	Since time.Time
	// MoveOn is the phase `taskie set next_phase` skips to.
	MoveOn domain.Phase
}

// Budget is what the plan's reviews cost against its budgets.
type Budget struct {
	Settings ledger.Settings
	SpentUSD float64
	LastTook time.Duration
	// Spent is what the plan's reviews used (its USD, when 0, is SpentUSD);
	// TaskSpent what those of Task, the task under review, used.
	Spent     ledger.Spent
	Task      string
	TaskSpent ledger.Spent
	// Known: the figures were read (a hook may skip the log scan).
	Known bool
	Since time.Time
}

// OrphanLock is the lease of a review lock whose hook was killed while
// something it started (the reviewer, a child of it) lives on.
type OrphanLock struct {
	HookPID, PGID     int
	Started, Deadline time.Time
}

// HookDecision is one decision of the plan's hook log.
type HookDecision struct {
	Time time.Time
	Hook string // "stop", "session-start"
	// Decision is "block" or "allow"; Why the hook's reason
	// ("post-review-owed", "block-cap", "plan choice: several-pending: …").
	Decision, Why string
	// Failure is the reviewer's failure kind ("exit", "timeout", …) and
	// Detail its first line; both "" when the decision was no failure.
	Failure, Detail string
	// Log is the kept reviewer output.
	Log string
}

// For returns what needs a human, most severe first and, within a
// severity, oldest first.
func For(in Input, now time.Time) []Item {
	var out []Item
	r := in.Repo
	if r.StoreErr != "" {
		out = append(out, Item{Reason: Reason{StoreUnreachable, "the shared store cannot be reached: " + r.StoreErr},
			Since: or(r.StoreSince, now), Clear: "start the database or fix TASKIE_DATABASE_URL / \"store\" in .taskie/config.json; `taskie store status` checks"})
	}
	if r.Untrusted != "" {
		out = append(out, Item{Reason: Reason{ConfigUntrusted, r.Untrusted}, Since: or(r.UntrustedSince, now),
			Clear: "read .taskie/config.json, then `taskie trust`"})
	}
	if r.CodexHook != "" {
		out = append(out, Item{Reason: Reason{CodexHook, r.CodexHook}, Since: or(r.CodexHookSince, now),
			Clear: cmp.Or(r.CodexHookFix, "`taskie install codex`, or trust the hooks in Codex with /hooks")})
	}
	stall := cmp.Or(in.StallAfter, DefaultStallAfter)
	for _, p := range in.Plans {
		out = append(out, plan(p, stall, now)...)
	}
	slices.SortStableFunc(out, compare)
	return out
}

// compare orders by severity, then since, then plan, task and kind.
func compare(a, b Item) int {
	return cmp.Or(cmp.Compare(a.Reason.Kind.Severity(), b.Reason.Kind.Severity()), a.Since.Compare(b.Since),
		cmp.Compare(a.Plan, b.Plan), cmp.Compare(a.Task, b.Task), cmp.Compare(a.Reason.Kind, b.Reason.Kind))
}

func or(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}

// plan returns one plan's items, step by step.
func plan(p Plan, stall time.Duration, now time.Time) []Item {
	b := &items{p: p, now: now}
	b.notImported()
	b.reviewLock()
	b.hookStalls()
	b.reviewerFailing()
	b.escalated()
	b.cycle()
	b.budget()
	b.timeouts()
	b.expiredLeases()
	b.stalledLoop(stall)
	return b.out
}

// items collects one plan's items.
type items struct {
	p       Plan
	now     time.Time
	out     []Item
	stalled bool // said by an item of its own: no "stalled" besides
}

func (b *items) add(task domain.TaskID, k Kind, since time.Time, clear, format string, args ...any) {
	b.out = append(b.out, Item{Plan: b.p.ID, Task: task, Reason: Reason{k, fmt.Sprintf(format, args...)}, Since: or(since, b.now), Clear: clear})
}

// notImported: this clone's events the shared store lacks.
func (b *items) notImported() {
	p := b.p
	if p.NotImported > 0 {
		b.add(0, CloneNotImported, time.Time{}, "`taskie store import "+p.ID+"`",
			"%d of this clone's %d events of plan %s are not in the shared store: other clones do not see them, and the views of the plan show this clone's own log",
			p.NotImported, max(p.Events, p.NotImported), p.ID)
	}
}

// reviewLock: a review lock held by a killed hook's reviewer.
func (b *items) reviewLock() {
	p, l := b.p, b.p.Lock
	if l == nil {
		return
	}
	b.stalled = true
	if b.now.Before(l.Deadline) {
		b.add(0, ReviewLock, l.Started, fmt.Sprintf("wait for its deadline (the next stop then ends it and reviews), or end it now: `kill -- -%d`", l.PGID),
			"the review lock of plan %s is held by a reviewer whose hook (pid %d) was killed: every stop says a review is already running, and none runs until its deadline, %s",
			p.ID, l.HookPID, l.Deadline.UTC().Format(dateMinute))
		return
	}
	b.add(0, ReviewLock, l.Started, "`taskie continue"+p.PlanFlag+"` ends it (or the next stop does)",
		"the review lock of plan %s is held by a reviewer whose hook (pid %d) was killed: every stop says a review is already running; its deadline passed at %s",
		p.ID, l.HookPID, l.Deadline.UTC().Format(dateMinute))
}

// hookStalls: the last Stop decision says the loop waits for someone.
func (b *items) hookStalls() {
	p := b.p
	last, ok := lastStop(p.Hook)
	if !ok || p.Paused {
		return
	}
	switch {
	case strings.HasPrefix(last.Why, "plan choice: "+string(planchoice.SeveralPending)+":"):
		b.add(0, PlanUnnamed, last.Time, "in the session, name it: `taskie status --plan "+p.ID+"`, then end the turn again (or `taskie pause --plan "+p.ID+"`)",
			"plan %s waits for the hook with other plans and the session named none of them, so none is driven", p.ID)
	case (last.Why == string(workflow.RPostOwed) || last.Why == string(workflow.RNoProgress)) && p.BlockOpen && p.Cycle.Review != "":
		b.stalled = true
		post := domain.PostReview(p.Cycle.Review)
		b.add(0, BlocksIgnored, last.Time, fmt.Sprintf("tell the session to do the %s and record it with `taskie done %s%s`, or `taskie pause%s`", post, post, p.PlanFlag, p.PlanFlag),
			"the session ended its turn without addressing the %s's block (no post-review recorded), so no review runs", p.Cycle.Review)
	case last.Why == string(workflow.RBlockCap) && p.Cycle.Review != "":
		b.stalled = true
		b.add(0, BlockCap, last.Time, `send the session a new prompt (its next stop reviews again), or raise "block_cap" in .taskie/config.json`,
			"the session reached its cap of blocks in a row (block_cap), so its %s loop stopped until a new prompt", p.Cycle.Review)
	}
}

// reviewerFailing: the reviewer failed twice in a row.
func (b *items) reviewerFailing() {
	f, ok := repeatedFailure(b.p.Hook)
	if !ok {
		return
	}
	what := "the reviewer failed twice in a row (" + f.Failure + "): " + f.Detail
	if f.Log != "" {
		what += " (output in " + f.Log + ")"
	}
	b.add(0, ReviewerFailing, f.Time, "fix the reviewer (`taskie doctor`: login, missing CLI), then end a turn to retry", "%s", what)
}

// escalated: the tasks escalated to a human.
func (b *items) escalated() {
	p := b.p
	for _, t := range p.Tasks {
		if t.State != lifecycle.HumanEscalation {
			continue
		}
		from := ""
		if t.EscalatedFrom != "" {
			from = " (from " + string(t.EscalatedFrom) + ")"
		}
		b.add(t.ID, HumanEscalation, t.Since, fmt.Sprintf("decide, then `taskie task resolve %s --actor human%s` (or `taskie task abandon %s --actor human%s`)", t.ID, p.PlanFlag, t.ID, p.PlanFlag),
			"task %s is escalated to a human%s", t.ID, from)
	}
}

// cycle: a review cycle stopped for a human or at its cap.
func (b *items) cycle() {
	p, c := b.p, b.p.Cycle
	switch {
	case c.NeedsHuman:
		why := cmp.Or(c.Why, "the review cycle does not converge")
		b.add(0, NeedsHuman, c.Since, "read `taskie findings"+p.PlanFlag+"`, decide, then `taskie resume"+p.PlanFlag+"`",
			"%s: %s needs a human", why, cmp.Or(string(c.Review), "the review cycle"))
	case c.NextIsReview && c.MaxReviews > 0 && c.Iteration >= c.MaxReviews && !p.Paused:
		b.add(0, ReviewCap, c.Since, fmt.Sprintf("`taskie set max_reviews %d%s` to review again, or `taskie set next_phase %s%s` to move on", c.MaxReviews+4, p.PlanFlag, c.MoveOn, p.PlanFlag),
			"%s reached its review cap (%d of %d)", c.Review, c.Iteration, c.MaxReviews)
	}
}

// budget: a review budget is spent.
func (b *items) budget() {
	bu := b.p.Budget
	if !bu.Known {
		return
	}
	spent := bu.Spent
	if spent.USD == 0 {
		spent.USD = bu.SpentUSD
	}
	if o := ledger.CheckBudgets(bu.Settings, spent, bu.Task, bu.TaskSpent, bu.LastTook); o != nil {
		b.add(0, BudgetSpent, bu.Since, "raise "+strings.Join(quoted(o.Keys()), " or ")+" in .taskie/config.json, or move on without reviews",
			"the review budget is spent: %s", o.String())
	}
}

// timeouts: the tasks past their escalation timeout.
func (b *items) timeouts() {
	p := b.p
	for _, t := range p.Tasks {
		// A pending task waits its turn; `taskie query --stuck` lists it.
		if t.State == lifecycle.Pending || t.State.Terminal() || t.State == lifecycle.HumanEscalation {
			continue
		}
		if st := lifecycle.Status(t, b.now, p.Timeouts); st.Level >= lifecycle.LevelEscalate {
			b.add(t.ID, Timeout, t.Since.Add(st.Limit*3/2), fmt.Sprintf("`taskie task escalate %s%s`, or move it on (`taskie task move %s …`)", t.ID, p.PlanFlag, t.ID),
				"task %s has been in %s for %s, %d %% of its timeout of %s", t.ID, t.State, domain.ShortDuration(st.Elapsed), int(st.Elapsed*100/st.Limit), domain.ShortDuration(st.Limit))
		}
	}
}

// expiredLeases: claims whose agent stopped renewing them.
func (b *items) expiredLeases() {
	p := b.p
	claimsNow := or(p.ClaimsNow, b.now)
	for _, cl := range p.Claims {
		if cl.Endless() || cl.Live(claimsNow) {
			continue
		}
		b.add(cl.Task, ExpiredLease, cl.Expires, fmt.Sprintf("`taskie claim %s --as AGENT%s` takes it over, or `taskie release %s --force%s` frees it", cl.Task, p.PlanFlag, cl.Task, p.PlanFlag),
			"task %s's lease held by %s expired %s ago: its agent stopped renewing it", cl.Task, cl.Agent, domain.ShortDuration(claimsNow.Sub(cl.Expires)))
	}
}

// stalledLoop: a review loop with no progress and no session, unless an
// item above already says why.
func (b *items) stalledLoop(stall time.Duration) {
	p, c := b.p, b.p.Cycle
	if b.stalled || p.Paused || c.NeedsHuman || c.Review == "" || p.LastProgress.IsZero() {
		return
	}
	quiet := b.now.Sub(p.LastProgress)
	gone := p.SessionSeen.IsZero() || b.now.Sub(p.SessionSeen) > stall
	if quiet > stall && gone {
		b.add(0, Stalled, p.LastProgress.Add(stall), "start a session on the plan (`taskie continue"+p.PlanFlag+"` says what is next), or `taskie pause"+p.PlanFlag+"`",
			"the %s loop made no progress for %s and its session is gone", c.Review, domain.ShortDuration(quiet))
	}
}

// dateMinute is how an item writes a time of day with its date.
const dateMinute = "2006-01-02 15:04 UTC"

// lastStop is the last decision of the Stop hook.
func lastStop(hs []HookDecision) (HookDecision, bool) {
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Hook == "stop" {
			return hs[i], true
		}
	}
	return HookDecision{}, false
}

// repeatedFailure returns the first of the last two hook decisions when
// both are the same reviewer failure.
func repeatedFailure(hs []HookDecision) (HookDecision, bool) {
	if len(hs) < 2 {
		return HookDecision{}, false
	}
	a, b := hs[len(hs)-2], hs[len(hs)-1]
	if a.Failure == "" || a.Failure != b.Failure || withoutNumbers(a.Detail) != withoutNumbers(b.Detail) {
		return HookDecision{}, false
	}
	a.Log = b.Log
	return a, true
}

// withoutNumbers blanks the figures of a failure's first line, so that two
// timeouts "stopped after 1.004s" and "stopped after 1.001s" are the same
// failure.
func withoutNumbers(s string) string {
	var b strings.Builder
	digits := false
	for _, r := range s {
		if (r >= '0' && r <= '9') || (digits && r == '.') {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// Line is an item in one short line, for the hooks' messages.
func (it Item) Line() string {
	return "needs you: " + it.Reason.Text + " — " + strings.TrimSuffix(it.Clear, ".")
}

// quoted puts each setting name in double quotes.
func quoted(keys []string) []string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = `"` + k + `"`
	}
	return q
}
