package cli

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
)

// taskMoveOpts are the options of the lifecycle commands
// (`taskie task move|fail|retry|rollback|skip|abandon|escalate|resolve`).
type taskMoveOpts struct {
	s      *Streams
	g      *globals
	action lifecycle.Action
	task   string
	state  string // move and rollback: the target state
	actor  string
	reason string
	note   string // retry: a guided retry's guidance
	as     string // the agent acting, checked against the task's claim
	force  bool   // act although another agent holds the task's live claim
	asJSON bool
}

// taskMoveView is a lifecycle command's --json output: the plan, the task
// and its lifecycle record after the move, as `taskie query --json` shows
// a task.
type taskMoveView struct {
	Plan      string    `json:"plan"`
	Task      string    `json:"task"`
	Lifecycle queryView `json:"lifecycle"`
}

// taskVerb describes one lifecycle command.
type taskVerb struct {
	action  lifecycle.Action
	use     string
	short   string
	long    string
	example string
	target  bool // takes a state after the task
}

var taskVerbs = []taskVerb{
	{lifecycle.ActMove, "move <task> <state>", "Move a task to another lifecycle state",
		`Move a task along the lifecycle table (taskie help lifecycle): forward on the chain
pending → assigned → planning → validated → in_progress → testing →
quality_review → approved → committing → completed, or by a failure move
(planning → planning, quality_review → in_progress, committing →
in_progress), which counts a failure and escalates to cto_intervention at the
third. An illegal move is refused with the moves legal now.`,
		"  taskie task move 3 testing\n  taskie task move 3 in_progress --actor hook --reason \"review failed\"", true},
	{lifecycle.ActFail, "fail <task>", "Count a failure in a task's lifecycle state",
		`Count a failure in the task's state. The third failure in a state moves it to
cto_intervention; once its 2 CTO attempts are used, a failure goes on to
human_escalation.`,
		"  taskie task fail 3 --reason \"tests still red\"", false},
	{lifecycle.ActRetry, "retry <task>", "Return a task from cto_intervention to the state it came from (CTO or human)",
		`Return a task from cto_intervention to the state it was escalated from, with
that state's failures cleared: a CTO attempt (at most 2). With --note it is a
guided retry and the note is the guidance.`,
		"  taskie task retry 3 --actor cto --note \"use the streaming API\"", false},
	{lifecycle.ActRollback, "rollback <task> <state>", "Send a task back to an earlier working state (CTO or human)",
		`Send a task back to an earlier working state than the one it is in (or was
escalated from), clearing the failures of the states it will work again.`,
		"  taskie task rollback 3 planning --actor cto --reason \"wrong approach\"", true},
	{lifecycle.ActSkip, "skip <task>", "Move a task past the state it is stuck in (CTO only)",
		`Move a task past the state it is stuck in (its state, or the one it was
escalated from) to the next state of the chain: the CTO's override.`,
		"  taskie task skip 3 --actor cto --reason \"tested by hand\"", false},
	{lifecycle.ActAbandon, "abandon <task>", "End a task that will not be completed (human only)",
		`End a task that will not be completed: abandoned is terminal. A human's
decision, which also answers a human escalation.`,
		"  taskie task abandon 3 --actor human --reason \"no longer needed\"", false},
	{lifecycle.ActEscalate, "escalate <task>", "Ask for help: a working task to cto_intervention, from there to human_escalation",
		`Escalate without waiting for failures: a working task goes to
cto_intervention (on to human_escalation when its CTO attempts are used up),
a task in cto_intervention goes to human_escalation.`,
		"  taskie task escalate 3 --reason \"blocked on credentials\"", false},
	{lifecycle.ActResolve, "resolve <task>", "Answer a human escalation: back to the state escalated from (human only)",
		`Answer a human escalation: the task returns to the state it was escalated
from, with no failures and no CTO attempts.`,
		"  taskie task resolve 3 --actor human --reason \"credentials added\"", false},
}

