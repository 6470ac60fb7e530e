package cli

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

// claimOpts are the options of claim, heartbeat and release.
type claimOpts struct {
	s      *Streams
	g      *globals
	task   string
	as     string
	ttl    time.Duration
	next   bool
	retry  bool
	force  bool  // release: another agent's claim
	token  int64 // heartbeat, release: the fencing token presented
	asJSON bool
}

// claimView is a claim decision on stdout with --json.
type claimView struct {
	Task     string        `json:"task"`
	Agent    string        `json:"agent"`
	Outcome  string        `json:"outcome"` // granted, renewed, takeover, released
	Acquired time.Time     `json:"acquired"`
	Expires  time.Time     `json:"expires"`
	Token    int64         `json:"token"`
	Place    string        `json:"place,omitempty"`
	Previous *previousView `json:"previous,omitempty"`
	Worktree string        `json:"worktree,omitempty"`
}

type previousView struct {
	Agent   string    `json:"agent"`
	Expires time.Time `json:"expires"`
}

const claimLong = `Claim a task for an agent, with a lease. Exactly one agent wins a task,
however many claim it at once: the claims live in the git common directory
(<git common dir>/taskie/<plan>/claims.json), which every worktree of the
clone shares (.taskie/coord/<plan>/ outside git).

A lease lasts --ttl (lease_ttl, default 30m; at most 24h); ` + "`taskie heartbeat`" + ` renews it. A
lease that has expired can be claimed by another agent: the takeover is an
event of the coordination log. Claiming a task you hold renews it.

--next claims the first ready task (` + "`taskie ready`" + ` order); an agent that holds
a live lease gets the first of its tasks back, in the same order. stdout: the
task id (--json: the claim).

A task recorded in failed_tasks (it failed its retries) or whose result is
complete (its work waits to be merged) is refused. --retry claims it anyway,
deliberately: the task leaves failed_tasks, its failures count from zero
again and a complete result no longer stands.

Without --as or TASKIE_AGENT the agent is this runner's identity: machine,
clone, worktree and session (` + "`taskie status`" + ` shows it). A name already
holding a live claim from another place (machine, clone, worktree) is
refused: two runners must not share a claim.

Every claim granted or taken over gets a fencing token, higher than every
token the task had (stderr, and --json "token"). Heartbeats, results, moves
and releases present it — --token, TASKIE_CLAIM_TOKEN, or by default the
token this clone recorded for the agent's claim from this place — and a
stale one (the claim was taken over or released) is refused.

Exit 1 when the claim is refused: another agent holds it, no task is ready,
the task is done, failed or complete, the name is in use elsewhere, or the
plan is paused.`

func newClaimCmd(s *Streams, g *globals) *cobra.Command { return newClaimCmdWith(s, g, runClaim) }

func newClaimCmdWith(s *Streams, g *globals, run func(*claimOpts) error) *cobra.Command {
	o := &claimOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "claim [<task> [--retry] | --next] --as AGENT [--ttl 30m]",
		Short: "Claim a task for an agent, with a lease (one winner, whatever the concurrency)",
		Long:  claimLong,
		Example: "  taskie claim 3 --as worker-1\n  taskie claim --next --as worker-2 --ttl 1h\n" +
			"  TASKIE_AGENT=worker-3 taskie claim --next --json",
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			switch {
			case o.next && len(args) > 0:
				return usageErr(errors.New("give a task or --next, not both"), "usage: taskie claim [<task> | --next] --as AGENT")
			case !o.next && len(args) == 0:
				return usageErr(errors.New("which task? give its id, or --next for the first ready one"), "usage: taskie claim [<task> | --next] --as AGENT")
			case o.next && o.retry:
				return usageErr(errors.New("--retry names its task: give it, not --next"), "usage: taskie claim <task> --retry --as AGENT")
			}
			o.task = firstArg(args)
			return run(o)
		},
	}
	addAgentFlags(c, o, true)
	c.Flags().BoolVar(&o.next, "next", false, "claim the first ready task")
	c.Flags().BoolVar(&o.retry, "retry", false, "claim a failed or completed task to do it again")
	return c
}

func newHeartbeatCmd(s *Streams, g *globals) *cobra.Command {
	return newHeartbeatCmdWith(s, g, runHeartbeat)
}

