package implied

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/events/eventstest"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
	"github.com/taskie-dev/taskie/internal/store"
)

var at = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// lifecyclePlan is a plan outside git, its clock at `at`.
func lifecyclePlan(t *testing.T, st string) *store.Plan {
	t.Helper()
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | pending |\n| 2 | pending |\n", "state.json": st})
	p.Store.Clock = clock.At(at)
	return p
}

func records(t *testing.T, p *store.Plan) map[domain.TaskID]lifecycle.Task {
	t.Helper()
	p.Reload()
	st, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := lifecycle.Decode(st.Lifecycle)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

func kindsInLog(t *testing.T, p *store.Plan) []string {
	t.Helper()
	evs, _, err := eventstest.Read(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}

// TestUpdateFollowsPhases: a change that starts a task moves its lifecycle
// in the same commit, effects before the commit event.
func TestUpdateFollowsPhases(t *testing.T) {
	p := lifecyclePlan(t, `{"phase":"post-tasks-review","next_phase":"complete-task"}`)
	err := p.Update(func(s *store.Snapshot) (store.Change, error) {
		n := s.State.Clone()
		n.Phase, n.CurrentTask, n.NextPhase = domain.NextTask, state.Opt(domain.TaskID(1)), state.Opt(domain.CodeReview)
		return store.Change{Actor: "cli", State: n}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := records(t, p)[1]; got.State != lifecycle.InProgress || !got.Since.Equal(at) {
		t.Errorf("task 1: %s since %s", got.State, got.Since)
	}
	want := "TASK_CREATED STATE_TRANSITION STATE_TRANSITION STATE_TRANSITION STATE_TRANSITION STATE_CHECKPOINT PHASE_CHANGE"
	if got := strings.Join(kindsInLog(t, p), " "); got != want {
		t.Errorf("log:\n%s\nwant\n%s", got, want)
	}
}

// TestCommitFollowsReview: the hook's commit of a failed review counts a
// failure; of the cycle's end, approves, commits and (outside git)
// completes the task.
func TestCommitFollowsReview(t *testing.T) {
	p := lifecyclePlan(t, `{"phase":"next-task","current_task":"1","next_phase":"code-review"}`)
	review := func(verdict domain.Verdict, next domain.Phase, clean int) {
		t.Helper()
		p.Reload()
		snap, err := p.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		n := snap.State.Clone()
		n.Phase, n.NextPhase, n.ConsecutiveClean = domain.CodeReview, state.Opt(next), clean
		c := store.Change{Actor: "hook", State: n, Events: []events.Event{{Task: "1", Event: events.ReviewFinished,
			Meta: map[string]any{"review": "code-review", "verdict": string(verdict)}}}}
		before := string(n.Lifecycle)
		if err := p.Commit(snap, c); err != nil {
			t.Fatal(err)
		}
		if string(n.Lifecycle) != before {
			t.Error("Commit changed the caller's state")
		}
	}
	review(domain.Fail, domain.PostCodeReview, 0)
	if got := records(t, p)[1]; got.State != lifecycle.InProgress || got.Failures[lifecycle.QualityReview] != 1 {
		t.Fatalf("after FAIL: %s %v", got.State, got.Failures)
	}
	set := func(next domain.Phase) {
		t.Helper()
		if _, _, err := p.Change("cli", "post-review", false, func(s *state.State) (*state.State, error) {
			n := s.Clone()
			n.Phase, n.NextPhase = domain.PostCodeReview, state.Opt(next)
			return n, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(domain.CodeReview)
	review(domain.Pass, domain.PostCodeReview, 1)
	set(domain.CodeReview)
	review(domain.Pass, domain.CompleteTask, 2)
	got := records(t, p)[1]
	if got.State != lifecycle.Completed {
		t.Fatalf("after the cycle: %s", got.State)
	}
	if vs := lifecycle.Check(got); len(vs) > 0 {
		t.Errorf("invariants: %v", vs)
	}
}

// TestFollowSeesLastCommit: outside git a task in committing completes
// when its cycle passes, whatever state.json's last_commit and base_sha
// say: taskie does not use them to see a commit (each task remembers
// HEAD).
func TestFollowSeesLastCommit(t *testing.T) {
	p := lifecyclePlan(t, `{"phase":"post-code-review","current_task":"2","next_phase":"code-review","consecutive_clean":1,"base_sha":"aaa","last_commit":"bbb"}`)
	tasks := map[domain.TaskID]lifecycle.Task{}
	old, _ := p.State()
	cur := old.Clone()
	cur.Phase, cur.NextPhase = domain.CodeReview, state.Opt(domain.CompleteTask)
	if _, errs := lifecycle.Feed(tasks, lifecycle.Follow(old, cur, nil), lifecycle.ActorHook, at); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := commitsSeen(p, tasks); len(got) != 1 || got[0].Task != 2 {
		t.Errorf("commitsSeen = %v, want task 2 (no git: at once)", got)
	}
	cur.LastCommit = "aaa"
	if !inGit(p.Repo.Root) && len(commitsSeen(p, tasks)) != 1 {
		t.Error("outside git a commit is seen at once")
	}
}

// TestFollowLeavesBrokenRecords: a lifecycle field that does not decode
// does not stop the plan: the change is committed without lifecycle moves.
func TestFollowLeavesBrokenRecords(t *testing.T) {
	p := lifecyclePlan(t, `{"phase":"post-tasks-review","next_phase":"complete-task","lifecycle":{"x":1}}`)
	err := p.Update(func(s *store.Snapshot) (store.Change, error) {
		n := s.State.Clone()
		n.Phase, n.CurrentTask = domain.NextTask, state.Opt(domain.TaskID(1))
		return store.Change{Actor: "cli", State: n}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := p.State()
	if string(st.Lifecycle) != `{"x":1}` || st.Phase != domain.NextTask {
		t.Errorf("state: %s", st.Encode())
	}
}

// gitInit makes the plan's root a git repository with one commit.
func gitInit(t *testing.T, p *store.Plan) func(msg string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	commit := func(msg string) {
		t.Helper()
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", msg}} {
			cmd := exec.Command("git", append([]string{"-C", p.Repo.Root}, args...)...)
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
				"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2026-03-01T09:00:00Z", "GIT_COMMITTER_DATE=2026-03-01T09:00:00Z")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	if out, err := exec.Command("git", "init", "-q", p.Repo.Root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	commit("the plan")
	return commit
}

// TestCommittingWaitsForItsCommit: a task whose cycle passes remembers
// HEAD; a commit made before (a WIP commit) does not complete it, nor does
// one with the same time; the next commit does, when the hook or a query
// settles — even with no later phase move (the plan's last task).
func TestCommittingWaitsForItsCommit(t *testing.T) {
	p := lifecyclePlan(t, `{"max_reviews":0,"phase":"next-task","current_task":"1","next_phase":"code-review"}`)
	commit := gitInit(t, p)
	commit("wip, not the task's commit")
	p.Reload()
	if _, _, err := p.Change("hook", "cycle passed", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.Phase, n.NextPhase = domain.CodeReview, state.Opt(domain.CompleteTask)
		return n, nil
	}); err != nil {
		t.Fatal(err)
	}
	got := records(t, p)[1]
	if got.State != lifecycle.Committing || got.Head == "" {
		t.Fatalf("after the cycle: %s, head %q", got.State, got.Head)
	}
	if err := SettleCommits(p, "hook"); err != nil {
		t.Fatal(err)
	}
	if got := records(t, p)[1]; got.State != lifecycle.Committing {
		t.Fatalf("no new commit, yet the task is %s", got.State)
	}
	commit("task 1")
	if err := SettleCommits(p, "hook"); err != nil {
		t.Fatal(err)
	}
	if got := records(t, p)[1]; got.State != lifecycle.Completed {
		t.Fatalf("after its commit the task is %s", got.State)
	}
	kinds := kindsInLog(t, p)
	if last := kinds[len(kinds)-2:]; last[0] != "STATE_TRANSITION" || last[1] != events.LifecycleCommit {
		t.Errorf("log ends %v, want the completion and its commit", last)
	}
}

// TestSettleCommitsIdle: with no task in committing SettleCommits writes
// nothing and asks git nothing.
func TestSettleCommitsIdle(t *testing.T) {
	p := lifecyclePlan(t, `{"phase":"next-task","current_task":"1","next_phase":"code-review","lifecycle":{"1":{"state":"in_progress","since":"2026-03-01T09:00:00Z","created":"2026-03-01T09:00:00Z"}}}`)
	before := readFile(t, p, "state.json")
	if err := SettleCommits(p, "hook"); err != nil {
		t.Fatal(err)
	}
	if readFile(t, p, "state.json") != before || readFile(t, p, "events.jsonl") != "" {
		t.Error("SettleCommits wrote with no task in committing")
	}
}