// newTaskMoveCmds returns the lifecycle commands of `taskie task`.
func newTaskMoveCmds(s *Streams, g *globals) []*cobra.Command {
	out := make([]*cobra.Command, len(taskVerbs))
	for i, v := range taskVerbs {
		out[i] = newTaskMoveCmd(s, g, v)
	}
	return out
}

func newTaskMoveCmd(s *Streams, g *globals, v taskVerb) *cobra.Command {
	return newTaskMoveCmdWith(s, g, v, runTaskMove)
}

func newTaskMoveCmdWith(s *Streams, g *globals, v taskVerb, run func(*taskMoveOpts) error) *cobra.Command {
	o := &taskMoveOpts{s: s, g: g, action: v.action}
	n, what := 1, "a task id"
	if v.target {
		n, what = 2, "a task id and a lifecycle state"
	}
	who := strings.Join(actorNames(lifecycle.Permitted(v.action)), ", ")
	c := &cobra.Command{
		Use:   v.use,
		Short: v.short,
		Long: v.long + "\n\nWho may: " + who + ". Every move is one commit: state.json's lifecycle\nrecords and one event per change in events.jsonl." +
			"\n\nA task another agent holds a live claim on is moved by its holder only\n(--as); --force moves it anyway, recorded as an override of the holder.",
		Example: v.example,
		Args:    exactArgs(n, what),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = args[0]
			if v.target {
				o.state = args[1]
			}
			return run(o)
		},
	}
	c.Flags().StringVar(&o.actor, "actor", string(lifecycle.ActorAgent), "who acts: agent, hook, cto, human or system (declared, not checked: it records who acted)")
	c.Flags().StringVar(&o.reason, "reason", "", "why, for the event log")
	if v.action == lifecycle.ActRetry {
		c.Flags().StringVar(&o.note, "note", "", "guidance for a guided retry")
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the task's lifecycle record after the move as JSON")
	addGuardFlags(c, &o.as, &o.force)
	return c
}

func actorNames(as []lifecycle.Actor) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	return out
}

func runTaskMove(o *taskMoveOpts) error {
	actor, err := lifecycle.ParseActor(o.actor)
	if err != nil {
		return usageErr(err, "")
	}
	var to lifecycle.State
	if o.state != "" {
		if to, err = lifecycle.ParseState(o.state); err != nil {
			return usageErr(err, "`taskie diagram --lifecycle` shows the machine")
		}
	}
	p, task, err := o.g.openTask(o.task)
	if err != nil {
		return err
	}
	// The task as this command found it, before the lock: a move that
	// finds it changed under the lock, already in the target state, was
	// made meanwhile by an identical command (docs/lifecycle.md).
	seen := seenRecord(p, task)
	guard, err := guardPlanWrite(o.s, p, task, o.as, o.force, "task "+string(o.action))
	if err != nil {
		return err
	}
	defer guard.close()
	var timeouts lifecycle.Timeouts
	if o.asJSON {
		if timeouts, err = lifecycleTimeouts(p); err != nil {
			return err
		}
	}
	var evs []events.Event
	var rec lifecycle.Task
	dup := false
	// Claims the write releases wait for the store's lock to go (Hold).
	err = p.Hold(func() error {
		return guard.fenced(func() error {
			return updateTask(o.s, p, task, func(snap *store.Snapshot) (store.Change, error) {
				if o.action == lifecycle.ActMove && seen.ok {
					if t, ok := duplicateMove(snap, task, to, seen); ok {
						dup, rec, evs = true, t, nil
						return store.Change{}, nil
					}
				}
				c, t, err := lifecycleChange(snap, o, task, to, actor)
				evs, rec = c.Events, t
				c.Meta = events.MergeMeta(c.Meta, guard.forced())
				return c, err
			})
		})
	})
	if err != nil {
		return moveErr(p, err)
	}
	if dup {
		fmt.Fprintf(o.s.Err, "task %s: already in %s: an identical move was made meanwhile; not made again\n", task, to)
	} else {
		guard.done()
	}
	for _, e := range evs {
		fmt.Fprintf(o.s.Err, "%s\n", eventMessage(e))
	}
	if o.asJSON {
		return writeJSON(o.s.Out, taskMoveView{Plan: p.ID, Task: task.String(), Lifecycle: newQueryView(rec, o.s.Clock.Now(), timeouts, nil)})
	}
	return nil
}