func newHeartbeatCmdWith(s *Streams, g *globals, run func(*claimOpts) error) *cobra.Command {
	o := &claimOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "heartbeat <task> --as AGENT [--ttl 30m]",
		Short: "Renew an agent's lease on a task it claimed",
		Long: `Renew the agent's lease on a task: it now expires --ttl from now. Only the
holder may renew; a lease that expired is revived if nobody took it over.
Allowed on a paused plan (the holder keeps its task). Exit 1 when refused.`,
		Example: "  taskie heartbeat 3 --as worker-1",
		Args:    exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return run(o)
		},
	}
	addAgentFlags(c, o, true)
	addTokenFlag(c, &o.token)
	return c
}

// addTokenFlag adds --token to a command that writes for a claim.
func addTokenFlag(c *cobra.Command, token *int64) {
	c.Flags().Int64Var(token, "token", 0, "the claim's fencing `token` (default $TASKIE_CLAIM_TOKEN, else the one recorded when this agent claimed it here)")
}

func newReleaseCmd(s *Streams, g *globals) *cobra.Command { return newReleaseCmdWith(s, g, runRelease) }

func newReleaseCmdWith(s *Streams, g *globals, run func(*claimOpts) error) *cobra.Command {
	o := &claimOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "release <task> --as AGENT",
		Short: "Let an agent's claim on a task go",
		Long: `Release the agent's claim on a task, so that another agent can claim it. Only
the holder may release, its lease live or expired. Exit 1 when refused.

--force releases whoever holds it — a dead agent's lease, or one that never
expires because its row was edited by hand — and records who released whose
claim (CLAIM_OVERRIDE in the coordination log).`,
		Example: "  taskie release 3 --as worker-1\n  taskie release 3 --force --as lead",
		Args:    exactArgs(1, "a task id"),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			return run(o)
		},
	}
	addAgentFlags(c, o, false)
	c.Flags().BoolVar(&o.force, "force", false, "release the claim whoever holds it (recorded)")
	addTokenFlag(c, &o.token)
	return c
}

func addAgentFlags(c *cobra.Command, o *claimOpts, ttl bool) {
	c.Flags().StringVar(&o.as, "as", "", "the agent's `name` (default $TASKIE_AGENT, else this runner's identity)")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the claim as JSON")
	if ttl {
		c.Flags().DurationVar(&o.ttl, "ttl", 0, "lease `duration`, at most 24h (default lease_ttl, 30m)")
	}
}

// leaseTTL is --ttl, else the configured lease_ttl; either is at most
// parallel.MaxLeaseTTL, so that a dead agent's claim is taken over
// within a day.
func (cp *coordPlan) leaseTTL(flag time.Duration) (time.Duration, error) {
	switch {
	case flag < 0:
		return 0, usageErr(fmt.Errorf("--ttl %s: must be positive", flag), "")
	case flag > parallel.MaxLeaseTTL:
		return 0, usageErr(fmt.Errorf("--ttl %s: a lease lasts at most %s", flag, parallel.MaxLeaseTTL),
			"renew a long task's lease with `taskie heartbeat` instead")
	case flag > 0:
		return flag, nil
	}
	cfg, err := implied.Config(cp.p)
	if err != nil {
		return domain.DefaultLeaseTTL, nil
	}
	if d := cfg.LeaseTTL.D(); d > parallel.MaxLeaseTTL {
		return 0, &exitError{code: ExitProblems, err: fmt.Errorf("lease_ttl %s: a lease lasts at most %s", d, parallel.MaxLeaseTTL),
			hint: "lower lease_ttl in .taskie/config.json (`taskie set lease_ttl 30m`), or give --ttl"}
	}
	return cfg.LeaseTTL.D(), nil
}

