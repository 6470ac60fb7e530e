package hook

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/reviewrun"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
	"github.com/taskie-dev/taskie/internal/taskrec"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// The escalation ladder in the Stop hook (docs/lifecycle.md, "The CTO"):
// the CTO review of a task in cto_intervention and its decision carried
// out, and the hand-over of a task to a human. Every lifecycle move is a
// commit of the plan (store.Plan.Update), so it goes through the same
// follow path as every other change.

// lifeChange is a lifecycle move of one task on the state of snap: the
// new state.json (from base, snap's state when nil) with the task's record
// moved by step, and the move's events.
func lifeChange(snap *store.Snapshot, base *state.State, task domain.TaskID, now time.Time, step func(lifecycle.Task) (lifecycle.Task, []lifecycle.Effect, error)) (*state.State, []events.Event, lifecycle.Task, error) {
	st := snap.State
	if st == nil {
		return nil, nil, lifecycle.Task{}, snap.StateErr
	}
	tasks, err := taskrec.Records(st)
	if err != nil {
		return nil, nil, lifecycle.Task{}, err
	}
	t, ok := tasks[task]
	var created []lifecycle.Effect
	if !ok {
		if t, created, err = lifecycle.New(task, lifecycle.ActorSystem, now); err != nil {
			return nil, nil, t, err
		}
	}
	next, effs, err := step(t)
	if err != nil {
		return nil, nil, t, err
	}
	tasks[task] = next
	if base == nil {
		base = st
	}
	n := base.Clone()
	n.Lifecycle = lifecycle.Encode(tasks)
	return n, lifecycle.Events(append(created, effs...)), next, nil
}

// toHuman hands task to a human (human_escalation) with reason: the
// review cap, a cycle that does not converge, the CTO attempts used up.
// A failure only goes to the log: the message says what a human decides
// either way.
func (h *stopper) toHuman(task domain.TaskID, reason string) {
	now := h.p.Store.Now().UTC()
	err := h.p.Update(func(snap *store.Snapshot) (store.Change, error) {
		n, evs, _, err := lifeChange(snap, nil, task, now,
			func(t lifecycle.Task) (lifecycle.Task, []lifecycle.Effect, error) {
				return lifecycle.ToHuman(t, reason, now)
			})
		if err != nil {
			return store.Change{}, err
		}
		return store.Change{Actor: "hook", Reason: fmt.Sprintf("hook: task %s to a human: %s", task, reason), Kind: events.LifecycleCommit,
			Task: task, State: n, Events: evs, DuringReview: h.lock != nil}, nil
	})
	if err != nil {
		h.log.info("handing the task to a human", "task", task.String(), "error", err.Error())
		return
	}
	h.logAttrs = append(h.logAttrs, "to_human", "task "+task.String()+": "+reason)
}

// cycleFiles names the review and post-review files of task's code-review
// cycle on disk, in order, for the CTO to read.
func cycleFiles(snap *store.Snapshot, task domain.TaskID, upTo int) []string {
	var out []string
	for n := 1; n <= upTo; n++ {
		if snap.ReviewExists(domain.CodeReview, task, n) {
			out = append(out, plan.ReviewFile(string(domain.CodeReview), int(task), n))
		}
		if snap.PostExists(domain.CodeReview, task, n) {
			out = append(out, plan.PostReviewFile(string(domain.CodeReview), int(task), n))
		}
	}
	return out
}

// cto runs the CTO review of the current task and carries its decision
// out: guided retry and rollback send the agent back to work with the
// guidance (a block), skip passes the task by the CTO's override, escalate
// hands it to a human. The guidance goes to task-T-cto-N.md.
func (h *stopper) cto(snap *store.Snapshot, d workflow.StopDecision, v view) Result {
	task, attempt := d.Task, d.Iteration
	job := reviewrun.Job{Kind: review.CTOReview, Task: task, Iteration: attempt, Model: d.Model, Actor: "hook",
		Pick: review.Resolve(h.cfg.Reviewer, h.cfg.Models, 0)}
	s := snap.State
	why := fmt.Sprintf("its code reviews failed three times in a row (%d reviews in this cycle)", s.Iteration())
	done, err := h.runner().CTO(job, h.lock, cycleFiles(snap, task, s.Iteration()), why)
	var f *reviewrun.Failed
	if errors.As(err, &f) {
		return h.failed(workflow.StopDecision{Review: review.CTOReview, Iteration: attempt}, f)
	}
	if err != nil {
		return h.internal(err)
	}
	dec := done.Decision
	name := plan.CTOFile(int(task), attempt)
	now := h.p.Store.Now().UTC()
	reason := fmt.Sprintf("CTO review %d: %s (%s)", attempt, dec.Decision, name)
	var out workflow.CTOOutcome
	var rec lifecycle.Task
	fallback := ""
	err = h.p.Update(func(cur *store.Snapshot) (store.Change, error) {
		if cur.State == nil {
			return store.Change{}, cur.StateErr
		}
		out = workflow.AfterCTO(cur.State, dec.Decision, cur.PendingOther(task), h.cfg.Models)
		step := func(t lifecycle.Task) (lifecycle.Task, []lifecycle.Effect, error) {
			if t.State != lifecycle.CTOIntervention {
				return t, nil, fmt.Errorf("task %s is in %s now, no longer in cto_intervention: someone acted meanwhile", task, t.State)
			}
			switch dec.Decision {
			case workflow.CTORollback:
				nt, effs, err := lifecycle.Rollback(t, lifecycle.State(dec.RollbackTo), lifecycle.ActorCTO, reason, now)
				if err == nil {
					return nt, effs, nil
				}
				fallback = err.Error()
				return lifecycle.GuidedRetry(t, lifecycle.ActorCTO, note(dec.Guidance, name), now)
			case workflow.CTOSkip:
				return lifecycle.Skip(t, lifecycle.ActorCTO, reason, now)
			case workflow.CTOEscalate:
				return lifecycle.Escalate(t, lifecycle.ActorCTO, reason, now)
			}
			return lifecycle.GuidedRetry(t, lifecycle.ActorCTO, note(dec.Guidance, name), now)
		}
		n, evs, t, err := lifeChange(cur, out.Save, task, now, step)
		if err != nil {
			return store.Change{}, err
		}
		rec = t
		c := store.Change{Actor: "hook", Reason: "hook: " + reason, Task: task, State: n, DuringReview: true,
			Events: append([]events.Event{done.Event()}, evs...),
			Files:  map[string][]byte{name: ctoFile(task, attempt, dec, fallback)}}
		if out.Save == nil {
			c.Kind = events.LifecycleCommit
		}
		if out.MarkDone != 0 {
			c.Statuses = map[domain.TaskID]string{out.MarkDone: plan.StatusDone}
		}
		return c, nil
	})
	h.why = fmt.Sprintf("cto-review %d of task %s: %s", attempt, task, dec.Decision)
	if err != nil {
		done.Finished.Recorded = new(false)
		h.runner().Event(done.Event())
		return warnAllow(h.e, fmt.Sprintf("the CTO review of task %s decided %s, but it was not recorded: %v. Run `taskie continue%s` to see where the plan stands.", task, dec.Decision, err, v.planFlag))
	}
	return h.ctoDone(v, task, attempt, dec, rec, out, relPath(h.p.Repo.Root, h.p.Path(name)), fallback)
}

