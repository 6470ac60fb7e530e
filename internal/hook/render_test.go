package hook

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// declaredReasons lists the workflow.Reason constants declared in stop.go,
// so that a reason code added there without a rendering fails this test.
func declaredReasons(t *testing.T) []workflow.Reason {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../workflow/stop.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []workflow.Reason
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Reason" {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					t.Fatalf("Reason constant with a non-literal value at %v", v.Pos())
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, workflow.Reason(s))
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d Reason constants in stop.go: %v", len(out), out)
	}
	return out
}

const (
	silent  = "silent"  // allow, no message
	message = "message" // allow with a systemMessage
	block   = "block"   // block with a reason
)

// renderKind is what render does with each reason code. Codes marked
// silent either need no word (nothing due) or are answered elsewhere: the
// stopper runs the review (RReviewDue), takes the lock (RLock), warns about
// an unreadable state.json itself (RStateUnreadable).
var renderKind = map[workflow.Reason]string{
	workflow.RPaused:          silent,
	workflow.RInvalid:         block,
	workflow.RInvalidSeen:     message,
	workflow.RNoState:         silent,
	workflow.RStateUnreadable: silent,
	workflow.RUntrusted:       message,
	workflow.RReviewRunning:   message,
	workflow.RRecoveredBlock:  block,
	workflow.RPostOwedRemind:  block,
	workflow.RPostOwed:        message,
	workflow.RNotReview:       message, // with an advance target next; silent when next_phase is null
	workflow.RIllegalNext:     message,
	workflow.RNoProgress:      message,
	workflow.RBlockCap:        message,
	workflow.RReviewsOff:      message,
	workflow.RIterationRange:  message,
	workflow.RMaxReviews:      message,
	workflow.RNoTask:          message,
	workflow.RNoTaskFile:      message,
	workflow.RNoTaskFiles:     message,
	workflow.RReviewDue:       silent,
	workflow.RLock:            silent,
	workflow.RNeedsHuman:      message,
	workflow.RBudget:          message,
	workflow.RCTOReview:       silent, // the stopper runs the CTO review
	workflow.RHumanEscalation: message,
}

func mk(phase, next domain.Phase, task domain.TaskID, iter int, model domain.Model, clean int) *state.State {
	s := state.New()
	s.Phase, s.NextPhase, s.CurrentTask = phase, state.Opt(next), state.Opt(task)
	if iter >= 0 {
		s.PhaseIteration = state.Int(iter)
	}
	s.ReviewModel, s.ConsecutiveClean = model, clean
	return s
}

func testView(s *state.State) view {
	return view{plan: "p", root: "/repo", dir: "/repo/.taskie/plans/p", s: s,
		violations:  []string{"plan.md: plan.md is missing (rule 1)", "tasks.md:3: unknown status \"later\" (rule 5)"},
		untrusted:   "the repository's .taskie/config.json sets reviewer_command and is not trusted (run `taskie trust`)",
		blocksInRow: 40, blockCap: 40, pendingOther: true}
}

func renderSafely(t *testing.T, d workflow.StopDecision, v view) (res Result) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("render(%s) panicked: %v", d.Reason, r)
		}
	}()
	return render(d, v)
}

func kindOf(r Result) string {
	switch {
	case r.Block && r.Reason != "" && r.Message == "":
		return block
	case !r.Block && r.Message != "" && r.Reason == "":
		return message
	case !r.Block && r.Message == "" && r.Reason == "":
		return silent
	}
	return "malformed"
}

// Every reason code renders, without panicking, as the kind of answer it
// stands for; allow messages speak as taskie.
func TestRenderEveryReason(t *testing.T) {
	s := mk(domain.PostCodeReview, domain.CompleteTask, 3, 2, "opus", 1)
	recovered := mk(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0)
	for _, r := range declaredReasons(t) {
		t.Run(string(r), func(t *testing.T) {
			want, ok := renderKind[r]
			if !ok {
				t.Fatalf("reason %q has no rendering expectation: add it to renderKind (and to render)", r)
			}
			d := workflow.StopDecision{Reason: r, Review: domain.CodeReview, Task: 3, Iteration: 2, Model: "opus", Violations: "x"}
			if r == workflow.RRecoveredBlock {
				d.Save, d.Iteration = recovered, 3
			}
			if r == workflow.RNotReview {
				d.Review = domain.CompleteTask
			}
			res := renderSafely(t, d, testView(s))
			if got := kindOf(res); got != want {
				t.Errorf("render(%s) = %+v: a %s, want a %s", r, res, got, want)
			}
			if want == message && r != workflow.RMaxReviews && !strings.HasPrefix(res.Message, "taskie: ") {
				t.Errorf("render(%s) message does not say it is taskie's: %q", r, res.Message)
			}
			if strings.Contains(res.Message+res.Reason, "%!") || strings.Contains(res.Message+res.Reason, "<no value>") {
				t.Errorf("render(%s) has a formatting error: %q", r, res.Message+res.Reason)
			}
		})
	}
}

