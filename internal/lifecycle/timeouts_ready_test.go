package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func TestReadiness(t *testing.T) {
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	rec := func(id domain.TaskID, s State, since time.Time) Task { return Task{ID: id, State: s, Since: since} }
	rows := func(n int) []Row {
		out := make([]Row, n)
		for i := range out {
			out[i] = Row{ID: domain.TaskID(i + 1)}
		}
		return out
	}
	with := func(rs []Row, f func([]Row)) []Row { f(rs); return rs }
	cases := []struct {
		name    string
		rows    []Row
		records map[domain.TaskID]Task
		want    ReadyAt
	}{
		{name: "sequential, nothing done: only the first is ready", rows: rows(10),
			want: ReadyAt{1: {}}},
		{name: "sequential, first in progress: the rest queue", rows: rows(3),
			records: map[domain.TaskID]Task{1: rec(1, InProgress, h(0))},
			want:    ReadyAt{1: {}}},
		{name: "sequential, first completed: the second ready since then", rows: rows(3),
			records: map[domain.TaskID]Task{1: rec(1, Completed, h(1))},
			want:    ReadyAt{2: h(1)}},
		{name: "sequential, done in tasks.md only: since its record's since", rows: with(rows(3), func(r []Row) { r[0].Done = true }),
			records: map[domain.TaskID]Task{1: rec(1, InProgress, h(1))},
			want:    ReadyAt{2: h(1)}},
		{name: "sequential, done in tasks.md without a record: from the start", rows: with(rows(3), func(r []Row) { r[0].Done = true }),
			want: ReadyAt{2: {}}},
		{name: "sequential, the last of the finished before counts", rows: rows(4),
			records: map[domain.TaskID]Task{1: rec(1, Completed, h(2)), 2: rec(2, Abandoned, h(1))},
			want:    ReadyAt{3: h(2)}},
		{name: "sequential, a task started out of order is ready, the next is not", rows: with(rows(4), func(r []Row) { r[2].Started = true }),
			want: ReadyAt{1: {}, 3: {}}},
		{name: "sequential, a gap keeps the later ones queued", rows: rows(3),
			records: map[domain.TaskID]Task{2: rec(2, Completed, h(1))},
			want:    ReadyAt{1: {}}},
		{name: "dependencies: ready when the last is finished", rows: []Row{{ID: 1}, {ID: 2}, {ID: 3, Deps: []domain.TaskID{1, 2}}, {ID: 4, Deps: []domain.TaskID{1}}},
			records: map[domain.TaskID]Task{1: rec(1, Completed, h(2)), 2: rec(2, InProgress, h(1))},
			want:    ReadyAt{2: {}, 4: h(2)}},
		{name: "dependencies: a task without any is ready from the start", rows: []Row{{ID: 1}, {ID: 2}, {ID: 3, Deps: []domain.TaskID{2}}},
			want: ReadyAt{1: {}, 2: {}}},
		{name: "dependencies: an unknown id is never finished", rows: []Row{{ID: 1, Deps: []domain.TaskID{9}}},
			want: ReadyAt{}},
		{name: "dependencies: cancelled in tasks.md counts as finished", rows: []Row{{ID: 1, Done: true}, {ID: 2, Deps: []domain.TaskID{1}}},
			want: ReadyAt{2: {}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Readiness(tc.rows, tc.records)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadyStatus(t *testing.T) {
	timeouts := DefaultTimeouts() // pending 1h, in_progress 4h
	pending := Task{ID: 2, State: Pending, Since: t0}
	working := Task{ID: 3, State: InProgress, Since: t0}
	cases := []struct {
		name  string
		ready ReadyAt
		task  Task
		now   time.Time
		want  TimeoutStatus
	}{
		{name: "nil: from since, as Status", ready: nil, task: pending, now: t0.Add(3 * time.Hour),
			want: TimeoutStatus{State: Pending, Level: LevelEscalate, Elapsed: 3 * time.Hour, Limit: time.Hour}},
		{name: "queued: no level, no limit", ready: ReadyAt{}, task: pending, now: t0.Add(3 * time.Hour),
			want: TimeoutStatus{State: Pending, Elapsed: 3 * time.Hour, Queued: true}},
		{name: "ready later than since: from ready", ready: ReadyAt{2: t0.Add(2 * time.Hour)}, task: pending, now: t0.Add(3 * time.Hour),
			want: TimeoutStatus{State: Pending, Level: LevelAlert, Elapsed: time.Hour, Limit: time.Hour}},
		{name: "ready before since: from since", ready: ReadyAt{2: t0.Add(-time.Hour)}, task: pending, now: t0.Add(30 * time.Minute),
			want: TimeoutStatus{State: Pending, Level: LevelOK, Elapsed: 30 * time.Minute, Limit: time.Hour}},
		{name: "another state ignores readiness", ready: ReadyAt{}, task: working, now: t0.Add(4 * time.Hour),
			want: TimeoutStatus{State: InProgress, Level: LevelAlert, Elapsed: 4 * time.Hour, Limit: 4 * time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.ready.Status(tc.task, tc.now, timeouts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// A queued task logs no warning; once ready, from then.
	task := res(New(2, ActorSystem, t0)).ok(t)
	if _, effs, err := (ReadyAt{}).TimeoutWarnings(task, t0.Add(3*time.Hour), timeouts); err != nil || len(effs) != 0 {
		t.Errorf("queued: effects %v, err %v; want none", effs, err)
	}
	_, effs, err := ReadyAt{2: t0.Add(2 * time.Hour)}.TimeoutWarnings(task, t0.Add(3*time.Hour), timeouts)
	if err != nil || len(effs) != 2 || effs[1].Meta.Level != "alert" || effs[1].Reason != "1h of 1h" {
		t.Errorf("ready 1h ago: effects %+v, err %v; want warning and alert, 1h of 1h", effs, err)
	}
}
