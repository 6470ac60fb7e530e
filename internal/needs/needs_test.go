package needs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
)

var (
	t0  = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now = t0.Add(3 * time.Hour)
)

func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// got is what a test compares: kind, plan, task, since; the texts are
// checked apart.
type got struct {
	Kind  Kind
	Plan  string
	Task  domain.TaskID
	Since time.Time
}

func kinds(items []Item) []got {
	out := []got{}
	for _, it := range items {
		out = append(out, got{it.Reason.Kind, it.Plan, it.Task, it.Since})
	}
	return out
}

func task(id domain.TaskID, st lifecycle.State, since time.Time) lifecycle.Task {
	return lifecycle.Task{ID: id, State: st, Since: since, Created: since}
}

func TestFor(t *testing.T) {
	failure := func(m int, kind, detail string) HookDecision {
		return HookDecision{Time: at(m), Hook: "stop", Failure: kind, Detail: detail}
	}
	stopped := func(m int, decision, why string) HookDecision {
		return HookDecision{Time: at(m), Hook: "stop", Decision: decision, Why: why}
	}
	tests := []struct {
		name string
		in   Input
		want []got
	}{
		{"nothing", Input{Plans: []Plan{{ID: "p", LastProgress: now}}}, []got{}},
		{"store unreachable", Input{Repo: Repo{StoreErr: "connection refused", StoreSince: at(5)}},
			[]got{{StoreUnreachable, "", 0, at(5)}}},
		{"store unreachable, since unknown: now", Input{Repo: Repo{StoreErr: "connection refused"}},
			[]got{{StoreUnreachable, "", 0, now}}},
		{"clone not imported", Input{Plans: []Plan{{ID: "p", NotImported: 3, Events: 10}}},
			[]got{{CloneNotImported, "p", 0, now}}},
		{"config untrusted", Input{Repo: Repo{Untrusted: "reviewer_command ignored", UntrustedSince: at(1)}},
			[]got{{ConfigUntrusted, "", 0, at(1)}}},
		{"codex hook untrusted", Input{Repo: Repo{CodexHook: "Stop hook not trusted", CodexHookSince: at(2)}},
			[]got{{CodexHook, "", 0, at(2)}}},
		{"reviewer failing twice the same way", Input{Plans: []Plan{{ID: "p", Hook: []HookDecision{
			failure(10, "exit", "Not logged in"), failure(20, "exit", "Not logged in")}}}},
			[]got{{ReviewerFailing, "p", 0, at(10)}}},
		{"reviewer timing out twice, after slightly different times", Input{Plans: []Plan{{ID: "p", Hook: []HookDecision{
			failure(10, "timeout", "stopped after 1.004s (context deadline exceeded)"), failure(20, "timeout", "stopped after 1.001s (context deadline exceeded)")}}}},
			[]got{{ReviewerFailing, "p", 0, at(10)}}},
		{"reviewer failing two ways: not yet", Input{Plans: []Plan{{ID: "p", Hook: []HookDecision{
			failure(10, "exit", "Not logged in"), failure(20, "timeout", "killed after 25m")}}}},
			[]got{}},
		{"one failure after a success: not yet", Input{Plans: []Plan{{ID: "p", Hook: []HookDecision{
			failure(10, "exit", "x"), {Time: at(15)}, failure(20, "exit", "x")}}}},
			[]got{}},
		{"human escalation", Input{Plans: []Plan{{ID: "p", Tasks: []lifecycle.Task{task(3, lifecycle.HumanEscalation, at(30))}}}},
			[]got{{HumanEscalation, "p", 3, at(30)}}},
		{"cto intervention is no human's", Input{Plans: []Plan{{ID: "p", Tasks: []lifecycle.Task{task(3, lifecycle.CTOIntervention, now)}}}},
			[]got{}},
		{"needs human", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview, NeedsHuman: true, Since: at(40)}}}},
			[]got{{NeedsHuman, "p", 0, at(40)}}},
		{"review cap reached", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview, NextIsReview: true, Iteration: 8, MaxReviews: 8, Since: at(50)}}}},
			[]got{{ReviewCap, "p", 0, at(50)}}},
		{"review cap not reached", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview, NextIsReview: true, Iteration: 7, MaxReviews: 8}}}},
			[]got{}},
		{"budget spent", Input{Plans: []Plan{{ID: "p", Budget: Budget{Known: true, Settings: ledger.Settings{BudgetUSD: 1}, SpentUSD: 1.2, Since: at(60)}}}},
			[]got{{BudgetSpent, "p", 0, at(60)}}},
		{"review budget used up", Input{Plans: []Plan{{ID: "p", Budget: Budget{Known: true, Settings: ledger.Settings{ReviewBudget: 10 * time.Minute}, LastTook: 10 * time.Minute, Since: at(61)}}}},
			[]got{{BudgetSpent, "p", 0, at(61)}}},
		{"task token budget spent", Input{Plans: []Plan{{ID: "p", Budget: Budget{Known: true, Settings: ledger.Settings{TaskBudgetTokens: 3000}, Task: "2", TaskSpent: ledger.Spent{Tokens: 3000}, Since: at(62)}}}},
			[]got{{BudgetSpent, "p", 0, at(62)}}},
		{"plan time budget spent", Input{Plans: []Plan{{ID: "p", Budget: Budget{Known: true, Settings: ledger.Settings{BudgetTime: time.Hour}, Spent: ledger.Spent{Time: time.Hour}, Since: at(63)}}}},
			[]got{{BudgetSpent, "p", 0, at(63)}}},
		{"another task's tokens spend nothing", Input{Plans: []Plan{{ID: "p", Budget: Budget{Known: true, Settings: ledger.Settings{TaskBudgetTokens: 3000}, Spent: ledger.Spent{Tokens: 9000}, Task: "2", TaskSpent: ledger.Spent{Tokens: 10}}}}},
			[]got{}},
		{"budget unknown (the hook skipped the scan)", Input{Plans: []Plan{{ID: "p", Budget: Budget{Settings: ledger.Settings{BudgetUSD: 1}, SpentUSD: 5}}}},
			[]got{}},
		{"timeout past 150 %", Input{Plans: []Plan{{ID: "p", Timeouts: lifecycle.Timeouts{lifecycle.Testing: time.Hour},
			Tasks: []lifecycle.Task{task(4, lifecycle.Testing, at(0)), task(5, lifecycle.Testing, at(120))}}}},
			[]got{{Timeout, "p", 4, at(90)}}},
		{"a pending task waits its turn", Input{Plans: []Plan{{ID: "p", Timeouts: lifecycle.Timeouts{lifecycle.Pending: time.Minute},
			Tasks: []lifecycle.Task{task(4, lifecycle.Pending, at(0))}}}},
			[]got{}},
		{"expired lease", Input{Plans: []Plan{{ID: "p", ClaimsNow: now, Claims: []parallel.Claim{
			{Task: 2, Agent: "a", Expires: at(70)}, {Task: 3, Agent: "b", Expires: now.Add(time.Minute)}, {Task: 4, Agent: "c", Expires: parallel.Never}}}}},
			[]got{{ExpiredLease, "p", 2, at(70)}}},
		{"stalled review loop, session gone", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview}, LastProgress: at(100), SessionSeen: at(100)}}},
			[]got{{Stalled, "p", 0, at(130)}}},
		{"stall_after set longer", Input{StallAfter: 2 * time.Hour, Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview}, LastProgress: at(100)}}},
			[]got{}},
		{"quiet loop whose session still stops", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview}, LastProgress: at(100), SessionSeen: now.Add(-time.Minute)}}},
			[]got{}},
		{"paused plan does not stall", Input{Plans: []Plan{{ID: "p", Paused: true, Cycle: Cycle{Review: domain.CodeReview}, LastProgress: at(100)}}},
			[]got{}},
		{"a session that ignored a review block: at once", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview}, BlockOpen: true,
			LastProgress: at(170), SessionSeen: at(178), Hook: []HookDecision{stopped(175, "block", "review-due"), stopped(178, "allow", "post-review-owed")}}}},
			[]got{{BlocksIgnored, "p", 0, at(178)}}},
		{"blocks ignored by flipping next_phase (no progress)", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview}, BlockOpen: true,
			Hook: []HookDecision{stopped(178, "allow", "no-progress")}}}},
			[]got{{BlocksIgnored, "p", 0, at(178)}}},
		{"the post-review was done since: no longer ignored", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview},
			Hook: []HookDecision{stopped(178, "allow", "post-review-owed")}}}},
			[]got{}},
		{"ignored blocks, then stalled: said once", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview}, BlockOpen: true,
			LastProgress: at(10), SessionSeen: at(11), Hook: []HookDecision{stopped(11, "allow", "post-review-owed")}}}},
			[]got{{BlocksIgnored, "p", 0, at(11)}}},
		{"block cap reached: at once", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview, NextIsReview: true},
			Hook: []HookDecision{stopped(176, "block", "review-due"), stopped(179, "allow", "block-cap")}}}},
			[]got{{BlockCap, "p", 0, at(179)}}},
		{"block cap, then a review ran: gone", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.CodeReview, NextIsReview: true},
			Hook: []HookDecision{stopped(176, "allow", "block-cap"), stopped(179, "block", "review-due")}}}},
			[]got{}},
		{"block cap on a paused plan", Input{Plans: []Plan{{ID: "p", Paused: true, Cycle: Cycle{Review: domain.CodeReview, NextIsReview: true},
			Hook: []HookDecision{stopped(179, "allow", "block-cap")}}}},
			[]got{}},
		{"review lock held by a killed hook's reviewer: at once", Input{Plans: []Plan{{ID: "p", Cycle: Cycle{Review: domain.PlanReview},
			Lock: &OrphanLock{HookPID: 41, PGID: 42, Started: at(175), Deadline: at(175).Add(25 * time.Minute)}}}},
			[]got{{ReviewLock, "p", 0, at(175)}}},
		{"two plans wait, none named: at once", Input{Plans: []Plan{
			{ID: "a", Hook: []HookDecision{stopped(179, "allow", "plan choice: several-pending: plans \"a\" … await the hook")}},
			{ID: "b", Hook: []HookDecision{stopped(179, "allow", "plan choice: several-pending: plans \"a\" … await the hook")}},
			{ID: "c", Hook: []HookDecision{stopped(179, "allow", "plan choice: mid-turn-elsewhere: …")}}}},
			[]got{{PlanUnnamed, "a", 0, at(179)}, {PlanUnnamed, "b", 0, at(179)}}},
		{"a plan named since: driven", Input{Plans: []Plan{
			{ID: "a", Hook: []HookDecision{stopped(170, "allow", "plan choice: several-pending: …"), stopped(179, "block", "review-due")}}}},
			[]got{}},
		{"order: severity, then oldest first", Input{
			Repo: Repo{Untrusted: "x", UntrustedSince: at(100)},
			Plans: []Plan{
				{ID: "b", Tasks: []lifecycle.Task{task(1, lifecycle.HumanEscalation, at(20))}, ClaimsNow: now, Claims: []parallel.Claim{{Task: 2, Agent: "a", Expires: at(1)}}},
				{ID: "a", Cycle: Cycle{Review: domain.CodeReview, NeedsHuman: true, Since: at(10)}},
			}},
			[]got{{ConfigUntrusted, "", 0, at(100)}, {NeedsHuman, "a", 0, at(10)}, {HumanEscalation, "b", 1, at(20)}, {ExpiredLease, "b", 2, at(1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := For(tt.in, now)
			if diff := cmp.Diff(tt.want, kinds(items)); diff != "" {
				t.Errorf("For (-want +got):\n%s", diff)
			}
			for _, it := range items {
				if it.Reason.Text == "" || it.Clear == "" {
					t.Errorf("%s: empty text or clear: %+v", it.Reason.Kind, it)
				}
			}
		})
	}
}