func runClaim(o *claimOpts) error {
	s, g := o.s, o.g
	if _, err := agentName(o.as); o.as != "" && err != nil {
		return err
	}
	cp, err := g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	agent, err := agentOrDefault(o.as, cp.p.Repo.Root)
	if err != nil {
		return err
	}
	here := domain.Fence{Place: placeOf(cp.p.Repo.Root)}
	ttl, err := cp.leaseTTL(o.ttl)
	if err != nil {
		return err
	}
	if err := cp.refuseIfPaused(); err != nil {
		return err
	}
	var d parallel.ClaimDecision
	var life []string
	oneShot := false
	rec := &claimRecords{s: s, g: g, cp: cp}
	if o.next {
		d, life, oneShot, err = claimNext(s, cp, agent, ttl, here, rec)
	} else if lc, ok := cp.c.(lifeTaskClaimer); ok && !o.retry {
		d, life, err = claimTaskOne(s, cp, o.task, agent, ttl, here, lc)
		oneShot = true
	} else {
		d, err = claimTask(s, cp, o.task, agent, ttl, o.retry, here, rec)
	}
	if err != nil {
		return err
	}
	if d.Outcome == parallel.Refused {
		if h := fenceHint(d.Err, refusedTask(d), agent); h != "" {
			return refused(d, h)
		}
		return refused(d, fmt.Sprintf("claim another task: `taskie claim --next --as %s`; `taskie ready` lists them", agent))
	}
	rec.finish(d)
	wt := rec.worktree
	switch {
	case oneShot:
		sayLife(s, life)
	case d.Outcome == parallel.Granted || d.Outcome == parallel.Takeover:
		cp.lifeAfterClaim(s, d.Claim.Task, agent)
	}
	return printClaim(s, d, wt, o.asJSON)
}

// refusedTask is the task of a refused claim, 0 when not known.
func refusedTask(d parallel.ClaimDecision) domain.TaskID {
	if d.Previous != nil {
		return d.Previous.Task
	}
	return 0
}

// claimTask claims one named task: it must exist and be open, and be
// neither failed nor complete unless retry says to do it again.
func claimTask(s *Streams, cp *coordPlan, arg, agent string, ttl time.Duration, retry bool, here domain.Fence, rec *claimRecords) (parallel.ClaimDecision, error) {
	task, err := cp.p.TaskID(arg)
	if err != nil {
		return parallel.ClaimDecision{}, usageErr(err, "")
	}
	tasks, _, err := cp.schedTasks(false)
	if err != nil {
		return parallel.ClaimDecision{}, err
	}
	for _, t := range tasks {
		if t.ID != task {
			continue
		}
		if err := unclaimable(t); err != nil {
			return parallel.ClaimDecision{}, err
		}
		if open := openDeps(tasks, t); len(open) > 0 {
			fmt.Fprintf(s.Err, "taskie: warning: task %d depends on %s, not done yet\n", task, joinIDs(open))
		}
	}
	failed, complete, err := cp.taskOutcome(task)
	if err != nil {
		return parallel.ClaimDecision{}, err
	}
	if err := refuseFinished(task, agent, failed, complete, retry); err != nil {
		return parallel.ClaimDecision{}, err
	}
	var d parallel.ClaimDecision
	if cp.c == cp.files { // the clone's records in the claim's own session
		d, err = cp.files.ClaimThen(cp.ctx, cp.key, task, agent, ttl, here, rec.record)
	} else {
		d, err = cp.c.Claim(cp.ctx, cp.key, task, agent, ttl, here)
	}
	if err == nil && retry && (failed || complete != "") && d.Outcome != parallel.Refused {
		err = cp.retryTask(s, task, agent, failed)
	}
	return d, err
}

// unclaimable refuses a task that scheduling leaves out: closed in
// tasks.md or by its lifecycle, parked, or waiting on a CTO or a human
// (parallel.StandingOf).
func unclaimable(t parallel.Task) error {
	hint := "`taskie ready` lists the tasks that can start"
	switch parallel.StandingOf(t.Status, t.Life) {
	case parallel.Schedulable:
		return nil
	case parallel.AwaitingCTO:
		return &exitError{code: ExitProblems, err: fmt.Errorf("task %d is in cto_intervention: the CTO decides how it goes on, no agent claims it meanwhile", t.ID),
			hint: fmt.Sprintf("`taskie task retry %d --actor cto` (or rollback, skip) returns it to the work; %s", t.ID, hint)}
	case parallel.WithHuman:
		return &exitError{code: ExitProblems, err: fmt.Errorf("task %d is in human_escalation: a person decides how it goes on, no agent claims it meanwhile", t.ID),
			hint: fmt.Sprintf("`taskie task resolve %d --actor human` returns it to the work; %s", t.ID, hint)}
	case parallel.Finished, parallel.Dropped:
		if t.Life == lifecycle.Completed || t.Life == lifecycle.Abandoned {
			return &exitError{code: ExitProblems, err: fmt.Errorf("task %d is %s: it is over, no agent claims it", t.ID, t.Life), hint: hint}
		}
	}
	return &exitError{code: ExitProblems, err: fmt.Errorf("task %d is %s: only pending or in-progress tasks are claimed", t.ID, t.Status), hint: hint}
}

