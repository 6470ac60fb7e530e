package parallel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

func TestStandingOf(t *testing.T) {
	cases := []struct {
		status string
		life   lifecycle.State
		want   Standing
	}{
		{"pending", "", Schedulable},
		{"in-progress", "", Schedulable},
		{"pending", lifecycle.Pending, Schedulable},
		{"pending", lifecycle.Assigned, Schedulable},
		{"in-progress", lifecycle.QualityReview, Schedulable},
		{"postponed", "", Parked},
		{"blocked", lifecycle.Assigned, Parked},
		{"weird", "", Parked},
		{"done", "", Finished},
		{"cancelled", "", Dropped},
		// the lifecycle's end states win over tasks.md
		{"pending", lifecycle.Completed, Finished},
		{"in-progress", lifecycle.Completed, Finished},
		{"pending", lifecycle.Abandoned, Dropped},
		{"blocked", lifecycle.Abandoned, Dropped},
		{"cancelled", lifecycle.Completed, Finished},
		// done or cancelled in tasks.md wins over a lifecycle at work
		{"done", lifecycle.InProgress, Finished},
		{"done", lifecycle.HumanEscalation, Finished},
		{"cancelled", lifecycle.CTOIntervention, Dropped},
		// escalations
		{"pending", lifecycle.HumanEscalation, WithHuman},
		{"in-progress", lifecycle.HumanEscalation, WithHuman},
		{"postponed", lifecycle.HumanEscalation, WithHuman},
		{"in-progress", lifecycle.CTOIntervention, AwaitingCTO},
	}
	for _, c := range cases {
		t.Run(c.status+"/"+string(c.life), func(t *testing.T) {
			if got := StandingOf(c.status, c.life); got != c.want {
				t.Errorf("StandingOf(%q, %q) = %s, want %s", c.status, c.life, got, c.want)
			}
		})
	}
}

// life returns t with lifecycle state s.
func (t Task) life(s lifecycle.State) Task { t.Life = s; return t }