// TestTexts pins the words of a few items: what a user reads.
func TestTexts(t *testing.T) {
	in := Input{Plans: []Plan{{ID: "p", PlanFlag: " --plan p",
		Tasks:     []lifecycle.Task{{ID: 3, State: lifecycle.HumanEscalation, Since: at(0), EscalatedFrom: lifecycle.Planning}},
		ClaimsNow: now, Claims: []parallel.Claim{{Task: 2, Agent: "a", Expires: now.Add(-5 * time.Minute)}},
	}}}
	want := []Item{
		{Plan: "p", Task: 3, Reason: Reason{HumanEscalation, "task 3 is escalated to a human (from planning)"}, Since: at(0),
			Clear: "decide, then `taskie task resolve 3 --actor human --plan p` (or `taskie task abandon 3 --actor human --plan p`)"},
		{Plan: "p", Task: 2, Reason: Reason{ExpiredLease, "task 2's lease held by a expired 5m ago: its agent stopped renewing it"}, Since: now.Add(-5 * time.Minute),
			Clear: "`taskie claim 2 --as AGENT --plan p` takes it over, or `taskie release 2 --force --plan p` frees it"},
	}
	if diff := cmp.Diff(want, For(in, now)); diff != "" {
		t.Errorf("For (-want +got):\n%s", diff)
	}
}