// taskOutcome says whether task is in failed_tasks and, when its latest
// result is complete, that result's commit ("" when it is not complete;
// "?" when complete without one).
func (cp *coordPlan) taskOutcome(task domain.TaskID) (failed bool, complete string, err error) {
	failed = slices.Contains(cp.failedTasks(), task)
	res, err := cp.results()
	if err != nil {
		return false, "", err
	}
	if res.completed(task) {
		complete = cmp.Or(resultOf(res.latest[task]).Commit, "?")
	}
	return failed, complete, nil
}

// refuseFinished refuses a claim on a task no agent should take again —
// one that failed its retries, or whose work is complete and waits to be
// merged — unless retry asks for it deliberately.
func refuseFinished(task domain.TaskID, agent string, failed bool, complete string, retry bool) error {
	switch {
	case retry:
		return nil
	case failed:
		return &exitError{code: ExitProblems,
			err:  fmt.Errorf("task %d is in failed_tasks: it failed its retries, and agents leave it alone until a person decides", task),
			hint: fmt.Sprintf("to retry it deliberately: `taskie claim %d --retry --as %s` (it leaves failed_tasks and its failures count from zero)", task, agent)}
	case complete != "":
		return &exitError{code: ExitProblems,
			err:  fmt.Errorf("task %d has a complete result (commit %s): its work waits to be merged and marked done (`taskie task status %d done`)", task, shortSHA(complete), task),
			hint: fmt.Sprintf("to do it again anyway: `taskie claim %d --retry --as %s`", task, agent)}
	}
	return nil
}

// retryTask records a deliberate retry: the task leaves failed_tasks (a
// plan-store change, logged), and a TASK_RESULT with status retry resets
// its failures and sets aside its complete result.
func (cp *coordPlan) retryTask(s *Streams, task domain.TaskID, agent string, failed bool) error {
	// failed_tasks first: a retry cut off after it is still a retry (the
	// event only resets counts), and running the command again is safe.
	if failed {
		_, _, err := changeWith(cp.p, "task "+task.String()+" retried", false, func(_ *store.Snapshot, cur *state.State) (store.Change, error) {
			n := cur.Clone()
			n.FailedTasks = slices.DeleteFunc(n.FailedTasks, func(id domain.TaskID) bool { return id == task })
			return store.Change{State: n, Kind: events.FieldSet, Task: task,
				Meta: events.Meta(events.FieldSetMeta{Field: "failed_tasks", Task: task.String(), Action: "retry"})}, nil
		})
		if err != nil {
			return fmt.Errorf("task %d is claimed by %s but still in failed_tasks: %w (run the same command again)", task, agent, err)
		}
	}
	ev := events.Event{Task: task.String(), Event: store.EventTaskResult, Actor: agent,
		Reason: "claimed again deliberately (claim --retry)", Meta: events.Meta(events.TaskResultMeta{Status: parallel.ResultRetry})}
	if err := cp.c.AppendEvents(cp.ctx, cp.key, ev); err != nil {
		return fmt.Errorf("task %d is claimed by %s and out of failed_tasks, but its failures were not reset: %w (run the same command again)", task, agent, err)
	}
	fmt.Fprintf(s.Err, "task %d: retried deliberately: out of failed_tasks, failures reset\n", task)
	return nil
}

// openDeps lists t's dependencies that are not closed: neither done nor
// cancelled in tasks.md, nor completed or abandoned.
func openDeps(tasks []parallel.Task, t parallel.Task) []domain.TaskID {
	closed := map[domain.TaskID]bool{}
	for _, x := range tasks {
		closed[x.ID] = parallel.StandingOf(x.Status, x.Life).Closed()
	}
	var out []domain.TaskID
	for _, d := range t.Deps {
		if !closed[d] {
			out = append(out, d)
		}
	}
	return out
}

