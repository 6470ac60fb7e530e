package hook

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/needs"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// view is what a message needs to know about the plan besides the decision.
type view struct {
	plan, planFlag, root, dir string
	s                         *state.State // the state the decision was made on
	violations                []string
	untrusted                 string // what waits for `taskie trust`: programs, then settings
	blocksInRow, blockCap     int
	pendingOther              bool
	autopilot                 bool // advance boundaries block with the continue instruction
	agent                     Agent
	// taskDone names the current task when its pass completed it at once
	// (outside git: no commit to wait for); "" otherwise.
	taskDone string
	// ledger reads the review ledger of the cycle a state is in (it scans
	// the event log: only messages that list findings call it); nil: none.
	ledger func(*state.State) ledgerView
}

// findings lists the open findings of the cycle s is in, for a block.
func (v view) findings(s *state.State) string {
	if v.ledger == nil || s == nil {
		return ""
	}
	return openList(v.ledger(s).l)
}

// render turns a decision that needs no reviewer into the hook's answer.
// Every sentence the hook says outside a review block is written here.
func render(d workflow.StopDecision, v view) Result {
	s := v.s
	switch d.Reason {
	case workflow.RPaused, workflow.RNoState, workflow.RNotReview:
		if d.Reason == workflow.RNotReview && s != nil {
			return Allow(pendingMessage(s, v.agent))
		}
		return Allow("")
	case workflow.RInvalid:
		list := "  - " + strings.Join(v.violations, "\n  - ")
		return Result{Block: true, needsMemory: true, Reason: fmt.Sprintf(
			"taskie: plan %q (%s) breaks the plan format:\n%s\nFix every item, then end your turn again (`taskie validate %s` checks). To stop automation instead: `taskie pause --plan %s`.",
			v.plan, relPath(v.root, v.dir), list, v.plan, v.plan)}
	case workflow.RInvalidSeen:
		return Allow(fmt.Sprintf("taskie: plan %q still has %d validation problem(s), already reported; stop allowed. Run `taskie validate %s` to see them.", v.plan, len(v.violations), v.plan))
	case workflow.RUntrusted:
		return Allow("taskie: " + v.untrusted + "; no review ran.")
	case workflow.RReviewRunning:
		return Allow(fmt.Sprintf("taskie: a review of plan %q is already running (another stop or session); this stop is allowed.", v.plan))
	case workflow.RPostOwedRemind:
		return Result{Block: true, needsMemory: true, Reason: blockMessage(v, s, "", "", true)}
	case workflow.RRecoveredBlock:
		return Result{Block: true, Reason: blockMessage(v, d.Save, d.Model, "", false)}
	case workflow.RNeedsHuman, workflow.RHumanEscalation:
		if d.Reason == workflow.RHumanEscalation && !s.NeedsHuman {
			return Allow(fmt.Sprintf("taskie: task %s is in human_escalation, so the Stop hook runs no review for it until a human decides: %s. Stop here and tell the user.", d.Task, workflow.HumanDecision(s, v.pendingOther)))
		}
		why, list := "the review ledger found it going round", ""
		if v.ledger != nil && s != nil {
			lv := v.ledger(s)
			var a ledger.Assessment
			a, list = goingRound(lv)
			if a.Reason == ledger.ReasonStalled || a.Reason == ledger.ReasonReopened {
				why = whyGoingRound(a.Reason, a.Threshold)
			}
		}
		msg := needsHumanMessage(v, d.Review, why, list)
		if d.Reason == workflow.RHumanEscalation {
			msg += fmt.Sprintf(" Task %s is with a human (human_escalation): `taskie task resolve %s --actor human%s` comes first; `taskie task abandon %s --actor human%s` gives it up.", d.Task, d.Task, v.planFlag, d.Task, v.planFlag)
		}
		return Allow(msg)
	case workflow.RBudget:
		return Allow(budgetMessage(v, d))
	case workflow.RPostOwed:
		return Allow(fmt.Sprintf("taskie: the %s of iteration %d is still owed; automation waits for it (`taskie continue` says what to do, `taskie pause` stops automation).", d.Review, d.Iteration))
	case workflow.RIllegalNext:
		return Allow(fmt.Sprintf("taskie: next_phase %q cannot follow phase %q, so no review ran. Fix state.json with `taskie set next_phase …` (legal after %s: %s) or `taskie pause`.",
			d.Review, s.Phase, s.Phase, quoteList(workflow.LegalFrom(s.Phase))))
	case workflow.RNoProgress:
		return Allow(fmt.Sprintf("taskie: the %s feedback was not addressed (no post-review recorded since the last block), so no new review ran. Do the %s and record it with `taskie done %s`, or run `taskie pause` to stop automation.",
			d.Review, domain.PostReview(d.Review), domain.PostReview(d.Review)))
	case workflow.RBlockCap:
		return Allow(fmt.Sprintf("taskie: %d blocks in a row in this session (cap %d), so no review ran. Stop here; the next stop after a new prompt reviews again (raise \"block_cap\" in .taskie/config.json to allow longer chains).", v.blocksInRow, v.blockCap))
	case workflow.RReviewsOff:
		if v.autopilot { // a skipped review is an advance boundary too
			return Result{Block: true, Reason: fmt.Sprintf("taskie: reviews are disabled (max_reviews 0); %s skipped. Autopilot is on: run `taskie continue%s` now and do what it says.", d.Review, v.planFlag)}
		}
		return Allow(fmt.Sprintf("taskie: reviews are disabled (max_reviews 0); %s skipped. Run `taskie continue%s` to go on.", d.Review, v.planFlag))
	case workflow.RIterationRange:
		return Allow(fmt.Sprintf("taskie: warning: phase_iteration %d is outside 0…%d (max_reviews), an illegal state, so no review ran. Fix it with `taskie set phase_iteration 0%s` or `taskie recover%s`.", d.Iteration, s.MaxReviews, v.planFlag, v.planFlag))
	case workflow.RMaxReviews:
		if d.ToHuman != "" {
			return Allow(fmt.Sprintf("taskie: max review limit (%d) reached for the code review of task %s without two clean reviews in a row, so the task is handed to a human (human_escalation) and no review runs for it: %s. Stop here and tell the user.",
				s.MaxReviews, d.Task, workflow.HumanDecision(s, v.pendingOther)))
		}
		return Allow(fmt.Sprintf("Max review limit (%d) reached for %s. Raise it with `taskie set max_reviews %d`, or move on: `taskie set next_phase %s` skips the rest of this review cycle.",
			s.MaxReviews, d.Review, s.MaxReviews+4, workflow.AdvanceTarget(d.Review, s.TDD, v.pendingOther)))
	case workflow.RNoTask:
		return Allow("taskie: code-review is due but current_task is not set; run `taskie start <task> --auto`.")
	case workflow.RNoTaskFile:
		return Allow(fmt.Sprintf("taskie: code-review is due but task-%s.md does not exist; create it or fix current_task.", d.Task))
	case workflow.RNoTaskFiles:
		return Allow(fmt.Sprintf("taskie: %s is due but no task file listed in tasks.md exists; write the task-T.md files first.", d.Review))
	}
	return Allow("")
}