// The reasons a plan without a usable state.json can get render without it.
func TestRenderWithoutState(t *testing.T) {
	for _, r := range []workflow.Reason{workflow.RInvalid, workflow.RInvalidSeen, workflow.RNoState, workflow.RStateUnreadable} {
		res := renderSafely(t, workflow.StopDecision{Reason: r}, testView(nil))
		if got := kindOf(res); got != renderKind[r] {
			t.Errorf("render(%s) without a state = %+v: a %s, want a %s", r, res, got, renderKind[r])
		}
	}
}

// decideAndRender runs the pure decision and renders it the way the
// stopper does (without a reviewer).
func decideAndRender(t *testing.T, f workflow.StopFacts, v view) (workflow.StopDecision, Result) {
	t.Helper()
	if f.Lock == workflow.LockUnknown {
		f.Lock = workflow.LockHeld
	}
	d := workflow.Decide(f)
	v.s, v.violations, v.pendingOther, v.blocksInRow, v.blockCap = f.State, f.Violations, f.PendingOther, f.BlocksInRow, f.BlockCap
	v.untrusted = f.Untrusted
	return d, renderSafely(t, d, v)
}

func okFacts(s *state.State) workflow.StopFacts {
	return workflow.StopFacts{State: s, TaskFileExists: true, AnyTaskFile: true, PendingOther: true, BlockCap: 40, Lock: workflow.LockHeld}
}

func withMax(s *state.State, n int) *state.State { s.MaxReviews = n; return s }