func joinIDs(ids []domain.TaskID) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += id.String()
	}
	return out
}

// claimNext claims the first ready task, or gives back the agent's own
// live claim on an open task (a restarted agent resumes its work).
func claimNext(s *Streams, cp *coordPlan, agent string, ttl time.Duration, here domain.Fence, rec *claimRecords) (d parallel.ClaimDecision, life []string, oneShot bool, err error) {
	noneReady := func() error {
		return &exitError{code: ExitProblems, err: fmt.Errorf("plan %s: no task is ready to claim", cp.p.ID),
			hint: "every open task is claimed or waits on a dependency; `taskie ready` and `taskie status` show which"}
	}
	if lc, ok := cp.c.(lifeClaimer); ok {
		// One round trip: the statement leaves out the tasks held live by
		// others and those whose result is complete, gives the agent its
		// own live claim first, and takes an in-progress task only when it
		// was claimed (its lease ran out) or its last result failed.
		tasks, _, err := cp.schedTasksOf(false, false)
		if err != nil {
			return d, nil, false, err
		}
		var inProgress []domain.TaskID
		for i := range tasks {
			if tasks[i].Status == plan.StatusInProgress {
				tasks[i].Retry = true // decided in the statement
				inProgress = append(inProgress, tasks[i].ID)
			}
		}
		failed := cp.failedTasks()
		var ids []domain.TaskID
		for _, t := range parallel.Ready(tasks, nil, time.Time{}) {
			if !slices.Contains(failed, t.ID) {
				ids = append(ids, t.ID)
			}
		}
		d, ok, life, err := lc.ClaimNextLife(cp.ctx, cp.key, ids, inProgress, agent, ttl, here, lifeMoves(cp.p.ID, claimStep(agent), agent))
		if err == nil && !ok {
			err = noneReady()
		}
		return d, life, true, err
	}
	// The results are read once, for the schedule and for what is skipped.
	res, err := cp.results()
	if err != nil {
		return d, nil, false, err
	}
	cp.known = &res
	defer func() { cp.known = nil }()
	tasks, _, err := cp.schedTasks(false)
	if err != nil {
		return d, nil, false, err
	}
	skip, err := cp.finished()
	if err != nil {
		return d, nil, false, err
	}
	// Which tasks to try, in order, decided on the claims as found: the
	// agent's own live claim alone (renewed), else the ready tasks nobody
	// holds live.
	pick := func(claims []parallel.Claim, now time.Time) (ids []domain.TaskID, own bool) {
		// Its own claims made from another place are not this runner's to resume.
		mine := slices.DeleteFunc(slices.Clone(claims), func(c parallel.Claim) bool {
			return c.Agent == agent && c.Place != "" && c.Place != here.Place
		})
		if t, ok := parallel.OwnLive(tasks, mine, agent, now, skip); ok {
			return []domain.TaskID{t}, true
		}
		for _, t := range readyExcept(tasks, claims, now, skip) {
			ids = append(ids, t.ID)
		}
		return ids, false
	}
	if cp.c == cp.files {
		// One session under the lock: the claims read once, the claim
		// decided and written, and the clone's records of it.
		var late error
		order := func(claims []parallel.Claim, now time.Time) []domain.TaskID {
			// A result is logged under this lock: those logged while this
			// claim waited for it are decided on too (a task reported
			// complete and released meanwhile is not claimed again).
			changed, err := cp.catchUp(&res)
			if err == nil && changed {
				if tasks, _, err = cp.schedTasks(false); err == nil {
					skip, err = cp.finished()
				}
			}
			if err != nil {
				late = err
				return nil
			}
			ids, _ := pick(claims, now)
			return ids
		}
		d, ok, err := cp.files.ClaimNextBy(cp.ctx, cp.key, agent, ttl, here, order, rec.record)
		switch {
		case err == nil && late != nil:
			err = late
		case err == nil && !ok:
			err = noneReady()
		}
		return d, nil, false, err
	}
	claims, err := cp.c.Claims(cp.ctx, cp.key)
	if err != nil {
		return d, nil, false, err
	}
	now, err := cp.now()
	if err != nil {
		return d, nil, false, err
	}
	ids, own := pick(claims, now)
	if own {
		d, err = cp.c.Claim(cp.ctx, cp.key, ids[0], agent, ttl, here)
		return d, nil, false, err
	}
	d, ok, err := cp.c.ClaimNext(cp.ctx, cp.key, ids, agent, ttl, here)
	if err == nil && !ok {
		err = noneReady()
	}
	return d, nil, false, err
}

