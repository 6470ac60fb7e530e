package implied

import (
	"testing"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/gitwt"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/state"
)

// TestLastCommitDoesNotComplete: a state.json whose last_commit differs
// from base_sha (written by hand, or by an older tool) does not complete
// the current task in committing: only a commit after the HEAD the task
// remembered does.
func TestLastCommitDoesNotComplete(t *testing.T) {
	p := lifecyclePlan(t, `{"max_reviews":0,"phase":"next-task","current_task":"1","next_phase":"code-review","base_sha":"aaa","last_commit":"bbb"}`)
	commit := gitInit(t, p)
	p.Reload()
	if _, _, err := p.Change("hook", "cycle passed", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.Phase, n.NextPhase = domain.CodeReview, state.Opt(domain.CompleteTask)
		return n, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := SettleCommits(p, "hook"); err != nil {
		t.Fatal(err)
	}
	if got := records(t, p)[1]; got.State != lifecycle.Committing {
		t.Fatalf("no commit since the task entered committing, yet it is %s", got.State)
	}
	commit("task 1")
	if err := SettleCommits(p, "hook"); err != nil {
		t.Fatal(err)
	}
	if got := records(t, p)[1]; got.State != lifecycle.Completed {
		t.Fatalf("after its commit the task is %s", got.State)
	}
}

// headUnmoved answers from git's files: true only while HEAD is the commit
// every waiting task remembered (then SettleCommits runs no git process).
func TestHeadUnmoved(t *testing.T) {
	p := lifecyclePlan(t, `{"max_reviews":0,"phase":"next-task","current_task":"1","next_phase":"code-review"}`)
	unmoved := func(tasks map[domain.TaskID]lifecycle.Task) bool {
		_, ok := headUnmoved(p.Repo.Root, lifecycle.NeedsHead(tasks))
		return ok
	}
	if unmoved(map[domain.TaskID]lifecycle.Task{1: {State: lifecycle.Committing, Head: "x"}}) {
		t.Fatal("no git repository: only git can tell")
	}
	commit := gitInit(t, p)
	head, ok := gitwt.HeadFromFiles(p.Repo.Root)
	if !ok {
		t.Fatal("HEAD not read from the files of a fresh repository")
	}
	waiting := map[domain.TaskID]lifecycle.Task{1: {State: lifecycle.Committing, Head: head}, 2: {State: lifecycle.Completed}}
	if !unmoved(waiting) {
		t.Error("HEAD is the remembered commit, yet it counts as moved")
	}
	if lifecycle.NeedsHead(map[domain.TaskID]lifecycle.Task{2: {State: lifecycle.Completed}}) != nil {
		t.Error("no task waits: nothing to look for")
	}
	commit("next")
	if unmoved(waiting) {
		t.Error("HEAD moved on, yet it counts as unmoved")
	}
	if unmoved(map[domain.TaskID]lifecycle.Task{1: {State: lifecycle.Committing}}) {
		t.Error("a task without a remembered HEAD must ask git")
	}
}
