package lifecycle

import (
	"errors"
	"strings"
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

// TestCommitDue: the task's commit is one made after it entered
// committing: HEAD moved on from the recorded one (and descends from it);
// without a recorded HEAD, a commit made at or after it entered.
func TestCommitDue(t *testing.T) {
	committing := func(head string) Task {
		tk := reach(t, Committing, "")
		tk.Head = head
		return tk
	}
	since := committing("").Since
	yes := func(string) bool { return true }
	no := func(string) bool { return false }
	cases := []struct {
		name     string
		task     Task
		head     string
		at       time.Time
		descends func(string) bool
		want     bool
	}{
		{"HEAD unchanged: the WIP commit made before is not it", committing("aaa"), "aaa", since.Add(time.Hour), yes, false},
		{"HEAD moved on", committing("aaa"), "bbb", since.Add(time.Hour), yes, true},
		{"HEAD moved back or elsewhere", committing("aaa"), "ccc", since.Add(time.Hour), no, false},
		{"a recorded HEAD ignores commit times", committing("aaa"), "bbb", since.Add(-time.Hour), yes, true},
		{"no recorded HEAD: a commit before it entered committing", committing(""), "bbb", since.Add(-time.Second), yes, false},
		{"no recorded HEAD: a commit since", committing(""), "bbb", since, yes, true},
		{"no commit at all", committing(""), "", since.Add(time.Hour), yes, false},
		{"not in committing", reach(t, Approved, ""), "bbb", since.Add(time.Hour), yes, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CommitDue(tc.task, tc.head, tc.at, tc.descends); got != tc.want {
				t.Errorf("CommitDue = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStampHeadReplays: the HEAD stamped on the move into committing is
// in the record, leaves it with the task, and the log rebuilds it.
func TestStampHeadReplays(t *testing.T) {
	tasks := map[domain.TaskID]Task{}
	var log []Effect
	step := func(at time.Time, head string, cues ...Cue) {
		t.Helper()
		effs, errs := Feed(tasks, cues, ActorHook, at)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if head != "" && EntersCommitting(effs) {
			StampHead(tasks, effs, head)
		}
		log = append(log, effs...)
	}
	step(t0, "h0", Cue{1, TaskStarted}, Cue{2, TaskStarted})
	step(t0.Add(time.Minute), "h1", Cue{1, ReviewPassed})
	if tasks[1].Head != "h1" || tasks[2].Head != "" {
		t.Fatalf("heads after task 1 entered committing: %q, %q", tasks[1].Head, tasks[2].Head)
	}
	if !strings.Contains(string(Encode(tasks)), `"head":"h1"`) {
		t.Errorf("the record does not keep the HEAD: %s", Encode(tasks))
	}
	step(t0.Add(2*time.Minute), "h2", Cue{1, CommitSeen}, Cue{2, ReviewPassed})
	if tasks[1].Head != "" || tasks[2].Head != "h2" {
		t.Fatalf("heads: %q, %q", tasks[1].Head, tasks[2].Head)
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
	back, err := Decode(Encode(tasks))
	if err != nil || string(Encode(back)) != string(Encode(tasks)) {
		t.Errorf("records do not round-trip: %v\n%s", err, Encode(back))
	}
}