// claimRecords writes what the clone keeps of a claim its runner was
// granted — the fencing token (recordHeld) and the HEAD of the checkout or
// worktree the task is worked in (recordClaimHead) — in one session under
// the clone's coordination lock: with the file store, the session of the
// claim itself; with a shared store, one session after it.
type claimRecords struct {
	s        *Streams
	g        *globals
	cp       *coordPlan
	done     bool
	worktree string // the task's worktree, "" when it has none
}

// record is run in the session, once the claim is decided.
func (r *claimRecords) record(d parallel.ClaimDecision, tx *store.CoordTx) {
	if d.Outcome == parallel.Refused {
		return
	}
	r.done = true
	r.cp.recordHeld(r.s, d, tx)
	r.worktree = r.cp.recordClaimHead(r.s, r.g, d, tx)
}

// finish records a claim made in another store, in a session of its own.
func (r *claimRecords) finish(d parallel.ClaimDecision) {
	if r.done || d.Outcome == parallel.Refused {
		return
	}
	if err := r.cp.files.Records(r.cp.ctx, r.cp.key, func(tx *store.CoordTx) { r.record(d, tx) }); err != nil {
		fmt.Fprintf(r.s.Err, "taskie: warning: task %d: recording its fencing token %d and HEAD: %v (give --token %d to later commands)\n",
			d.Claim.Task, d.Claim.Token, err, d.Claim.Token)
	}
}

// recordClaimHead notes, when a task is newly claimed, the HEAD of the
// checkout its work is in: a later HEAD that differs is a commit made
// since the claim (the subagent gate and task result check it). That is
// the task's worktree; a claim made from inside a linked worktree that
// taskie did not make adopts that worktree for the task, unless another
// task has it (decided under the lock: two claims made at once in one
// worktree adopt it once); otherwise the checkout the claim was made
// from is recorded with its HEAD (a subagent in the main checkout). It
// returns the task's worktree's path, "" when it has none.
func (cp *coordPlan) recordClaimHead(s *Streams, g *globals, d parallel.ClaimDecision, tx *store.CoordTx) string {
	if !cp.files.Shared() {
		return ""
	}
	task := d.Claim.Task
	ws, err := tx.Worktrees()
	if err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: %v\n", err)
		return ""
	}
	w, ok := store.FindWorktree(ws, task)
	var here gitwt.Layout
	if !ok {
		here = cwdLayout(g)
		w, ok = adoptable(here, ws, task)
	}
	if d.Outcome != parallel.Granted && d.Outcome != parallel.Takeover {
		if ok {
			return w.Path
		}
		return ""
	}
	if !ok {
		cp.recordCheckout(s, here, task, tx)
		return ""
	}
	head, err := headAt(w.Path)
	if err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: task %d: worktree %s: %v\n", task, w.Path, err)
		return w.Path
	}
	recorded := false
	err = tx.UpdateWorktrees(func(ws []store.Worktree, now time.Time) ([]store.Worktree, error) {
		ws, recorded = store.MarkClaimed(ws, w, head, now)
		return ws, nil
	})
	switch {
	case err != nil:
		fmt.Fprintf(s.Err, "taskie: warning: recording the worktree of task %d: %v\n", task, err)
	case !recorded: // another task has it
		cp.recordCheckout(s, here, task, tx)
		return ""
	}
	return w.Path
}

// recordCheckout records the HEAD of the checkout a task was claimed from,
// when the task has no worktree of its own. A checkout without a commit
// yet records nothing: the gate then allows with a message.
func (cp *coordPlan) recordCheckout(s *Streams, here gitwt.Layout, task domain.TaskID, tx *store.CoordTx) {
	if here.Toplevel == "" {
		return
	}
	head, err := gitwt.HeadOf(here)
	if err != nil {
		return
	}
	if err := tx.RecordCheckout(task, here.Toplevel, head); err != nil {
		fmt.Fprintf(s.Err, "taskie: warning: task %d: recording the HEAD of %s: %v\n", task, here.Toplevel, err)
	}
}