// seenTask is a task's lifecycle record as read before the plan lock.
type seenTask struct {
	ok     bool // the records could be read
	exists bool // the task had a record
	t      lifecycle.Task
}

// seenRecord reads task's lifecycle record without the lock.
func seenRecord(p *store.Plan, task domain.TaskID) seenTask {
	st, err := p.State()
	if err != nil || st == nil {
		return seenTask{}
	}
	tasks, err := taskrec.Records(st)
	if err != nil {
		return seenTask{}
	}
	t, ok := tasks[task]
	return seenTask{ok: true, exists: ok, t: t}
}

// duplicateMove reports whether `move task to`, decided on seen, was made
// meanwhile by an identical command: under the lock the task's record is
// no longer the one seen, and it is in the target state. Moving again
// would count a second "approach rejected" failure (planning → planning)
// for one rejection, or be refused as illegal (assigned → assigned).
func duplicateMove(snap *store.Snapshot, task domain.TaskID, to lifecycle.State, seen seenTask) (lifecycle.Task, bool) {
	if snap.State == nil {
		return lifecycle.Task{}, false
	}
	tasks, err := taskrec.Records(snap.State)
	if err != nil {
		return lifecycle.Task{}, false
	}
	cur, ok := tasks[task]
	if !ok || cur.State != to || (seen.exists && reflect.DeepEqual(cur, seen.t)) {
		return lifecycle.Task{}, false
	}
	return cur, true
}

// lifecycleChange decides a lifecycle command on a snapshot taken under
// the plan lock: the task's new record in state.json and its effects as
// events, and the task's record after the move. A task that has no record
// yet starts in pending.
func lifecycleChange(snap *store.Snapshot, o *taskMoveOpts, task domain.TaskID, to lifecycle.State, actor lifecycle.Actor) (store.Change, lifecycle.Task, error) {
	st := snap.State
	if st == nil {
		return store.Change{}, lifecycle.Task{}, snap.StateErr
	}
	tasks, err := taskrec.Records(st)
	if err != nil {
		return store.Change{}, lifecycle.Task{}, &state.FieldError{Path: snap.Path(state.FileName), Field: "lifecycle", Msg: err.Error()}
	}
	now := o.s.Clock.Now()
	t, ok := tasks[task]
	var effs []lifecycle.Effect
	if !ok {
		if t, effs, err = lifecycle.New(task, actor, now); err != nil {
			return store.Change{}, lifecycle.Task{}, err
		}
	}
	next, more, err := act(o, t, to, actor, now)
	if err != nil {
		if lifecycle.Refused(err) {
			err = &refusal{err: err, task: t, actor: actor}
		}
		return store.Change{}, lifecycle.Task{}, err
	}
	tasks[task] = next
	n := st.Clone()
	n.Lifecycle = lifecycle.Encode(tasks)
	reason := fmt.Sprintf("task %s %s by %s", o.action, task, actor)
	return store.Change{Actor: "cli", Reason: reason, Kind: events.LifecycleCommit, Task: task, State: n,
		Events: lifecycle.Events(append(effs, more...))}, next, nil
}