// TestStallTexts pins the words and the commands of the items that the
// loop's stalls raise at once.
func TestStallTexts(t *testing.T) {
	in := Input{Plans: []Plan{
		{ID: "p", PlanFlag: " --plan p", Cycle: Cycle{Review: domain.CodeReview, NextIsReview: true}, BlockOpen: true,
			Hook: []HookDecision{{Time: at(1), Hook: "stop", Decision: "allow", Why: "no-progress"}}},
		{ID: "q", PlanFlag: " --plan q", Cycle: Cycle{Review: domain.CodeReview, NextIsReview: true},
			Hook: []HookDecision{{Time: at(2), Hook: "stop", Decision: "allow", Why: "block-cap"}}},
		{ID: "r", PlanFlag: " --plan r", NotImported: 3, Events: 10,
			Lock: &OrphanLock{HookPID: 41, PGID: 42, Started: at(3), Deadline: now.Add(10 * time.Minute)}},
		{ID: "s", PlanFlag: " --plan s", Lock: &OrphanLock{HookPID: 51, PGID: 52, Started: at(4), Deadline: now.Add(-time.Minute)},
			Hook: []HookDecision{{Time: at(5), Hook: "stop", Decision: "allow", Why: "plan choice: several-pending: …"}}},
	}}
	want := []Item{
		{Plan: "r", Reason: Reason{ReviewLock, "the review lock of plan r is held by a reviewer whose hook (pid 41) was killed: every stop says a review is already running, and none runs until its deadline, 2026-05-01 15:10 UTC"},
			Since: at(3), Clear: "wait for its deadline (the next stop then ends it and reviews), or end it now: `kill -- -42`"},
		{Plan: "s", Reason: Reason{ReviewLock, "the review lock of plan s is held by a reviewer whose hook (pid 51) was killed: every stop says a review is already running; its deadline passed at 2026-05-01 14:59 UTC"},
			Since: at(4), Clear: "`taskie continue --plan s` ends it (or the next stop does)"},
		{Plan: "r", Reason: Reason{CloneNotImported, "3 of this clone's 10 events of plan r are not in the shared store: other clones do not see them, and the views of the plan show this clone's own log"},
			Since: now, Clear: "`taskie store import r`"},
		{Plan: "s", Reason: Reason{PlanUnnamed, "plan s waits for the hook with other plans and the session named none of them, so none is driven"},
			Since: at(5), Clear: "in the session, name it: `taskie status --plan s`, then end the turn again (or `taskie pause --plan s`)"},
		{Plan: "p", Reason: Reason{BlocksIgnored, "the session ended its turn without addressing the code-review's block (no post-review recorded), so no review runs"},
			Since: at(1), Clear: "tell the session to do the post-code-review and record it with `taskie done post-code-review --plan p`, or `taskie pause --plan p`"},
		{Plan: "q", Reason: Reason{BlockCap, "the session reached its cap of blocks in a row (block_cap), so its code-review loop stopped until a new prompt"},
			Since: at(2), Clear: "send the session a new prompt (its next stop reviews again), or raise \"block_cap\" in .taskie/config.json"},
	}
	if diff := cmp.Diff(want, For(in, now)); diff != "" {
		t.Errorf("For (-want +got):\n%s", diff)
	}
}