// headAt is the HEAD of the worktree at dir, read from git's files when
// they are the usual ones (no git process on the claim path).
func headAt(dir string) (string, error) {
	l, err := gitwt.Discover(dir)
	if err != nil {
		return gitwt.Head(dir)
	}
	return gitwt.HeadOf(l)
}

// cwdLayout is the git layout of the checkout the command runs in (-C, else
// the working directory); empty outside git. It reads files only.
func cwdLayout(g *globals) gitwt.Layout {
	cwd, err := g.cwd()
	if err != nil {
		return gitwt.Layout{}
	}
	l, err := gitwt.Discover(cwd)
	if err != nil {
		return gitwt.Layout{}
	}
	return l
}

// adoptable is the linked worktree the command runs in, when it is not
// the main checkout and no task has it yet (as far as ws says: the
// update checks again under the lock).
func adoptable(l gitwt.Layout, ws []store.Worktree, task domain.TaskID) (store.Worktree, bool) {
	if !l.Linked {
		return store.Worktree{}, false
	}
	if _, taken := store.WorktreeAt(ws, l.Toplevel); taken {
		return store.Worktree{}, false
	}
	return store.Worktree{Task: task, Path: l.Toplevel, Adopted: true}, true
}

func printClaim(s *Streams, d parallel.ClaimDecision, worktree string, asJSON bool) error {
	cl := d.Claim
	if asJSON {
		v := claimView{Task: cl.Task.String(), Agent: cl.Agent, Outcome: d.Outcome.String(),
			Acquired: cl.Acquired, Expires: cl.Expires, Token: cl.Token, Place: cl.Place, Worktree: worktree}
		if d.Previous != nil && d.Outcome == parallel.Takeover {
			v.Previous = &previousView{Agent: d.Previous.Agent, Expires: d.Previous.Expires}
		}
		return writeJSON(s.Out, v)
	}
	until := cl.Expires.UTC().Format(time.RFC3339)
	switch d.Outcome {
	case parallel.Granted:
		fmt.Fprintf(s.Err, "task %d: claimed by %s until %s\n", cl.Task, cl.Agent, until)
	case parallel.Renewed:
		fmt.Fprintf(s.Err, "task %d: already claimed by %s; lease renewed until %s\n", cl.Task, cl.Agent, until)
	case parallel.Takeover:
		fmt.Fprintf(s.Err, "task %d: claimed by %s until %s, taken over from %s (lease expired at %s)\n",
			cl.Task, cl.Agent, until, d.Previous.Agent, d.Previous.Expires.UTC().Format(time.RFC3339))
	case parallel.Released:
		fmt.Fprintf(s.Err, "task %d: released by %s\n", cl.Task, cl.Agent)
		return nil
	}
	if cl.Token > 0 && d.Outcome != parallel.Renewed {
		fmt.Fprintf(s.Err, "task %d: fencing token %d\n", cl.Task, cl.Token)
	}
	if worktree != "" {
		fmt.Fprintf(s.Err, "task %d: worktree %s\n", cl.Task, worktree)
	}
	fmt.Fprintln(s.Out, cl.Task)
	return nil
}

func runHeartbeat(o *claimOpts) error {
	if _, err := agentName(o.as); o.as != "" && err != nil {
		return err
	}
	cp, err := o.g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	agent, err := agentOrDefault(o.as, cp.p.Repo.Root)
	if err != nil {
		return err
	}
	task, err := cp.p.TaskID(o.task)
	if err != nil {
		return usageErr(err, "")
	}
	ttl, err := cp.leaseTTL(o.ttl)
	if err != nil {
		return err
	}
	f, err := cp.fenceOf(task, agent, o.token)
	if err != nil {
		return err
	}
	var d parallel.ClaimDecision
	if h, ok := cp.c.(oneHeartbeater); ok {
		d, err = h.HeartbeatOne(cp.ctx, cp.key, task, agent, ttl, f)
	} else {
		d, err = cp.c.Heartbeat(cp.ctx, cp.key, task, agent, ttl, f)
	}
	if err != nil {
		return err
	}
	if d.Outcome == parallel.Refused {
		if h := fenceHint(d.Err, task, agent); h != "" {
			return refused(d, h)
		}
		now, _ := cp.c.Now(cp.ctx) // the lease clock the decision used
		return refused(d, heartbeatHint(d, task, agent, now))
	}
	return printClaim(o.s, d, "", o.asJSON)
}