func TestRenderGolden(t *testing.T) {
	v := testView(nil)
	tdd := func(s *state.State) *state.State { s.TDD = true; return s }
	tests := []struct {
		name    string
		f       workflow.StopFacts
		reason  workflow.Reason
		flag    string
		block   bool
		text    string
		partial bool // text is a substring, not the whole answer
	}{
		{
			name: "validation block lists every violation",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1))
				f.Violations = []string{"plan.md: plan.md is missing (rule 1)", "tasks.md:3: unknown status \"later\" (rule 5)", "notes.txt: unexpected file notes.txt (rule 9)"}
				return f
			}(),
			reason: workflow.RInvalid, block: true,
			text: "taskie: plan \"p\" (.taskie/plans/p) breaks the plan format:\n" +
				"  - plan.md: plan.md is missing (rule 1)\n" +
				"  - tasks.md:3: unknown status \"later\" (rule 5)\n" +
				"  - notes.txt: unexpected file notes.txt (rule 9)\n" +
				"Fix every item, then end your turn again (`taskie validate p` checks). To stop automation instead: `taskie pause --plan p`.",
		},
		{
			name: "violations already reported",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1))
				f.Violations, f.Seen, f.Active = []string{"a (rule 1)", "b (rule 2)"}, "a (rule 1)\nb (rule 2)", true
				return f
			}(),
			reason: workflow.RInvalidSeen,
			text:   "taskie: plan \"p\" still has 2 validation problem(s), already reported; stop allowed. Run `taskie validate p` to see them.",
		},
		{
			name:   "max review limit (code-review, pending tasks)",
			f:      okFacts(withMax(mk(domain.PostCodeReview, domain.CodeReview, 3, 8, "opus", 0), 8)),
			reason: workflow.RMaxReviews,
			text:   "taskie: max review limit (8) reached for the code review of task 3 without two clean reviews in a row, so the task is handed to a human (human_escalation) and no review runs for it: it reached max_reviews (8): raise it (`taskie set max_reviews 12`) and resume the reviews with `taskie task resolve 3 --actor human`, or accept the work as it is (`taskie set next_phase complete-task`); or give it up: `taskie task abandon 3 --actor human`. Stop here and tell the user.",
		},
		{
			name: "max review limit (code-review, last task)",
			f: func() workflow.StopFacts {
				f := okFacts(withMax(mk(domain.PostCodeReview, domain.CodeReview, 3, 3, "opus", 0), 3))
				f.PendingOther = false
				return f
			}(),
			reason: workflow.RMaxReviews,
			text:   "taskie: max review limit (3) reached for the code review of task 3 without two clean reviews in a row, so the task is handed to a human (human_escalation) and no review runs for it: it reached max_reviews (3): raise it (`taskie set max_reviews 7`) and resume the reviews with `taskie task resolve 3 --actor human`, or accept the work as it is (`taskie set next_phase all-code-review`); or give it up: `taskie task abandon 3 --actor human`. Stop here and tell the user.",
		},
		{
			name:   "max review limit (plan-review)",
			f:      okFacts(withMax(mk(domain.PostPlanReview, domain.PlanReview, 0, 2, "opus", 1), 2)),
			reason: workflow.RMaxReviews,
			text:   "Max review limit (2) reached for plan-review. Raise it with `taskie set max_reviews 6`, or move on: `taskie set next_phase create-tasks` skips the rest of this review cycle.",
		},
		{
			name:   "max review limit (tasks-review, tdd)",
			f:      okFacts(tdd(withMax(mk(domain.PostTasksReview, domain.TasksReview, 0, 4, "opus", 1), 4))),
			reason: workflow.RMaxReviews,
			text:   "Max review limit (4) reached for tasks-review. Raise it with `taskie set max_reviews 8`, or move on: `taskie set next_phase complete-task-tdd` skips the rest of this review cycle.",
		},
		{
			name:   "max review limit (all-code-review)",
			f:      okFacts(withMax(mk(domain.PostAllCodeReview, domain.AllCodeReview, 3, 1, "opus", 0), 1)),
			reason: workflow.RMaxReviews,
			text:   "Max review limit (1) reached for all-code-review. Raise it with `taskie set max_reviews 5`, or move on: `taskie set next_phase complete` skips the rest of this review cycle.",
		},
		{
			name: "phase_iteration negative: no review ran",
			f: okFacts(func() *state.State {
				s := mk(domain.PostCodeReview, domain.CodeReview, 3, 0, "opus", 0)
				s.PhaseIteration = state.Int(-5)
				return s
			}()),
			reason: workflow.RIterationRange,
			text:   "taskie: warning: phase_iteration -5 is outside 0…8 (max_reviews), an illegal state, so no review ran. Fix it with `taskie set phase_iteration 0` or `taskie recover`.",
		},
		{
			name: "phase_iteration huge: no review ran",
			f: okFacts(func() *state.State {
				s := mk(domain.PostPlanReview, domain.PlanReview, 0, 0, "opus", 0)
				s.PhaseIteration = state.Int(1 << 62)
				return s
			}()),
			reason: workflow.RIterationRange, flag: " --plan p",
			text: "taskie: warning: phase_iteration 4611686018427387904 is outside 0…8 (max_reviews), an illegal state, so no review ran. Fix it with `taskie set phase_iteration 0 --plan p` or `taskie recover --plan p`.",
		},
		{
			name:   "advance target pending",
			f:      okFacts(mk(domain.CodeReview, domain.CompleteTask, 3, 4, "opus", 2)),
			reason: workflow.RNotReview,
			text:   "taskie: complete-task is next. Run /taskie:continue-plan.",
		},
		{
			name:   "tdd advance target pending",
			f:      okFacts(mk(domain.TasksReview, domain.CompleteTaskTDD, 0, 2, "opus", 2)),
			reason: workflow.RNotReview,
			text:   "taskie: complete-task-tdd is next. Run /taskie:continue-plan.",
		},
		{
			name:   "create-tasks pending",
			f:      okFacts(mk(domain.PlanReview, domain.CreateTasks, 0, 2, "opus", 2)),
			reason: workflow.RNotReview,
			text:   "taskie: create-tasks is next. Run /taskie:continue-plan.",
		},
		{
			name:   "complete pending",
			f:      okFacts(mk(domain.AllCodeReview, domain.Complete, 3, 2, "opus", 2)),
			reason: workflow.RNotReview,
			text:   "taskie: the plan is complete. Run `taskie continue` to record it.",
		},
		{
			name:   "standalone: silent",
			f:      okFacts(mk(domain.NextTask, "", 3, 0, "opus", 0)),
			reason: workflow.RNotReview,
			text:   "",
		},
		{
			name: "post-review owed, already told",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.CodeReview, domain.PostCodeReview, 3, 2, "sonnet", 0))
				f.LastReviewBlock = &workflow.Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2}
				return f
			}(),
			reason: workflow.RPostOwed,
			text:   "taskie: the post-code-review of iteration 2 is still owed; automation waits for it (`taskie continue` says what to do, `taskie pause` stops automation).",
		},
		{
			name: "no progress since the last block",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.CodeReview, domain.CodeReview, 3, 2, "opus", 0))
				f.Active, f.LastReviewBlock = true, &workflow.Mark{Phase: domain.CodeReview, Task: 3, Iteration: 2}
				return f
			}(),
			reason: workflow.RNoProgress,
			text:   "taskie: the code-review feedback was not addressed (no post-review recorded since the last block), so no new review ran. Do the post-code-review and record it with `taskie done post-code-review`, or run `taskie pause` to stop automation.",
		},
		{
			name: "block cap reached",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1))
				f.Active, f.BlocksInRow, f.BlockCap = true, 40, 40
				return f
			}(),
			reason: workflow.RBlockCap,
			text:   `taskie: 40 blocks in a row in this session (cap 40), so no review ran. Stop here; the next stop after a new prompt reviews again (raise "block_cap" in .taskie/config.json to allow longer chains).`,
		},
		{
			name:   "reviews off",
			f:      okFacts(withMax(mk(domain.NewPlan, domain.PlanReview, 0, 0, "opus", 0), 0)),
			reason: workflow.RReviewsOff,
			text:   "taskie: reviews are disabled (max_reviews 0); plan-review skipped. Run `taskie continue` to go on.",
		},
		{
			name:   "reviews off, several plans",
			f:      okFacts(withMax(mk(domain.NextTask, domain.CodeReview, 2, 0, "opus", 0), 0)),
			reason: workflow.RReviewsOff, flag: " --plan p",
			text: "taskie: reviews are disabled (max_reviews 0); code-review skipped. Run `taskie continue --plan p` to go on.",
		},
		{
			name:   "code-review without current_task",
			f:      okFacts(mk(domain.NextTask, domain.CodeReview, 0, 0, "opus", 0)),
			reason: workflow.RNoTask,
			text:   "taskie: code-review is due but current_task is not set; run `taskie start <task> --auto`.",
		},
		{
			name: "code-review without the task file",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.NextTask, domain.CodeReview, 3, 0, "opus", 0))
				f.TaskFileExists = false
				return f
			}(),
			reason: workflow.RNoTaskFile,
			text:   "taskie: code-review is due but task-3.md does not exist; create it or fix current_task.",
		},
		{
			name: "tasks-review without task files",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.CreateTasks, domain.TasksReview, 0, 0, "opus", 0))
				f.AnyTaskFile = false
				return f
			}(),
			reason: workflow.RNoTaskFiles,
			text:   "taskie: tasks-review is due but no task file listed in tasks.md exists; write the task-T.md files first.",
		},
		{
			name:   "illegal next_phase",
			f:      okFacts(mk(domain.NewPlan, domain.CodeReview, 3, 0, "opus", 0)),
			reason: workflow.RIllegalNext,
			text:   "taskie: next_phase \"code-review\" cannot follow phase \"new-plan\", so no review ran. Fix state.json with `taskie set next_phase …` (legal after new-plan: \"plan-review\", \"create-tasks\") or `taskie pause`.",
		},
		{
			name: "untrusted config",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1))
				f.Untrusted = ".taskie/config.json is not trusted; run `taskie trust`"
				return f
			}(),
			reason: workflow.RUntrusted,
			text:   "taskie: .taskie/config.json is not trusted; run `taskie trust`; no review ran.",
		},
		{
			name: "another stop reviews",
			f: func() workflow.StopFacts {
				f := okFacts(mk(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1))
				f.Lock = workflow.LockBusy
				return f
			}(),
			reason: workflow.RReviewRunning,
			text:   "taskie: a review of plan \"p\" is already running (another stop or session); this stop is allowed.",
		},
		{
			name:   "reminder block names the review and the post-review file",
			f:      okFacts(mk(domain.CodeReview, domain.PostCodeReview, 3, 2, "sonnet", 0)),
			reason: workflow.RPostOwedRemind, block: true, partial: true,
			text: "  .taskie/plans/p/task-3-review-2.md\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := v
			v.planFlag = tc.flag
			d, res := decideAndRender(t, tc.f, v)
			if d.Reason != tc.reason {
				t.Fatalf("Decide = %+v, want reason %s", d, tc.reason)
			}
			got := res.Message
			if tc.block {
				got = res.Reason
			}
			if res.Block != tc.block {
				t.Errorf("block = %v, want %v (%+v)", res.Block, tc.block, res)
			}
			if tc.partial && !strings.Contains(got, tc.text) || !tc.partial && got != tc.text {
				t.Errorf("rendered\n%q\nwant\n%q", got, tc.text)
			}
		})
	}
}

