package project

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/state"
)

func newPlan(t *testing.T, files map[string]string) *Plan {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, ".taskie", "plans", "p", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := plan.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Get(r, "p")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSwapRefusesAMovedState(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"new-plan","next_phase":"plan-review"}`})
	read, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	// Someone else changes the plan while we "review".
	if _, _, err := p.Change("other", "raise", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.MaxReviews = 12
		return n, nil
	}); err != nil {
		t.Fatal(err)
	}
	next := read.Clone()
	next.Phase = "plan-review"
	if err := p.Swap(read, next, "hook", "review"); !errors.Is(err, ErrMoved) {
		t.Fatalf("Swap over a moved state = %v, want ErrMoved", err)
	}
	got, _ := p.State()
	if got.MaxReviews != 12 || got.Phase != "new-plan" {
		t.Errorf("the other update was lost or ours was written: %+v", got)
	}
	cur, _ := p.State()
	if err := p.Swap(cur, next, "hook", "review"); err != nil {
		t.Fatalf("Swap over the current state: %v", err)
	}
}

func TestChangeRefusesUnknownPhase(t *testing.T) {
	const bad = `{"phase":"dancing"}`
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "state.json": bad})
	_, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) { return s, nil })
	var fe *state.FieldError
	if !errors.As(err, &fe) || fe.Field != "phase" {
		t.Fatalf("err = %v, want a field error on phase", err)
	}
	if data, _ := os.ReadFile(p.Path("state.json")); string(data) != bad {
		t.Errorf("state.json was rewritten: %s", data)
	}
}

func TestNewCycleArchivesTheSeries(t *testing.T) {
	p := newPlan(t, map[string]string{
		"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | done |\n", "task-1.md": "# 1\n",
		"task-1-review-1.md": "old", "task-1-post-review-1.md": "old post", "task-1-code-review-2.md": "legacy",
		"state.json": `{"phase":"code-review","current_task":"1","phase_iteration":2,"next_phase":"complete-task","consecutive_clean":2}`,
	})
	_, _, err := p.Change("cli", "reopen", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.Phase, n.NextPhase, n.PhaseIteration, n.ConsecutiveClean = "next-task", state.Str("code-review"), state.Int(0), 0
		return n, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"task-1-review-1.md", "task-1-post-review-1.md", "task-1-code-review-2.md"} {
		if p.Exists(f) {
			t.Errorf("%s still in the plan directory", f)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(p.Repo.TaskieDir(), "archive", "p", "task-1-code-review-*", "task-1-review-1.md"))
	if len(matches) != 1 {
		t.Fatalf("archived review not found: %v", matches)
	}
	evs, _, _ := events.Read(p.Dir)
	if len(evs) == 0 || evs[0].Event != events.ReviewsArchived {
		t.Errorf("events = %+v, want REVIEWS_ARCHIVED first", evs)
	}
	// A change inside the cycle archives nothing.
	if err := os.WriteFile(p.Path("task-1-review-1.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) { n := s.Clone(); n.MaxReviews = 9; return n, nil }); err != nil {
		t.Fatal(err)
	}
	if !p.Exists("task-1-review-1.md") {
		t.Error("a change inside the cycle archived its review")
	}
}

func TestEventsFailureKeepsTheChange(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "state.json": `{"phase":"new-plan"}`})
	if err := os.Mkdir(p.Path(events.FileName), 0o755); err != nil { // appending will fail
		t.Fatal(err)
	}
	_, _, err := p.Change("cli", "x", false, func(s *state.State) (*state.State, error) {
		n := s.Clone()
		n.NextPhase = state.Str("plan-review")
		return n, nil
	})
	var ee *EventsError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "state.json was updated") {
		t.Fatalf("err = %v, want an EventsError", err)
	}
	if s, _ := p.State(); s.Next() != "plan-review" {
		t.Errorf("the state change was lost: %+v", s)
	}
}

func TestTaskIDNamesKnownIDs(t *testing.T) {
	p := newPlan(t, map[string]string{"plan.md": "# p\n", "tasks.md": "| Id | Status |\n|---|---|\n| 1 | pending |\n| 4 | done |\n"})
	for in, want := range map[string]string{"x": `task id "x" is not a positive integer; known tasks: 1, 4`, "3": "unknown task 3 in plan p; known tasks: 1, 4"} {
		if _, err := p.TaskID(in); err == nil || err.Error() != want {
			t.Errorf("TaskID(%q) = %v, want %q", in, err, want)
		}
	}
	if got, err := p.TaskID(" 4 "); err != nil || got != "4" {
		t.Errorf("TaskID(4) = %q, %v", got, err)
	}
}