// heartbeatHint says what works after a refused heartbeat: claiming a task
// nobody holds, or one whose holder's lease ran out; but after another
// agent took the task over and holds it live, a claim of it would be
// refused too, so another task or the holder is the way.
func heartbeatHint(d parallel.ClaimDecision, task domain.TaskID, agent string, now time.Time) string {
	h := d.Previous
	switch {
	case h == nil || h.Agent == agent:
		return fmt.Sprintf("claim it first: `taskie claim %d --as %s`", task, agent)
	case !h.Live(now):
		return fmt.Sprintf("%s's lease has run out: `taskie claim %d --as %s` takes the task back", h.Agent, task, agent)
	}
	return fmt.Sprintf("%s holds task %d now: take another with `taskie claim --next --as %s`, or ask %s to release it (`taskie release %d --force` if %s is gone)",
		h.Agent, task, agent, h.Agent, task, h.Agent)
}

func runRelease(o *claimOpts) error {
	if _, err := agentName(o.as); o.as != "" && err != nil {
		return err
	}
	cp, err := o.g.openCoord("")
	if err != nil {
		return err
	}
	defer cp.close()
	agent, err := agentOrDefault(o.as, cp.p.Repo.Root)
	if o.force {
		agent, err = optionalAgent(o.as)
	}
	if err != nil {
		return err
	}
	task, err := cp.p.TaskID(o.task)
	if err != nil {
		return usageErr(err, "")
	}
	if o.force {
		return forceRelease(o, cp, task, agent)
	}
	f, err := cp.fenceOf(task, agent, o.token)
	if err != nil {
		return err
	}
	var d parallel.ClaimDecision
	var life []string
	rl, oneShot := cp.c.(lifeReleaser)
	if oneShot {
		moves := lifeMoves(cp.p.ID, releaseStep(agent), agent)
		moves.UnlessComplete = true
		d, life, err = rl.ReleaseLife(cp.ctx, cp.key, task, agent, f, moves)
	} else {
		d, err = cp.c.Release(cp.ctx, cp.key, task, agent, f)
	}
	if err != nil {
		return err
	}
	if d.Outcome == parallel.Refused {
		if h := fenceHint(d.Err, task, agent); h != "" {
			return refused(d, h)
		}
		return refused(d, "only the agent that holds a claim releases it; an expired lease is taken over by claiming the task")
	}
	cp.dropHeld(task, agent, f)
	if oneShot {
		sayLife(o.s, life)
	} else {
		cp.lifeAfterRelease(o.s, task, agent)
	}
	return printClaim(o.s, d, "", o.asJSON)
}

// forceRelease releases task's claim whoever holds it, in the holder's
// name, and records the override: the way to end a dead agent's lease,
// or one that never expires.
func forceRelease(o *claimOpts, cp *coordPlan, task domain.TaskID, agent string) error {
	claims, err := cp.c.Claims(cp.ctx, cp.key)
	if err != nil {
		return err
	}
	held := parallel.ClaimOf(claims, task)
	if held == nil {
		return &exitError{code: ExitProblems, err: fmt.Errorf("task %d: %w", task, parallel.ErrNotClaimed)}
	}
	var d parallel.ClaimDecision
	if cp.c == cp.files { // the holder's token is kept: its later writes are stale
		d, err = cp.files.ReleaseForced(cp.ctx, cp.key, task, held.Agent)
	} else {
		d, err = cp.c.Release(cp.ctx, cp.key, task, held.Agent)
	}
	if err != nil {
		return err
	}
	if d.Outcome == parallel.Refused { // claimed again between the read and the release
		return refused(d, "run the same command again")
	}
	if held.Agent != agent {
		g := &claimGuard{s: o.s, c: cp.c, key: cp.key, ctx: cp.ctx, task: task, actor: agent, command: "release",
			d: parallel.WriteDecision{Outcome: parallel.WriteForced, Holder: held}}
		g.done()
	}
	cp.lifeAfterRelease(o.s, task, held.Agent)
	return printClaim(o.s, d, "", o.asJSON)
}