// act makes the command's move.
func act(o *taskMoveOpts, t lifecycle.Task, to lifecycle.State, actor lifecycle.Actor, now time.Time) (lifecycle.Task, []lifecycle.Effect, error) {
	switch o.action {
	case lifecycle.ActMove:
		return lifecycle.Move(t, to, actor, o.reason, now)
	case lifecycle.ActFail:
		return lifecycle.Fail(t, actor, o.reason, now)
	case lifecycle.ActRetry:
		if strings.TrimSpace(o.note) != "" {
			return lifecycle.GuidedRetry(t, actor, o.note, now)
		}
		return lifecycle.Retry(t, actor, o.reason, now)
	case lifecycle.ActRollback:
		return lifecycle.Rollback(t, to, actor, o.reason, now)
	case lifecycle.ActSkip:
		return lifecycle.Skip(t, actor, o.reason, now)
	case lifecycle.ActAbandon:
		return lifecycle.Abandon(t, actor, o.reason, now)
	case lifecycle.ActEscalate:
		return lifecycle.Escalate(t, actor, o.reason, now)
	case lifecycle.ActResolve:
		return lifecycle.Resolve(t, actor, o.reason, now)
	}
	return t, nil, fmt.Errorf("unknown lifecycle action %q", o.action)
}

// moveErr explains a refused lifecycle command.
func moveErr(p *store.Plan, err error) error {
	var ee *exitError
	var se *state.SyntaxError
	var fe *state.FieldError
	var ref *refusal
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, &fe) && fe.Field == "lifecycle":
		return usageErr(err, "state.json's lifecycle records do not decode; `taskie validate` reports them, and the log keeps every move (`taskie history`)")
	case errors.As(err, &se), errors.As(err, &fe), errors.Is(err, state.ErrNotFound):
		return stateErr(p, err)
	case errors.As(err, &ref) && errors.Is(err, lifecycle.ErrRefused):
		return usageErr(err, fmt.Sprintf("say who acts with --actor (agent, hook, cto, human or system); `taskie query --task %s` shows where the task stands", ref.task.ID))
	case errors.As(err, &ref):
		return usageErr(err, fmt.Sprintf("`taskie query --task %s` shows where the task stands; `taskie diagram --lifecycle` shows the machine", ref.task.ID))
	}
	return usageErr(err, "")
}

// refusal is a lifecycle move the machine or the actor's role refused,
// with what that actor may do instead: every refusal says what is legal
// now, for the actor who asked (an agent is never offered abandon).
type refusal struct {
	err   error
	task  lifecycle.Task
	actor lifecycle.Actor
}

func (r *refusal) Unwrap() error { return r.err }

func (r *refusal) Error() string {
	opts := lifecycle.Options(r.task, r.actor)
	if len(opts) > 0 {
		return fmt.Sprintf("%v; legal now for %s: %s", r.err, r.actor, optionCommands(r.task.ID, r.actor, opts))
	}
	msg := fmt.Sprintf("%v; nothing is legal for %s now", r.err, r.actor)
	for _, a := range lifecycle.ActorsWithOptions(r.task, r.actor) {
		msg += fmt.Sprintf("; %s may: %s", a, optionCommands(r.task.ID, a, lifecycle.Options(r.task, a)))
	}
	return msg
}

// optionCommands renders options as the commands that take them, a
// rollback's targets in one: `taskie task rollback 3 planning|assigned`.
func optionCommands(id domain.TaskID, actor lifecycle.Actor, opts []lifecycle.Option) string {
	flag := ""
	if actor != lifecycle.ActorAgent {
		flag = " --actor " + string(actor)
	}
	var out, rollbacks []string
	at := -1 // where the rollback goes in the list
	for _, o := range opts {
		switch {
		case o.Action == lifecycle.ActRollback:
			if at < 0 {
				at = len(out)
			}
			rollbacks = append(rollbacks, string(o.To))
			continue
		case o.To != "":
			out = append(out, fmt.Sprintf("`taskie task %s %s %s%s`", o.Action, id, o.To, flag))
		default:
			out = append(out, fmt.Sprintf("`taskie task %s %s%s`", o.Action, id, flag))
		}
	}
	if at >= 0 {
		out = slices.Insert(out, at, fmt.Sprintf("`taskie task rollback %s %s%s`", id, strings.Join(rollbacks, "|"), flag))
	}
	return strings.Join(out, ", ")
}
