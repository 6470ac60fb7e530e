package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMetrics(t *testing.T) {
	task, log := reachLog(t, Pending, "")
	now := t0
	steps := []struct {
		after time.Duration
		do    func(Task, time.Time) (Task, []Effect, error)
	}{
		{10 * time.Minute, func(x Task, n time.Time) (Task, []Effect, error) { return FromPhase(x, TaskStarted, ActorHook, n) }},
		{2 * time.Hour, func(x Task, n time.Time) (Task, []Effect, error) { return FromPhase(x, ReviewStarted, ActorHook, n) }},
		{20 * time.Minute, func(x Task, n time.Time) (Task, []Effect, error) { return FromPhase(x, ReviewFailed, ActorHook, n) }},
		{time.Hour, func(x Task, n time.Time) (Task, []Effect, error) { return Move(x, Testing, ActorAgent, "", n) }},
	}
	for _, st := range steps {
		now = now.Add(st.after)
		r := res(st.do(task, now))
		task, log = r.ok(t), append(log, r.effs...)
	}
	at := now.Add(5 * time.Minute)
	want := TimeMetrics{
		State:   Testing,
		InState: 5 * time.Minute,
		Total:   at.Sub(t0),
		ByState: map[State]time.Duration{
			Pending: 10 * time.Minute, Assigned: 0, Planning: 0, Validated: 0,
			InProgress: 2*time.Hour + time.Hour, Testing: 5 * time.Minute, QualityReview: 20 * time.Minute,
		},
	}
	if diff := cmp.Diff(want, Metrics(task, at)); diff != "" {
		t.Errorf("Metrics (-want +got):\n%s", diff)
	}
	replayed, err := Replay(log)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, Metrics(replayed[1], at)); diff != "" {
		t.Errorf("Metrics of the replay (-want +got):\n%s", diff)
	}
}

func TestMetricsStopAtTheEnd(t *testing.T) {
	task := reach(t, Completed, "")
	later := task.Since.Add(72 * time.Hour)
	m := Metrics(task, later)
	if m.InState != 72*time.Hour || m.Total != task.Since.Sub(task.Created) {
		t.Errorf("completed task: in state %s, total %s; want 72h, %s", m.InState, m.Total, task.Since.Sub(task.Created))
	}
	if _, ok := m.ByState[Completed]; ok {
		t.Errorf("time after completion counted: %v", m.ByState)
	}
}