// TestScheduleFollowsLifecycle: abandoned, completed and human-escalated
// tasks leave ready, groups and claim --next; a task in cto_intervention
// is planned but never ready; closed ones satisfy their dependents, and
// the dependents of a human-escalated one wait, left out of groups.
func TestScheduleFollowsLifecycle(t *testing.T) {
	tasks := []Task{
		pending(1).life(lifecycle.Completed),              // tasks.md still pending
		pending(2).life(lifecycle.Abandoned).with("a.go"), // abandoned: its file is free
		pending(3, 1).life(lifecycle.HumanEscalation),     // with a human
		pending(4, 3),              // waits on it
		pending(5, 2).with("a.go"), // an abandoned dependency is satisfied
		pending(6).status("in-progress").life(lifecycle.CTOIntervention), // the CTO decides
		pending(7).life(lifecycle.Assigned),                              // assigned, claim released: ready
	}
	claims := []Claim{claim(2, "alice", time.Hour)}
	t.Run("ready", func(t *testing.T) {
		if diff := cmp.Diff([]int{5, 7}, readyIDs(Ready(tasks, claims, t0))); diff != "" {
			t.Errorf("ready (-want +got):\n%s", diff)
		}
	})
	t.Run("claim --next", func(t *testing.T) {
		d, ok := Next(tasks, claims, "alice", t0, time.Hour)
		if !ok || d.Claim.Task != 5 {
			t.Errorf("Next for alice (who holds abandoned 2) = %v, %v; want task 5", d.Claim.Task, ok)
		}
		if id, own := OwnLive(tasks, claims, "alice", t0, nil); own {
			t.Errorf("OwnLive gives back abandoned task %d", id)
		}
	})
	t.Run("groups", func(t *testing.T) {
		waves, left, err := GroupsAside(tasks, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([][]int{{6, 5, 7}}, waveIDs(waves)); diff != "" {
			t.Errorf("waves (-want +got):\n%s", diff)
		}
		got := map[int]string{}
		for _, o := range left {
			got[int(o.Task.ID)] = o.Reason
		}
		want := map[int]string{
			3: "in human_escalation: left out until a person decides (`taskie task resolve 3 --actor human`)",
			4: "waits on task 3, in human_escalation: left out",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("left out (-want +got):\n%s", diff)
		}
		if r := reasonsOf(waves, 6); len(r) < 2 || r[len(r)-1] != "in cto_intervention: not ready until the CTO decides" {
			t.Errorf("reasons of 6 = %q", r)
		}
	})
}

func TestPlanWavesAndCurrent(t *testing.T) {
	tasks := []Task{
		pending(1).with("a"), pending(2).with("b"),
		pending(3, 1).with("a"), pending(4, 2).with("b"),
		pending(5, 3, 4),
	}
	waves, err := PlanWaves(tasks, 5)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]int{{1, 2}, {3, 4}, {5}}, waveIDs(waves)); diff != "" {
		t.Fatalf("plan waves (-want +got):\n%s", diff)
	}
	cases := []struct {
		name string
		set  func([]Task)
		want int
	}{
		{"nothing done", func([]Task) {}, 1},
		{"one of wave 1 done", func(ts []Task) { ts[0].Status = "done" }, 1},
		{"wave 1 done and abandoned", func(ts []Task) { ts[0].Status = "done"; ts[1].Life = lifecycle.Abandoned }, 2},
		{"wave 1 completed, a task of wave 2 done early", func(ts []Task) {
			ts[0].Life, ts[1].Life, ts[3].Status = lifecycle.Completed, lifecycle.Completed, "done"
		}, 2},
		{"all but the last", func(ts []Task) {
			for i := range 4 {
				ts[i].Status = "done"
			}
		}, 3},
		{"all", func(ts []Task) {
			for i := range ts {
				ts[i].Status = "done"
			}
		}, 0},
		{"a human escalation is not finished", func(ts []Task) { ts[0].Status = "done"; ts[1].Life = lifecycle.HumanEscalation }, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := make([]Task, len(tasks))
			copy(ts, tasks)
			c.set(ts)
			if got := CurrentWave(waves, ts); got != c.want {
				t.Errorf("CurrentWave = %d, want %d", got, c.want)
			}
			// the plan's waves do not move as tasks finish
			again, _ := PlanWaves(ts, 5)
			if diff := cmp.Diff(waveIDs(waves), waveIDs(again)); diff != "" {
				t.Errorf("plan waves moved (-before +after):\n%s", diff)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	waves := []Wave{
		{Number: 1, Tasks: []Placement{{Task: pending(1)}, {Task: pending(2)}}},
		{Number: 2, Tasks: []Placement{{Task: pending(3)}, {Task: pending(4)}}},
	}
	started := Mark{Started: true}
	finished := Mark{Started: true, Finished: true, Closed: true}
	dropped := Mark{Closed: true}
	type marks = map[domain.TaskID]Mark
	cases := []struct {
		name          string
		before, after marks
		want          []string
	}{
		{"nothing moves", marks{}, marks{}, nil},
		{"first claim of wave 1", marks{}, marks{1: started}, []string{"GROUP_START: Group 1 of 2 (tasks 1, 2)"}},
		{"second claim of wave 1", marks{1: started}, marks{1: started, 2: started}, nil},
		{"a claim released and taken again", marks{1: started}, marks{1: started}, nil},
		{"first task done", marks{1: started, 2: started}, marks{1: finished, 2: started},
			[]string{"TASK_COMPLETE: Task 1 (wave 1 of 2)"}},
		{"last task done", marks{1: finished, 2: started}, marks{1: finished, 2: finished},
			[]string{"TASK_COMPLETE: Task 2 (wave 1 of 2)", "GROUP_COMPLETE: Group 1 of 2 - 2/2 tasks"}},
		{"last task abandoned", marks{1: finished, 2: started}, marks{1: finished, 2: dropped},
			[]string{"GROUP_COMPLETE: Group 1 of 2 - 1/2 tasks"}},
		{"a wave cancelled whole", marks{}, marks{3: dropped, 4: dropped}, nil},
		{"done by hand in one go", marks{3: dropped}, marks{3: dropped, 4: finished},
			[]string{"GROUP_START: Group 2 of 2 (tasks 3, 4)", "TASK_COMPLETE: Task 4 (wave 2 of 2)", "GROUP_COMPLETE: Group 2 of 2 - 1/2 tasks"}},
		{"already done is not done again", marks{1: finished}, marks{1: finished}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, e := range Progress(waves, c.before, c.after) {
				got = append(got, e.Kind+": "+e.Reason())
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}