// pendingMessage reminds the agent of an action automation is waiting for.
func pendingMessage(s *state.State, a Agent) string {
	switch n := s.Next(); {
	case domain.IsAdvanceTarget(n), n == domain.CreateTasks:
		return fmt.Sprintf("taskie: %s is next. %s.", n, RunAction(a, "continue-plan"))
	case n == domain.Complete:
		return "taskie: the plan is complete. Run `taskie continue` to record it."
	}
	return ""
}

func quoteList(xs []domain.Phase) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// blockMessage renders the review block (docs/hook.md) for the state s, with the
// cycle's open findings.
func blockMessage(v view, s *state.State, model domain.Model, verdict domain.Verdict, reminder bool) string {
	d := blockData(v, s, model, verdict, reminder)
	d.Findings = v.findings(s)
	return BlockMessage(d)
}

// blockData fills the block message (docs/hook.md) for the state s.
func blockData(v view, s *state.State, model domain.Model, verdict domain.Verdict, reminder bool) BlockData {
	review, n, task := s.Phase, s.Iteration(), s.Task()
	return BlockData{
		Plan: v.plan, Task: task, Review: review, Model: model, Verdict: verdict, Reminder: reminder,
		Iteration: n, NextIteration: n + 1, Clean: s.ConsecutiveClean,
		ReviewFile: relPath(v.root, v.dir+"/"+plan.ReviewFile(string(review), int(task), n)),
		PostFile:   relPath(v.root, v.dir+"/"+plan.PostReviewFile(string(review), int(task), n)),
		StateFile:  relPath(v.root, v.dir+"/"+state.FileName),
		PlanFlag:   v.planFlag,
	}
}

