package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// taskResultOpts are the options of `taskie task result`.
type taskResultOpts struct {
	s                                       *Streams
	g                                       *globals
	task, status, commit, as, note, summary string
	asJSON, force                           bool
	token                                   int64
}

// resultView is a stored result with --json (and without --status).
type resultView struct {
	parallel.Result
	Agent   string    `json:"agent,omitempty"`
	Note    string    `json:"note,omitempty"`
	Attempt int       `json:"attempt,omitempty"`
	Action  string    `json:"action,omitempty"` // after a failure: retry, skip, escalate
	At      time.Time `json:"at"`
}

const taskResultLong = `Store a subagent's result for a task and print its one-line reference,
{"task":3,"commit":"…","status":"complete"}, which the subagent returns to
its orchestrator instead of its whole report. The result goes to the plan's
coordination log, beside the claims, where every worktree sees it; without
--status, the latest stored result of the task is printed.

--status complete needs a commit: --commit, else the HEAD of the task's
worktree. A commit that is still the worktree's HEAD at the claim is refused
(the task produced nothing); for a task without a worktree, the HEAD of the
checkout it was claimed from. The claim stays until the orchestrator has
merged the work and runs ` + "`taskie release`" + `; meanwhile the task is not ready.

--status failed counts a failed attempt. A task is retried up to 2 times: the
agent's claim (--as) is released and the task is ready again; tasks.md goes
back to pending only when the lifecycle has the task pending (a task whose
work went on keeps its state and says in-progress). After that it
is recorded in state.json's failed_tasks and, by on_exhausted, skipped (the
other tasks go on) or escalated (the plan is paused for a human; ` + "`taskie\nresume`" + ` continues).

A task another agent holds a live claim on takes results from its holder only
(--as); --force stores one anyway, recorded as an override of the holder.
The holder's fencing token is presented (--token, TASKIE_CLAIM_TOKEN, or the
one recorded when it claimed the task from here): a holder whose claim was
taken over or released is refused by it, even with --force.`

func newTaskResultCmd(s *Streams, g *globals) *cobra.Command {
	return newTaskResultCmdWith(s, g, runTaskResult)
}

func newTaskResultCmdWith(s *Streams, g *globals, run func(*taskResultOpts) error) *cobra.Command {
	o := &taskResultOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "result <task> [--status complete|failed] [--commit SHA] [--as AGENT] [--note TEXT]",
		Short: "Store a subagent's task result and print its one-line reference",
		Long:  taskResultLong,
		Example: "  taskie task result 3 --commit 1a2b3c4 --status complete --as worker-1\n" +
			"  taskie task result 3 --status failed --as worker-1 --note \"tests time out\"\n  taskie task result 3",
		Args: exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.status, "status", "", "complete or failed (none: show the stored result)")
	c.Flags().StringVar(&o.commit, "commit", "", "the commit holding the task's work (complete)")
	c.Flags().StringVar(&o.as, "as", "", "the agent reporting (default $TASKIE_AGENT); its claim is released after a failure")
	c.Flags().StringVar(&o.note, "note", "", "one line about the result")
	c.Flags().StringVar(&o.summary, "summary", "", "what the task did, for its output file task-T-output.md (default: --note)")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the stored result as JSON")
	c.Flags().BoolVar(&o.force, "force", false, "store it although another agent holds the task's live claim (recorded)")
	addTokenFlag(c, &o.token)
	return c
}

func runTaskResult(o *taskResultOpts) error {
	s := o.s
	cp, err := o.g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	task, err := cp.p.TaskID(o.task)
	if err != nil {
		return usageErr(err, "")
	}
	switch o.status {
	case "":
		return showResult(s, cp, task, o.asJSON)
	case parallel.ResultComplete:
		return resultComplete(s, cp, task, o)
	case parallel.ResultFailed:
		return resultFailed(s, cp, task, o)
	}
	return usageErr(fmt.Errorf("--status %q: must be %q or %q", o.status, parallel.ResultComplete, parallel.ResultFailed), "")
}

// optionalAgent is --as or $TASKIE_AGENT when given, checked.
func optionalAgent(flag string) (string, error) {
	if strings.TrimSpace(flag) == "" && strings.TrimSpace(os.Getenv(agentEnv)) == "" {
		return "", nil
	}
	return agentName(flag)
}

