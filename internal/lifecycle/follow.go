package lifecycle

import (
	"errors"
	"slices"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
)

// Review is a finished review that a change of the plan records (the
// REVIEW_FINISHED event of the hook's commit).
type Review struct {
	Task    domain.TaskID
	Kind    domain.Phase // the review phase: code-review, …
	Verdict domain.Verdict
}

// Cue is a plan phase event for one task, to be fed to FromPhase.
type Cue struct {
	Task  domain.TaskID
	Event PhaseEvent
}

// Follow returns the phase events that a change of state.json from old to
// cur makes, with rev the review the change records (nil when none). The
// mapping, in this order:
//
//   - a finished code review of task T → review-started (T enters
//     quality_review); when the cycle records it as not clean —
//     consecutive_clean back to 0 without the cycle ending, as after FAIL
//     or no readable verdict — also review-failed (a failure in
//     quality_review, back to in_progress);
//   - the end of task T's code-review cycle — old's next_phase was
//     code-review or post-code-review for T, cur's is past it
//     (complete-task, complete-task-tdd, all-code-review or complete) —
//     → review-passed (approved, then committing);
//   - cur in an implementing phase (next-task, next-task-tdd, continue-task)
//     with a current task, and old not in that phase with that task →
//     task-started for cur's task (in_progress).
//
// The commit of a task in committing is seen by the caller, which has the
// repository at hand (see CommitDue).
func Follow(old, cur *state.State, rev *Review) []Cue {
	var cues []Cue
	passed := cur != nil && old != nil && old.Task() > 0 && inCodeCycle(old) && pastCodeReview(cur.Next())
	if rev != nil && rev.Kind == domain.CodeReview && rev.Task > 0 {
		cues = append(cues, Cue{rev.Task, ReviewStarted})
		if !passed && notClean(rev, cur) {
			cues = append(cues, Cue{rev.Task, ReviewFailed})
		}
	}
	if passed {
		cues = append(cues, Cue{old.Task(), ReviewPassed})
	}
	if cur != nil && cur.Task() > 0 && implementing(cur.Phase) &&
		(old == nil || old.Phase != cur.Phase || old.Task() != cur.Task()) {
		cues = append(cues, Cue{cur.Task(), TaskStarted})
	}
	return cues
}

// inCodeCycle reports whether s awaits a code review or its post-review.
func inCodeCycle(s *state.State) bool {
	n := s.Next()
	return n == domain.CodeReview || n == domain.PostCodeReview
}

// pastCodeReview reports whether next_phase p follows a passed code-review
// cycle.
func pastCodeReview(p domain.Phase) bool {
	switch p {
	case domain.CompleteTask, domain.CompleteTaskTDD, domain.AllCodeReview, domain.Complete:
		return true
	}
	return false
}

// notClean reports whether a review did not count as clean: the state
// after it says so when there is one, the verdict otherwise.
func notClean(rev *Review, cur *state.State) bool {
	if cur == nil {
		return rev.Verdict != domain.Pass
	}
	return cur.ConsecutiveClean == 0
}

func implementing(p domain.Phase) bool {
	return p == domain.NextTask || p == domain.NextTaskTDD || p == domain.ContinueTask
}

// Feed moves the tasks as the cues say, through FromPhase, updating tasks
// in place; a task without a record is first created in pending. It
// returns the effects, in order. A cue the machine refuses — a task under
// escalation or abandoned, a review failure past quality_review, a clock
// before the task's last move — leaves its task alone and is returned
// among the errors: plan phases never fail because of the lifecycle.
func Feed(tasks map[domain.TaskID]Task, cues []Cue, actor Actor, now time.Time) ([]Effect, []error) {
	var effs []Effect
	var errs []error
	for _, c := range cues {
		t, ok := tasks[c.Task]
		var created []Effect
		if !ok {
			var err error
			if t, created, err = New(c.Task, actor, now); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		next, es, err := FromPhase(t, c.Event, actor, now)
		if err != nil {
			errs = append(errs, err)
			if ok {
				continue
			}
			next, es = t, nil // the task is created all the same
		}
		tasks[c.Task] = next
		effs = append(append(effs, created...), es...)
	}
	return effs, errs
}

// Refused reports whether err is a move the machine refused (as opposed
// to bad input), which Feed's callers may ignore.
func Refused(err error) bool { return errors.Is(err, ErrIllegal) || errors.Is(err, ErrRefused) }

// AwaitingCommit lists the tasks in committing, by id.
func AwaitingCommit(tasks map[domain.TaskID]Task) []domain.TaskID {
	var out []domain.TaskID
	for id, t := range tasks {
		if t.State == Committing {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// StampHead records head, the repository's HEAD, on the effects that move
// a task into committing and on the records they leave there, so that the
// task's commit can be told from the commits made before it (CommitDue).
// The records get it as a replay of the effects would (evolve).
func StampHead(tasks map[domain.TaskID]Task, effs []Effect, head string) {
	for i := range effs {
		if e := &effs[i]; e.Kind.Moves() && e.To == Committing {
			e.Meta.Head = head
		}
	}
	for id, in := range entered(effs) {
		if t, ok := tasks[id]; ok && in && t.State == Committing {
			t.Head = head
			tasks[id] = t
		}
	}
}

// entered says, for each task effs move, whether their last move leaves
// it in committing.
func entered(effs []Effect) map[domain.TaskID]bool {
	out := map[domain.TaskID]bool{}
	for _, e := range effs {
		if e.Kind.Moves() {
			out[e.Task] = e.To == Committing
		}
	}
	return out
}

// EntersCommitting reports whether some effect moves a task into committing.
func EntersCommitting(effs []Effect) bool {
	for _, e := range effs {
		if e.Kind.Moves() && e.To == Committing {
			return true
		}
	}
	return false
}

// CommitDue reports whether a task in committing has its commit, given
// the repository's HEAD now (head, "" when it has no commit) and its
// committer time: HEAD moved past the HEAD recorded when the task entered
// committing (descends(recorded) says whether HEAD descends from it; a
// HEAD that went back or elsewhere is not the task's commit). A record
// without a HEAD — it entered committing before any commit existed, or
// before taskie recorded one — takes a commit made at or after it entered
// committing. Without git the caller cues commit-seen at once.
func CommitDue(t Task, head string, at time.Time, descends func(recorded string) bool) bool {
	switch {
	case t.State != Committing || head == "":
		return false
	case t.Head == "":
		return !at.Before(t.Since)
	}
	return head != t.Head && descends(t.Head)
}