// note is a guided retry's note for the log: the guidance's first line,
// pointing to the file that holds it whole.
func note(guidance, file string) string {
	line := strings.TrimSpace(firstLine(strings.TrimSpace(guidance)))
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	if line == "" {
		return "see " + file
	}
	return line + " (" + file + ")"
}

// ctoFile is task-T-cto-N.md: the decision, the guidance and the CTO's
// assessment.
func ctoFile(task domain.TaskID, attempt int, dec review.CTODecision, fallback string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# CTO review of task %s (attempt %d of %d)\n\n## Decision: %s\n", task, attempt, lifecycle.MaxCTOAttempts, dec.Decision)
	if dec.RollbackTo != "" {
		fmt.Fprintf(&b, "\nRoll back to: %s\n", dec.RollbackTo)
	}
	if fallback != "" {
		fmt.Fprintf(&b, "\nThe rollback was refused (%s), so the guidance is given as a guided retry.\n", fallback)
	}
	fmt.Fprintf(&b, "\n## Guidance\n\n%s\n", strings.TrimSpace(dec.Guidance))
	if r := strings.TrimSpace(dec.Review); r != "" {
		fmt.Fprintf(&b, "\n## Review\n\n%s\n", r)
	}
	return []byte(b.String())
}

// ctoDone answers the stop once the CTO's decision is recorded.
func (h *stopper) ctoDone(v view, task domain.TaskID, attempt int, dec review.CTODecision, rec lifecycle.Task, out workflow.CTOOutcome, file, fallback string) Result {
	head := fmt.Sprintf("taskie: the CTO reviewed task %s (attempt %d of %d) after its code reviews failed three times", task, attempt, lifecycle.MaxCTOAttempts)
	switch dec.Decision {
	case workflow.CTOSkip:
		r := advanced(v, domain.CodeReview, out.Target, h.cfg.Autopilot)
		msg := fmt.Sprintf("%s and accepted the work as it is (skip, the CTO's override; %s says why).", head, file)
		if r.Block {
			r.Reason = msg + " " + strings.TrimPrefix(r.Reason, "taskie: ")
		} else {
			r.Message = msg + " " + strings.TrimPrefix(r.Message, "taskie: ")
		}
		return r
	case workflow.CTOEscalate:
		return Allow(fmt.Sprintf("%s and handed it to a human (human_escalation): read %s. %s Stop here and tell the user.", head, file, humanWhat(v, task)))
	}
	what := "decided: guided retry"
	if dec.Decision == workflow.CTORollback && fallback == "" {
		what = fmt.Sprintf("decided: roll back to %s", rec.State)
	}
	msg := fmt.Sprintf("%s and %s. The task is in %s again. The CTO's guidance (also in %s):\n\n%s\n\nFollow it: change the code as it says, then end your turn; the Stop hook reviews the task again (a fresh review, the cycle goes on). If the guidance cannot be followed, say why and run `taskie task escalate %s%s` to hand the task to a human.",
		head, what, rec.State, file, indent(strings.TrimSpace(dec.Guidance)), task, v.planFlag)
	if !out.Block {
		return Allow(msg)
	}
	return Result{Block: true, Reason: msg}
}

// humanWhat is what a human must decide for a task with a human.
func humanWhat(v view, task domain.TaskID) string {
	s := v.s
	if s == nil || s.Task() != task {
		return fmt.Sprintf("A human decides: `taskie task resolve %s --actor human` resumes its reviews with fresh counts, `taskie task abandon %s --actor human` gives it up.", task, task)
	}
	return "A human decides: " + workflow.HumanDecision(s, v.pendingOther) + "."
}