// Blocks whose repetition only the session memory bounds say so; the
// reminder and the recovered review's block name the exact files.
func TestRenderReviewBlocks(t *testing.T) {
	v := testView(nil)
	_, rem := decideAndRender(t, okFacts(mk(domain.CodeReview, domain.PostCodeReview, 3, 2, "sonnet", 0)), v)
	if !rem.Block || !rem.needsMemory {
		t.Errorf("reminder = %+v, want a block that needs the session memory", rem)
	}
	for _, want := range []string{".taskie/plans/p/task-3-review-2.md", ".taskie/plans/p/task-3-post-review-2.md",
		"still owed", "taskie done post-code-review", "taskie pause", "code review 3"} {
		if !strings.Contains(rem.Reason, want) {
			t.Errorf("reminder lacks %q:\n%s", want, rem.Reason)
		}
	}

	_, inv := decideAndRender(t, func() workflow.StopFacts {
		f := okFacts(mk(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1))
		f.Violations = []string{"x (rule 1)"}
		return f
	}(), v)
	if !inv.Block || !inv.needsMemory {
		t.Errorf("validation block = %+v, want a block that needs the session memory", inv)
	}

	recovered := mk(domain.CodeReview, domain.PostCodeReview, 3, 3, "sonnet", 0)
	d := workflow.StopDecision{Action: workflow.Block, Reason: workflow.RRecoveredBlock, Save: recovered,
		Mark: &workflow.Mark{Phase: domain.CodeReview, Task: 3, Iteration: 3}, Review: domain.CodeReview, Task: 3, Iteration: 3, Model: "opus"}
	v.s = mk(domain.PostCodeReview, domain.CodeReview, 3, 2, "opus", 1) // the state before the recovery
	res := renderSafely(t, d, v)
	if !res.Block {
		t.Fatalf("recovered review = %+v, want a block", res)
	}
	for _, want := range []string{"code review 3 of task 3", ".taskie/plans/p/task-3-review-3.md", ".taskie/plans/p/task-3-post-review-3.md",
		"(model opus)", "taskie done post-code-review", "code review 4"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("recovered review block lacks %q:\n%s", want, res.Reason)
		}
	}
}

func TestRenderAdvanced(t *testing.T) {
	v := testView(nil)
	if got := advanced(v, domain.CodeReview, domain.CompleteTask, false); got.Block ||
		got.Message != "taskie: code-review passed (two clean reviews in a row). Commit the task's work now (`git add` and `git commit`): taskie marks the task done when it sees the commit. Run /taskie:continue-plan to start the next task." {
		t.Errorf("advance = %+v", got)
	}
	if got := advanced(v, domain.PlanReview, domain.CreateTasks, false); got.Message != "taskie: plan-review passed (two clean reviews in a row). Run /taskie:continue-plan to create the tasks." {
		t.Errorf("advance = %+v", got)
	}
	v.planFlag = " --plan p"
	got := advanced(v, domain.AllCodeReview, domain.Complete, true)
	if !got.Block || got.Reason != "taskie: all-code-review passed (two clean reviews in a row). Autopilot is on: run `taskie continue --plan p` now and do what it says (record the plan as complete)." {
		t.Errorf("autopilot advance = %+v", got)
	}
}