// advanced is the answer when a review cycle passed.
func advanced(v view, review, target domain.Phase, autopilot bool) Result {
	what := map[domain.Phase]string{
		domain.CreateTasks:     "create the tasks",
		domain.CompleteTask:    "start the next task",
		domain.CompleteTaskTDD: "start the next task test-first",
		domain.AllCodeReview:   "run the final all-code review (end your turn)",
		domain.Complete:        "record the plan as complete",
	}[target]
	// A task whose code review passed waits in committing: its commit
	// completes it (docs/lifecycle.md), so the message asks for it first.
	commit := ""
	switch {
	case review == domain.CodeReview && v.taskDone != "":
		commit = fmt.Sprintf(" Task %s is done (outside git there is no commit to wait for).", v.taskDone)
	case review == domain.CodeReview:
		commit = " Commit the task's work now (`git add` and `git commit`): taskie marks the task done when it sees the commit."
	}
	if autopilot {
		return Result{Block: true, Reason: fmt.Sprintf("taskie: %s passed (two clean reviews in a row).%s Autopilot is on: run `taskie continue%s` now and do what it says (%s).", review, commit, v.planFlag, what)}
	}
	return Allow(fmt.Sprintf("taskie: %s passed (two clean reviews in a row).%s %s to %s.", review, commit, RunAction(v.agent, "continue-plan"), what))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// maxNeedsLines caps the needs-you lines a hook message mentions.
const maxNeedsLines = 3

// needsLines are the needs-you items of one plan that the hook can tell
// from what it already read — the snapshot and the configuration, no log
// scan (docs/needs-you.md lists what only `taskie status` shows) — one
// short line each, without the kinds in skip (the message says them), then
// its tasks over their timeout (alertLines).
func needsLines(id, planFlag string, st *state.State, pendingOther bool, cfg config.Config, now time.Time, skip ...needs.Kind) string {
	in := needs.Input{Repo: needs.Repo{Untrusted: cfg.AwaitingTrust()}}
	if st != nil {
		// No LastProgress: the hook claims no stall (its session is here).
		p := needs.Plan{ID: id, PlanFlag: planFlag, Paused: !st.IsEnabled()}
		p.Timeouts, _ = lifecycle.ParseTimeouts(cfg.LifecycleTimeouts)
		for _, r := range taskrec.OfFiles(nil, st) {
			p.Tasks = append(p.Tasks, r.Life)
		}
		p.Cycle = needs.Cycle{Review: cycleOf(st), Iteration: st.Iteration(), MaxReviews: st.MaxReviews,
			NextIsReview: domain.IsReview(st.Next()), NeedsHuman: st.NeedsHuman}
		if p.Cycle.NextIsReview {
			p.Cycle.MoveOn = workflow.AdvanceTarget(st.Next(), st.TDD, pendingOther)
		}
		in.Plans = []needs.Plan{p}
	}
	var lines []string
	n := 0
	for _, it := range needs.For(in, now) {
		if slices.Contains(skip, it.Reason.Kind) {
			continue
		}
		if n++; n <= maxNeedsLines {
			lines = append(lines, "taskie: "+it.Line())
		}
	}
	if n > maxNeedsLines {
		lines = append(lines, fmt.Sprintf("taskie: … and %d more: `taskie status%s`", n-maxNeedsLines, planFlag))
	}
	if len(in.Plans) > 0 {
		lines = append(lines, alertLines(in.Plans[0], now)...)
	}
	return strings.Join(lines, "\n")
}

// maxAlertLines caps the timeout alerts a hook message mentions.
const maxAlertLines = 2

// alertLines name the tasks of the plan past 100 % of their state's
// timeout and under 150 % (from 150 % a task is a needs-you item, said
// above), one short line each: the agent hears that a task is stuck while
// it can still move it on. Pending tasks wait their turn and are left to
// `taskie query --stuck`, as in the needs-you list.
func alertLines(p needs.Plan, now time.Time) []string {
	var stuck []lifecycle.Task
	for _, t := range p.Tasks {
		if t.State == lifecycle.Pending || t.State.Terminal() || t.State == lifecycle.HumanEscalation {
			continue
		}
		if lifecycle.Status(t, now, p.Timeouts).Level == lifecycle.LevelAlert {
			stuck = append(stuck, t)
		}
	}
	slices.SortFunc(stuck, func(a, b lifecycle.Task) int { return int(a.ID - b.ID) })
	var lines []string
	for i, t := range stuck {
		if i == maxAlertLines {
			lines = append(lines, fmt.Sprintf("taskie: … and %d more over their timeout: `taskie query --stuck%s`", len(stuck)-i, p.PlanFlag))
			break
		}
		st := lifecycle.Status(t, now, p.Timeouts)
		lines = append(lines, fmt.Sprintf("taskie: timeout: task %s has been in %s for %s, %d %% of its timeout of %s — move it on, or `taskie task escalate %s%s`",
			t.ID, t.State, domain.ShortDuration(st.Elapsed), int(st.Elapsed*100/st.Limit), domain.ShortDuration(st.Limit), t.ID, p.PlanFlag))
	}
	return lines
}

// cycleOf names the review cycle a state is in, "" when none.
func cycleOf(st *state.State) domain.Phase {
	for _, p := range []domain.Phase{st.Next(), st.Phase} {
		if domain.IsReview(p) {
			return p
		}
		if r := domain.ReviewOf(p); r != "" {
			return r
		}
	}
	return ""
}

// skipFor are the kinds a Stop decision's own message already says.
func skipFor(why string) []needs.Kind {
	// Budget and needs_human come with their own messages (the review's
	// note, the refusal) whenever the Stop hook meets them.
	skip := []needs.Kind{needs.BudgetSpent, needs.NeedsHuman}
	switch workflow.Reason(why) {
	case workflow.RMaxReviews:
		skip = append(skip, needs.ReviewCap, needs.HumanEscalation)
	case workflow.RHumanEscalation, workflow.RCTOReview:
		skip = append(skip, needs.HumanEscalation, needs.ReviewCap)
	case workflow.RUntrusted:
		skip = append(skip, needs.ConfigUntrusted)
	}
	return skip
}

// mention adds the needs-you lines to a stop's answer: to the block
// reason, or to the message of an allow.
func mention(r Result, lines string) Result {
	if lines == "" {
		return r
	}
	if r.Block {
		r.Reason += "\n" + lines
		return r
	}
	r.Message = strings.TrimPrefix(r.Message+"\n"+lines, "\n")
	return r
}