// hexSHA matches a commit id as written; compiled on first use.
var hexSHA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`) })

// resultCommit resolves the commit of a complete result to a full id: the
// one given, else HEAD of the task's worktree.
func resultCommit(cp *coordPlan, task domain.TaskID, given string, w store.Worktree, hasWT bool) (string, error) {
	where := cp.p.Repo.Root
	if hasWT {
		where = w.Path
	}
	if given == "" {
		if !hasWT {
			return "", usageErr(fmt.Errorf("task %d: --commit is required (the task has no worktree whose HEAD taskie could take)", task), "")
		}
		head, err := gitwt.Head(w.Path)
		if err != nil {
			return "", err
		}
		return head, nil
	}
	sha, err := gitwt.Commit(where, given)
	if errors.Is(err, gitwt.ErrNotRepo) && hexSHA().MatchString(given) {
		return strings.ToLower(given), nil // no git here: taken as written
	}
	if err != nil {
		return "", usageErr(err, "")
	}
	return sha, nil
}

func resultComplete(s *Streams, cp *coordPlan, task domain.TaskID, o *taskResultOpts) error {
	agent, err := optionalAgent(o.as)
	if err != nil {
		return err
	}
	if wl, ok := cp.c.(lifeWriter); ok {
		// No name: this runner's identity reports, as it claims.
		return resultCompleteOne(s, cp, task, o, cmp.Or(agent, defaultAgent(cp.p.Repo.Root)), wl)
	}
	guard, err := cp.guardWrite(s, task, agent, o.token, o.force, "task result")
	if err != nil {
		return err
	}
	agent = guard.actor
	commit, base, err := resultBase(cp, task, o.commit)
	if err != nil {
		return err
	}
	out := plan.TaskOutputFile(int(task))
	m := lifeMove{task: task, reason: "task " + task.String() + " result complete", step: completeStep(reviewsOff(cp), agent),
		head: cp.p.Repo.Root, files: map[string][]byte{out: cp.outputFile(task, commit, base, agent, cmp.Or(o.summary, o.note))}}
	if err := cp.preview(m); err != nil {
		return moveErr(cp.p, err)
	}
	ev := events.Event{Task: task.String(), Event: store.EventTaskResult, Actor: agent,
		Meta: events.Meta(events.TaskResultMeta{Status: parallel.ResultComplete, Commit: commit, Output: out, Note: o.note, Forced: guard.forced()})}
	if err := guard.appendEvents(ev); err != nil {
		return err
	}
	guard.done()
	if _, err := cp.commitLife(s, m); err != nil {
		return fmt.Errorf("task %d: the result is stored, but its lifecycle move and %s were not written: %w (run the same command again)", task, out, err)
	}
	fmt.Fprintf(s.Err, "task %d: result complete at %s, output in %s; merge it, release the claim and mark it done (`taskie task status %d done`)\n",
		task, shortSHA(commit), out, task)
	fmt.Fprintln(s.Out, parallel.ResultRefTo(task, commit, parallel.ResultComplete, store.Rel(cp.p.ID, out)))
	return nil
}

// resultCompleteOne stores a complete result in one round trip of a
// shared store: the fence, the result, the task's latest result status
// and its lifecycle move in one statement (docs/fleet.md, "One round
// trip"); the rules decide again on the claim the statement found. The
// output file is written to the clone.
func resultCompleteOne(s *Streams, cp *coordPlan, task domain.TaskID, o *taskResultOpts, agent string, wl lifeWriter) error {
	f, err := cp.fenceOf(task, agent, o.token)
	if err != nil {
		return err
	}
	commit, base, err := resultBase(cp, task, o.commit)
	if err != nil {
		return err
	}
	out := plan.TaskOutputFile(int(task))
	step := completeStep(reviewsOff(cp), agent)
	meta := events.TaskResultMeta{Status: parallel.ResultComplete, Commit: commit, Output: out, Note: o.note}
	ev := events.Event{Task: task.String(), Event: store.EventTaskResult, Actor: agent, Meta: events.Meta(meta)}
	moves := lifeMovesAt(cp.p.ID, step, agent, cp.p.Repo.Root)
	var res store.Written
	if o.force {
		// The holder overridden is the one the statement finds.
		meta.Forced = events.Forced{ForcedOver: store.HolderMarker, Agent: agent}
		forced := ev
		forced.Meta = events.Meta(meta)
		res, err = wl.AppendForcedLife(cp.ctx, cp.key, task, agent, f, moves, store.Override{Command: "task result", Forced: []events.Event{forced}}, ev)
	} else {
		res, err = wl.AppendWriteLife(cp.ctx, cp.key, task, agent, f, moves, ev)
	}
	if err != nil {
		return err
	}
	d := parallel.DecideWriteAt(task, res.Found, agent, f, o.force, res.Now)
	if d.Outcome == parallel.WriteForced && res.Written {
		fmt.Fprintf(s.Err, "taskie: warning: task %d: task result by %s over the claim of %s (--force)\n", task, who(agent), d.Holder.Agent)
	}
	switch {
	case d.Outcome == parallel.WriteRefused && res.Written:
		return fmt.Errorf("task %d: the database stored the result, and taskie's rules refuse it (%v): the database's statement and the rules disagree; report it", task, d.Err)
	case d.Outcome == parallel.WriteRefused:
		if h := fenceHint(d.Err, task, agent); h != "" {
			return &exitError{code: ExitProblems, err: fmt.Errorf("task result: %w", d.Err), hint: h}
		}
		return &exitError{code: ExitProblems, err: fmt.Errorf("task result: %w", d.Err),
			hint: fmt.Sprintf("only its holder writes to it (--as %s, or TASKIE_AGENT=%s); to override it deliberately, add --force (recorded); or wait for `taskie release %d --as %s`",
				d.Holder.Agent, d.Holder.Agent, task, d.Holder.Agent)}
	case !res.Written:
		return moveErr(cp.p, lifeRefusal(task, res.LifeKey, step, res.Now))
	}
	sayLife(s, res.Lines)
	content := cp.outputFile(task, commit, base, agent, cmp.Or(o.summary, o.note))
	if err := cp.p.Update(func(*store.Snapshot) (store.Change, error) {
		return store.Change{Files: map[string][]byte{out: content}}, nil
	}); err != nil {
		return fmt.Errorf("task %d: the result is stored, but %s was not written: %w (run the same command again)", task, out, err)
	}
	fmt.Fprintf(s.Err, "task %d: result complete at %s, output in %s; merge it, release the claim and mark it done (`taskie task status %d done`)\n",
		task, shortSHA(commit), out, task)
	fmt.Fprintln(s.Out, parallel.ResultRefTo(task, commit, parallel.ResultComplete, store.Rel(cp.p.ID, out)))
	return nil
}

// outputFile is task-T-output.md: the task, its status, commit and agent,
// the files its commit changed since base (the worktree's start, else
// the checkout's HEAD at the claim) as git lists them, and the summary.
func (cp *coordPlan) outputFile(task domain.TaskID, commit, base, agent, summary string) []byte {
	var b strings.Builder
	title := cp.titles()[task]
	fmt.Fprintf(&b, "# Task %d", task)
	if title != "" {
		b.WriteString(": " + title)
	}
	fmt.Fprintf(&b, "\n\n## Status: complete\n## Commit: %s\n", commit)
	if agent != "" {
		fmt.Fprintf(&b, "## Agent: %s\n", agent)
	}
	b.WriteString("\n## Files Changed\n")
	files, err := []string(nil), error(nil)
	if base != "" {
		files, err = gitwt.ChangedFiles(cp.p.Repo.Root, base, commit)
	}
	switch {
	case base == "":
		b.WriteString("(not known: no worktree or claim recorded where the task started)\n")
	case err != nil:
		fmt.Fprintf(&b, "(not known: %v)\n", err)
	case len(files) == 0:
		b.WriteString("(none)\n")
	}
	for _, f := range files {
		b.WriteString("- " + f + "\n")
	}
	b.WriteString("\n## Summary\n")
	if strings.TrimSpace(summary) == "" {
		summary = "(none given: `taskie task result --summary`)"
	}
	b.WriteString(strings.TrimSpace(summary) + "\n")
	return []byte(b.String())
}

func resultFailed(s *Streams, cp *coordPlan, task domain.TaskID, o *taskResultOpts) error {
	agent, err := optionalAgent(o.as)
	if err != nil {
		return err
	}
	if fl, ok := cp.c.(failWriter); ok && !o.force {
		// No name: this runner's identity reports, as it claims.
		return resultFailedOne(s, cp, task, o, cmp.Or(agent, defaultAgent(cp.p.Repo.Root)), fl)
	}
	guard, err := cp.guardWrite(s, task, agent, o.token, o.force, "task result")
	if err != nil {
		return err
	}
	agent = guard.actor
	res, err := cp.results()
	if err != nil {
		return err
	}
	onExhausted := cp.onExhausted()
	if err := cp.preview(lifeMove{task: task, step: failStep(false, agent)}); err != nil {
		return moveErr(cp.p, err)
	}
	attempt := res.failures[task] + 1
	d := parallel.AfterFailure(attempt, parallel.DefaultMaxRetries, onExhausted)
	ev := events.Event{Task: task.String(), Event: store.EventTaskResult, Actor: agent, Reason: d.Msg,
		Meta: events.Meta(events.TaskResultMeta{Status: parallel.ResultFailed, Attempt: attempt, Action: d.Action.String(), Note: o.note, Forced: guard.forced()})}
	if err := guard.appendEvents(ev); err != nil {
		return err
	}
	guard.done()
	released := false
	if agent != "" {
		if rd, err := cp.c.Release(cp.ctx, cp.key, task, agent, guard.fence); err == nil && rd.Outcome == parallel.Released {
			released = true
			fmt.Fprintf(s.Err, "task %d: claim of %s released\n", task, agent)
		}
	}
	m := lifeMove{task: task, reason: "task " + task.String() + " result failed", step: failStep(released, agent)}
	if _, err := cp.commitLife(s, m); err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: task %d: the failure is stored, but its lifecycle did not count it: %v\n", task, err)
	}
	return cp.afterFailed(s, task, d, func() string { return cp.liveHolder(task) })
}

// onExhausted is the plan's on_exhausted setting: skip when it has none,
// escalate when it cannot be read.
func (cp *coordPlan) onExhausted() parallel.OnExhausted {
	onExhausted := parallel.Skip
	if cfg, err := implied.Config(cp.p); err == nil {
		if onExhausted, err = parallel.ParseOnExhausted(cfg.OnExhausted); err != nil {
			onExhausted = parallel.Escalate
		}
	}
	return onExhausted
}

// afterFailed acts on a stored failed result's decision d and says what
// comes next; holder names the claim's live holder still ("" for none),
// asked only for a task to be retried.
func (cp *coordPlan) afterFailed(s *Streams, task domain.TaskID, d parallel.RetryDecision, holder func() string) error {
	if d.Failed {
		if err := cp.recordFailed(task, d); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.Err, "task %d: %s\n", task, d.Msg)
	switch d.Action {
	case parallel.Retry:
		if err := cp.backToPending(s, task); err != nil {
			return err
		}
		if h := holder(); h != "" {
			fmt.Fprintf(s.Err, "task %d is ready again once %s releases it (`taskie release %d --as %s`) or its lease expires\n", task, h, task, h)
			break
		}
		fmt.Fprintf(s.Err, "task %d is ready again: `taskie claim --next` gives it to the next agent\n", task)
	case parallel.EscalateTask:
		fmt.Fprintf(s.Err, "plan %s is paused until a human decides: `taskie resume%s` continues\n", cp.p.ID, cp.p.PlanFlag())
	}
	fmt.Fprintln(s.Out, parallel.ResultRef(task, "", parallel.ResultFailed))
	return nil
}

// failWriter writes a failed result in one round trip, with the release
// of the writer's claim and the lifecycle move.
type failWriter interface {
	TaskLife(ctx context.Context, p store.PlanKey, task domain.TaskID, kinds []string) ([][]byte, int64, error)
	AppendFailLife(ctx context.Context, p store.PlanKey, task domain.TaskID, agent string, f domain.Fence, w store.FailWrite) (store.Failed, error)
}

// failLines are the lifecycle lines of step on task's shared record as
// read (lines; created in pending first when it has none), their time
// left for the store to set.
func failLines(planID string, task domain.TaskID, lines [][]byte, step lifeStep) ([][]byte, error) {
	fold := history.NewLifecycle()
	var l events.Lean
	for _, line := range lines {
		if events.ParseLean(line, &l) == nil {
			fold.Add(&l)
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	t, ok := fold.Tasks()[task]
	var pre []lifecycle.Effect
	if ok {
		now = latest(now, t.Since)
	} else {
		var err error
		if t, pre, err = lifecycle.New(task, lifecycle.ActorAgent, now); err != nil {
			return nil, err
		}
	}
	_, effs, err := step(t, now)
	if err != nil {
		if lifecycle.Refused(err) {
			err = &refusal{err: err, task: t, actor: lifecycle.ActorAgent}
		}
		return nil, err
	}
	var out [][]byte
	for _, e := range lifecycle.Events(append(pre, effs...)) {
		e.Plan, e.TS = planID, store.TimeSentinel
		b, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// latest is the later of two times.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// resultFailedOne stores a failed result in one round trip of a shared
// store (docs/fleet.md, "One round trip"): the fence, the attempt it
// counts, the result, the release of the agent's claim and the lifecycle
// move in one statement; the rules decide again on the claim it found.
// failed_tasks and tasks.md are the clone's files, written after.
func resultFailedOne(s *Streams, cp *coordPlan, task domain.TaskID, o *taskResultOpts, agent string, fl failWriter) error {
	f, err := cp.fenceOf(task, agent, o.token)
	if err != nil {
		return err
	}
	onExhausted := cp.onExhausted()
	// One line per attempt up to the first exhausted one, that last one
	// standing for every attempt after it.
	var w store.FailWrite
	for n := 1; n <= parallel.DefaultMaxRetries+2; n++ {
		if n == parallel.DefaultMaxRetries+2 {
			n = store.AttemptMarker
		}
		d := parallel.AfterFailure(n, parallel.DefaultMaxRetries, onExhausted)
		ev := events.Event{TS: store.TimeSentinel, Plan: cp.p.ID, Task: task.String(), Event: store.EventTaskResult, Actor: agent, Reason: d.Msg,
			Meta: events.Meta(events.TaskResultMeta{Status: parallel.ResultFailed, Attempt: n, Action: d.Action.String(), Note: o.note})}
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		w.Results = append(w.Results, line)
	}
	// The failure counts on the task's shared record as it is: read, the
	// lines decided on it, and written only while it is unchanged (read
	// again when another write came between).
	snap, err := cp.p.Snapshot()
	life := err == nil && snap.State != nil // else no lifecycle, as commitLife
	var res store.Failed
	for try := 0; ; try++ {
		lines, at, err := fl.TaskLife(cp.ctx, cp.key, task, history.LifecycleKinds())
		if err != nil {
			return err
		}
		w.At, w.Kept, w.Released = at, nil, nil
		if life {
			if w.Kept, err = failLines(cp.p.ID, task, lines, failStep(false, agent)); err != nil {
				return moveErr(cp.p, err)
			}
			if w.Released, err = failLines(cp.p.ID, task, lines, failStep(true, agent)); err != nil {
				return moveErr(cp.p, err)
			}
		}
		if res, err = fl.AppendFailLife(cp.ctx, cp.key, task, agent, f, w); err != nil {
			return err
		}
		if res.Written.Written || res.At == at || try == 4 {
			break
		}
	}
	wd := parallel.DecideWriteAt(task, res.Found, agent, f, false, res.Now)
	switch {
	case wd.Outcome == parallel.WriteRefused && res.Written.Written:
		return fmt.Errorf("task %d: the database stored the result, and taskie's rules refuse it (%v): the database's statement and the rules disagree; report it", task, wd.Err)
	case wd.Outcome == parallel.WriteRefused:
		return refusedWrite("task result", task, agent, wd)
	case !res.Written.Written:
		return &exitError{code: ExitProblems, err: fmt.Errorf("task %d: its shared lifecycle record kept changing while the failure was written; nothing was stored", task),
			hint: "run the same command again"}
	}
	if res.Released {
		cp.dropHeld(task, agent, f)
		fmt.Fprintf(s.Err, "task %d: claim of %s released\n", task, agent)
	}
	sayLife(s, res.Lines)
	d := parallel.AfterFailure(res.Attempt, parallel.DefaultMaxRetries, onExhausted)
	return cp.afterFailed(s, task, d, func() string {
		if h := res.Found; !res.Released && h != nil && h.Live(res.Now) {
			return h.Agent
		}
		return ""
	})
}

// backToPending sets a task to be retried back to pending in tasks.md
// when it is in progress there and the lifecycle has it pending (or no
// record of it): the two say one status. A task whose work went on in
// the lifecycle (in_progress and on) keeps its state and its rendering;
// its failed result makes it ready again (parallel.Task.Retry).
func (cp *coordPlan) backToPending(s *Streams, task domain.TaskID) error {
	moved := false
	// Judged on the snapshot under the plan lock: a status set meanwhile
	// (done by the orchestrator) is never overwritten.
	err := cp.p.Update(func(snap *store.Snapshot) (store.Change, error) {
		if snap.Tasks == nil {
			return store.Change{}, nil
		}
		r, ok := taskrec.Find(taskrec.OfFiles(snap.Tasks, snap.State), task)
		if !ok || !r.Row || r.Cell != plan.StatusInProgress || r.Recorded && !lifecycle.Agrees(r.State, plan.StatusPending) {
			return store.Change{}, nil
		}
		moved = true
		return store.Change{Actor: "cli", Reason: "retry after a failed attempt", Kind: events.TaskStatus, Task: task,
			Statuses: map[domain.TaskID]string{task: plan.StatusPending}}, nil
	})
	if err != nil {
		return fmt.Errorf("task %d: setting it back to pending for its retry: %w", task, err)
	}
	if moved {
		fmt.Fprintf(s.Err, "task %d: status in-progress → pending in tasks.md, for its retry\n", task)
	}
	return nil
}

// liveHolder is the agent holding a live lease on task, "" when none.
func (cp *coordPlan) liveHolder(task domain.TaskID) string {
	claims, err := cp.c.Claims(cp.ctx, cp.key)
	if err != nil {
		return ""
	}
	now, err := cp.now()
	if err != nil {
		return ""
	}
	for _, c := range claims {
		if c.Task == task && c.Live(now) {
			return c.Agent
		}
	}
	return ""
}

// recordFailed adds task to failed_tasks in state.json; escalation also
// pauses the plan, so that no agent claims anything until a human resumes.
func (cp *coordPlan) recordFailed(task domain.TaskID, d parallel.RetryDecision) error {
	_, _, err := changeWith(cp.p, "task "+task.String()+" failed", true, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
		n := cur.Clone()
		if !slices.Contains(n.FailedTasks, task) {
			n.FailedTasks = append(n.FailedTasks, task)
		}
		kind := events.FieldSet
		if d.Action == parallel.EscalateTask {
			off := false
			n.Enabled, kind = &off, events.Paused
		}
		return store.Change{State: n, Kind: kind, Task: task,
			Meta: events.Meta(events.FieldSetMeta{Field: "failed_tasks", Task: task.String(), Action: d.Action.String()})}, nil
	})
	return err
}

func showResult(s *Streams, cp *coordPlan, task domain.TaskID, asJSON bool) error {
	res, err := cp.results()
	if err != nil {
		return err
	}
	e, ok := res.latest[task]
	if !ok {
		return &exitError{code: ExitProblems, err: fmt.Errorf("task %d has no result yet", task),
			hint: fmt.Sprintf("a subagent stores it with `taskie task result %d --status complete --commit <sha>`", task)}
	}
	m := resultOf(e)
	v := resultView{Result: parallel.Result{Task: task, Commit: m.Commit, Status: resultStatus(e)}, Agent: e.Actor, At: e.TS,
		Note: m.Note, Action: m.Action, Attempt: m.Attempt}
	if m.Output != "" {
		v.Output = store.Rel(cp.p.ID, m.Output)
	}
	if asJSON {
		return writeJSON(s.Out, v)
	}
	fmt.Fprintln(s.Out, parallel.ResultRefTo(task, m.Commit, v.Status, v.Output))
	if v.Note != "" {
		fmt.Fprintf(s.Err, "note: %s\n", v.Note)
	}
	return nil
}

// resultBase is the commit a complete result reports and the commit its
// work started from (the worktree's base, or HEAD at the claim); a commit
// that is where the claim started is refused: the task produced none.
func resultBase(cp *coordPlan, task domain.TaskID, given string) (commit, base string, err error) {
	ws, err := cp.files.Worktrees(cp.key)
	if err != nil {
		return "", "", err
	}
	w, hasWT := store.FindWorktree(ws, task)
	if commit, err = resultCommit(cp, task, given, w, hasWT); err != nil {
		return "", "", err
	}
	if hasWT {
		if commit == w.Since() {
			return "", "", &exitError{code: ExitProblems,
				err:  fmt.Errorf("task %d: commit %s is the worktree's HEAD at the claim: the task has produced no commit", task, shortSHA(commit)),
				hint: "commit the work in " + w.Path + " first, or report `--status failed`"}
		}
		return commit, w.BaseSHA, nil
	}
	if dir, since, ok, err := cp.files.ClaimBase(cp.key, task); err == nil && ok {
		if commit == since {
			return "", "", &exitError{code: ExitProblems,
				err:  fmt.Errorf("task %d: commit %s is the HEAD of %s at the claim: the task has produced no commit", task, shortSHA(commit), dir),
				hint: "commit the work first, or report `--status failed`"}
		}
		return commit, since, nil
	}
	return commit, "", nil
}

// reviewsOff reports whether the plan runs without reviews (max_reviews 0):
// a complete result then goes straight to committing.
func reviewsOff(cp *coordPlan) bool {
	st, err := cp.p.State()
	return err == nil && st.MaxReviews == 0
}
