package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/state"
)

// ps is a plan state: phase, next_phase, current task, consecutive_clean.
func ps(phase, next domain.Phase, task domain.TaskID, clean int) *state.State {
	s := state.New()
	s.Phase, s.NextPhase, s.CurrentTask, s.ConsecutiveClean = phase, state.Opt(next), state.Opt(task), clean
	return s
}

func codeReview(task domain.TaskID, v domain.Verdict) *Review {
	return &Review{Task: task, Kind: domain.CodeReview, Verdict: v}
}

// TestFollow is the phase → lifecycle mapping, one row per case.
func TestFollow(t *testing.T) {
	const (
		cr, pcr = domain.CodeReview, domain.PostCodeReview
		nt, ct  = domain.NextTask, domain.ContinueTask
	)
	cases := []struct {
		name     string
		old, cur *state.State
		rev      *Review
		want     []Cue
	}{
		{"start a task", ps(domain.PostTasksReview, domain.CompleteTask, 0, 0), ps(nt, cr, 3, 0), nil,
			[]Cue{{3, TaskStarted}}},
		{"start a task test-first", ps(domain.PostTasksReview, domain.CompleteTaskTDD, 0, 0), ps(domain.NextTaskTDD, cr, 3, 0), nil,
			[]Cue{{3, TaskStarted}}},
		{"first state of a plan", nil, ps(nt, "", 2, 0), nil, []Cue{{2, TaskStarted}}},
		{"continue a task", ps(pcr, cr, 3, 0), ps(ct, cr, 3, 0), nil, []Cue{{3, TaskStarted}}},
		{"implementing, nothing moved", ps(nt, cr, 3, 0), ps(nt, cr, 3, 0), nil, nil},
		{"next task after a passed cycle", ps(cr, domain.CompleteTask, 3, 2), ps(nt, cr, 4, 0), nil, []Cue{{4, TaskStarted}}},
		{"review FAIL", ps(nt, cr, 3, 0), ps(cr, pcr, 3, 0), codeReview(3, domain.Fail),
			[]Cue{{3, ReviewStarted}, {3, ReviewFailed}}},
		{"review without a readable verdict", ps(pcr, cr, 3, 1), ps(cr, pcr, 3, 0), codeReview(3, ""),
			[]Cue{{3, ReviewStarted}, {3, ReviewFailed}}},
		{"first PASS", ps(nt, cr, 3, 0), ps(cr, pcr, 3, 1), codeReview(3, domain.Pass), []Cue{{3, ReviewStarted}}},
		{"PASS with blocking findings (ledger: not clean)", ps(nt, cr, 3, 0), ps(cr, pcr, 3, 0), codeReview(3, domain.Pass),
			[]Cue{{3, ReviewStarted}, {3, ReviewFailed}}},
		{"FAIL counted clean by the ratchet", ps(pcr, cr, 3, 0), ps(cr, pcr, 3, 1), codeReview(3, domain.Fail), []Cue{{3, ReviewStarted}}},
		{"second PASS ends the cycle", ps(pcr, cr, 3, 1), ps(cr, domain.CompleteTask, 3, 2), codeReview(3, domain.Pass),
			[]Cue{{3, ReviewStarted}, {3, ReviewPassed}}},
		{"last task's cycle ends in all-code-review", ps(pcr, cr, 3, 1), ps(cr, domain.AllCodeReview, 3, 0), codeReview(3, domain.Pass),
			[]Cue{{3, ReviewStarted}, {3, ReviewPassed}}},
		{"max_reviews 0: the cycle passes with no review", ps(nt, cr, 3, 0), ps(cr, domain.CompleteTaskTDD, 3, 0), nil,
			[]Cue{{3, ReviewPassed}}},
		{"post-review detected", ps(cr, pcr, 3, 0), ps(pcr, cr, 3, 0), nil, nil},
		{"plan review", ps(domain.NewPlan, domain.PlanReview, 0, 0), ps(domain.PlanReview, domain.PostPlanReview, 0, 0),
			&Review{Kind: domain.PlanReview, Verdict: domain.Fail}, nil},
		{"all-code review", ps(domain.PostCodeReview, domain.AllCodeReview, 3, 0), ps(domain.AllCodeReview, domain.PostAllCodeReview, 3, 0),
			&Review{Task: 3, Kind: domain.AllCodeReview, Verdict: domain.Fail}, nil},
		{"all-code cycle passes: no task moves", ps(domain.PostAllCodeReview, domain.AllCodeReview, 3, 1), ps(domain.AllCodeReview, domain.Complete, 3, 2),
			&Review{Kind: domain.AllCodeReview, Verdict: domain.Pass}, nil},
		{"standalone phase change", ps(nt, "", 3, 0), ps(cr, "", 3, 0), nil, nil},
		{"no state after", ps(nt, cr, 3, 0), nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Follow(tc.old, tc.cur, tc.rev)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Follow (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFeedReviewLoopEscalates: three failed reviews of a task take it to
// cto_intervention by themselves; further reviews leave it there.
func TestFeedReviewLoopEscalates(t *testing.T) {
	tasks := map[domain.TaskID]Task{}
	now := t0
	feed := func(cues ...Cue) []Effect {
		t.Helper()
		now = now.Add(10 * time.Minute)
		effs, errs := Feed(tasks, cues, ActorHook, now)
		for _, err := range errs {
			if !Refused(err) {
				t.Fatalf("Feed: %v", err)
			}
		}
		return effs
	}
	effs := feed(Cue{3, TaskStarted})
	if diff := cmp.Diff([]Kind{KindCreated, KindTransition, KindTransition, KindTransition, KindTransition}, kinds(effs)); diff != "" {
		t.Errorf("start (-want +got):\n%s", diff)
	}
	for i := 1; i <= 2; i++ {
		feed(Cue{3, ReviewStarted}, Cue{3, ReviewFailed})
		if got := tasks[3]; got.State != InProgress || got.Failures[QualityReview] != i {
			t.Fatalf("after FAIL %d: %s with failures %v", i, got.State, got.Failures)
		}
	}
	effs = feed(Cue{3, ReviewStarted}, Cue{3, ReviewFailed})
	if got := tasks[3]; got.State != CTOIntervention || got.EscalatedFrom != QualityReview {
		t.Fatalf("after the third FAIL: %s from %s", got.State, got.EscalatedFrom)
	}
	if last := effs[len(effs)-1]; last.Kind != KindCTO || last.Actor != ActorSystem {
		t.Errorf("escalation effect = %v", last)
	}
	before := tasks[3]
	_, errs := Feed(tasks, []Cue{{3, ReviewStarted}, {3, ReviewPassed}}, ActorHook, now.Add(time.Hour))
	if len(errs) != 2 || !errors.Is(errs[0], ErrIllegal) {
		t.Errorf("phases moved an escalated task: %v", errs)
	}
	if diff := cmp.Diff(before, tasks[3]); diff != "" {
		t.Errorf("escalated task changed:\n%s", diff)
	}
	for _, tk := range tasks {
		if vs := Check(tk); len(vs) > 0 {
			t.Errorf("invariants: %v", vs)
		}
	}
}

// TestFeedToCompletion: a passed cycle approves and commits the task; the
// commit completes it.
func TestFeedToCompletion(t *testing.T) {
	tasks := map[domain.TaskID]Task{}
	effs, errs := Feed(tasks, []Cue{{5, TaskStarted}, {5, ReviewStarted}, {5, ReviewPassed}}, ActorHook, t0)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var to []State
	for _, e := range effs {
		to = append(to, e.To)
	}
	want := []State{Pending, Assigned, Planning, Validated, InProgress, Testing, QualityReview, Approved, Committing}
	if diff := cmp.Diff(want, to); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if got := AwaitingCommit(tasks); len(got) != 1 || got[0] != 5 {
		t.Fatalf("AwaitingCommit = %v", got)
	}
	if CommitCounts(tasks[5], t0.Add(-time.Second)) || !CommitCounts(tasks[5], t0) {
		t.Error("CommitCounts: a commit counts from the task's creation on")
	}
	if _, errs := Feed(tasks, []Cue{{5, CommitSeen}}, ActorHook, t0.Add(time.Minute)); len(errs) > 0 || tasks[5].State != Completed {
		t.Errorf("commit seen: %v, %s", errs, tasks[5].State)
	}
	if len(AwaitingCommit(tasks)) != 0 {
		t.Error("a completed task awaits no commit")
	}
}

// TestFeedLogReplays: what Feed records, the log of its effects rebuilds.
func TestFeedLogReplays(t *testing.T) {
	tasks := map[domain.TaskID]Task{}
	var log []Effect
	now := t0
	for _, cues := range [][]Cue{
		{{1, TaskStarted}}, {{1, ReviewStarted}, {1, ReviewFailed}}, {{1, ReviewStarted}}, {{1, ReviewPassed}, {2, TaskStarted}},
		{{1, CommitSeen}}, {{2, ReviewStarted}, {2, ReviewFailed}},
	} {
		now = now.Add(7 * time.Minute)
		effs, errs := Feed(tasks, cues, ActorHook, now)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		log = append(log, effs...)
	}
	l := NewLog()
	for i, e := range log {
		l.Add(i, e)
	}
	if vs, more := l.Violations(); len(vs)+more > 0 {
		t.Fatalf("violations: %v", vs)
	}
	if string(Encode(l.Tasks())) != string(Encode(tasks)) {
		t.Errorf("replay differs:\n%s\n%s", Encode(l.Tasks()), Encode(tasks))
	}
}
