package parallel

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

func TestGroups(t *testing.T) {
	tests := []struct {
		name    string
		tasks   []Task
		max     int
		want    [][]int
		reasons map[int][]string // only the tasks listed are checked
	}{
		{
			name:  "chain",
			tasks: []Task{pending(1), pending(2, 1), pending(3, 2)},
			want:  [][]int{{1}, {2}, {3}},
			reasons: map[int][]string{
				1: {"wave 1: no dependencies"},
				3: {"wave 3: depends on 2 (wave 2)"},
			},
		},
		{
			name:    "diamond",
			tasks:   []Task{pending(4, 2, 3), pending(3, 1), pending(2, 1), pending(1)},
			want:    [][]int{{1}, {2, 3}, {4}},
			reasons: map[int][]string{4: {"wave 3: depends on 2 (wave 2), 3 (wave 2)"}},
		},
		{
			name:  "independent, max 2",
			tasks: []Task{pending(1), pending(2), pending(3), pending(4), pending(5)},
			max:   2,
			want:  [][]int{{1, 2}, {3, 4}, {5}},
			reasons: map[int][]string{
				3: {"wave 1: no dependencies", "moved to wave 2: wave 1 full (2)"},
				5: {"wave 1: no dependencies", "moved to wave 3: waves 1–2 full (2)"},
			},
		},
		{
			name:  "max 0 is the default group size",
			tasks: []Task{pending(1), pending(2), pending(3), pending(4), pending(5), pending(6)},
			want:  [][]int{{1, 2, 3, 4, 5}, {6}},
		},
		{
			name: "independent tasks sharing a file go to different waves",
			tasks: []Task{
				pending(1).with("internal/a.go"),
				pending(2).with("internal/b.go", "./internal/a.go"),
				pending(3).with("internal/c.go"),
			},
			want:    [][]int{{1, 3}, {2}},
			reasons: map[int][]string{2: {"wave 1: no dependencies", "moved to wave 2: shares internal/a.go with task 1"}},
		},
		{
			name: "a directory overlaps the files under it",
			tasks: []Task{
				pending(1).with("internal/x/"),
				pending(2).with("internal/x/y.go"),
				pending(3).with("internal/xy/z.go"),
				pending(4).with("internal/x/*_test.go"),
			},
			want: [][]int{{1, 3}, {2}, {4}},
			reasons: map[int][]string{
				2: {"wave 1: no dependencies", "moved to wave 2: internal/x/y.go overlaps internal/x/ of task 1"},
				4: {"wave 1: no dependencies", "moved to wave 2: shares internal/x/ with task 1",
					"moved to wave 3: internal/x/ overlaps internal/x/y.go of task 2"},
			},
		},
		{
			name:  "tasks without files overlap nothing",
			tasks: []Task{pending(1), pending(2), pending(3).with("a.go")},
			want:  [][]int{{1, 2, 3}},
		},
		{
			name:  "priority order: high first",
			tasks: []Task{pending(1).prio(PriorityLow), pending(2), pending(3).prio(PriorityHigh), pending(4).prio(0)},
			max:   1,
			want:  [][]int{{4}, {3}, {2}, {1}},
		},
		{
			name: "reordered: a task that blocks a high-priority one inherits its priority",
			tasks: []Task{
				pending(1).prio(PriorityLow),
				pending(2).prio(PriorityLow),
				pending(3, 2).prio(PriorityHigh),
			},
			max:  1,
			want: [][]int{{2}, {3}, {1}},
			reasons: map[int][]string{
				2: {"wave 1: no dependencies", "priority high, inherited from task 3 (own: low)"},
				1: {"wave 1: no dependencies", "moved to wave 3: waves 1–2 full (1)"},
			},
		},
		{
			name: "a later task fills an earlier wave when dependencies allow",
			tasks: []Task{
				pending(1).with("a.go"),
				pending(2, 1).with("b.go"),
				pending(3).with("a.go"),
				pending(4).with("c.go"),
			},
			want: [][]int{{1, 4}, {2, 3}},
		},
		{
			name: "full, then a file clash",
			tasks: []Task{
				pending(1).prio(PriorityHigh).with("x.go"),
				pending(2).prio(PriorityHigh).with("a.go"),
				pending(3).with("a.go"),
				pending(4).prio(PriorityLow).with("y.go"),
				pending(5, 1).prio(PriorityHigh).with("a.go"),
			},
			max:  2,
			want: [][]int{{1, 2}, {5, 4}, {3}},
			reasons: map[int][]string{
				3: {"wave 1: no dependencies", "moved to wave 2: wave 1 full (2)", "moved to wave 3: shares a.go with task 5"},
				4: {"wave 1: no dependencies", "moved to wave 2: wave 1 full (2)"},
			},
		},
		{
			name: "done and cancelled tasks are not scheduled and satisfy dependencies",
			tasks: []Task{
				pending(1).status("done"),
				pending(2).status("cancelled"),
				pending(3, 1, 2),
				pending(4, 3),
			},
			want: [][]int{{3}, {4}},
			reasons: map[int][]string{
				3: {"wave 1: depends on 1 (done), 2 (cancelled)"},
				4: {"wave 2: depends on 3 (wave 1)"},
			},
		},
		{
			name: "in progress first; parked tasks are planned with their status",
			tasks: []Task{
				pending(1).prio(PriorityHigh),
				pending(2).prio(PriorityLow).status("in-progress"),
				pending(3).status("blocked"),
			},
			max:     1,
			want:    [][]int{{2}, {1}, {3}},
			reasons: map[int][]string{3: {"wave 1: no dependencies", "moved to wave 3: waves 1–2 full (1)", "status blocked: not ready until that changes"}},
		},
		{
			name:  "nothing left",
			tasks: []Task{pending(1).status("done")},
			want:  [][]int{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Groups(tc.tasks, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, waveIDs(ws)); d != "" {
				t.Errorf("waves (-want +got):\n%s", d)
			}
			for i, w := range ws {
				if w.Number != i+1 {
					t.Errorf("wave %d numbered %d", i+1, w.Number)
				}
			}
			for id, want := range tc.reasons {
				if d := cmp.Diff(want, reasonsOf(ws, id)); d != "" {
					t.Errorf("reasons of task %d (-want +got):\n%s", id, d)
				}
			}
		})
	}
}

func TestGroupsInvalid(t *testing.T) {
	tests := []struct {
		name  string
		tasks []Task
		want  string
	}{
		{"cycle", []Task{pending(1, 3), pending(2), pending(3, 1)}, "dependency cycle: 1 → 3 → 1"},
		{"self", []Task{pending(1), pending(2, 2)}, "dependency cycle: 2 → 2"},
		{"long cycle named from its smallest id", []Task{pending(5, 4), pending(4, 3), pending(3, 5), pending(1)},
			"dependency cycle: 3 → 5 → 4 → 3"},
		{"two cycles", []Task{pending(1, 2), pending(2, 1), pending(3, 4), pending(4, 3), pending(5, 1)},
			"dependency cycle: 1 → 2 → 1; dependency cycle: 3 → 4 → 3"},
		{"unknown id", []Task{pending(1), pending(2), pending(3), pending(5, 9)},
			"task 5: depends on unknown task 9 (known: 1–3, 5)"},
		{"duplicate", []Task{pending(1), pending(1)}, "task 1: listed more than once"},
		{"a cycle through done tasks is still a cycle", []Task{pending(1, 2).status("done"), pending(2, 1).status("done")},
			"dependency cycle: 1 → 2 → 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Groups(tc.tasks, 0)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v (waves %v), want a *ValidationError", err, waveIDs(ws))
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGroupsInvariants checks the generated benchmark plan: dependencies
// in earlier waves, no shared file within a wave, waves within the cap.
func TestGroupsInvariants(t *testing.T) {
	tasks := benchTasks(1000)
	ws, err := Groups(tasks, 5)
	if err != nil {
		t.Fatal(err)
	}
	waveOf := map[int]int{}
	placed := 0
	for _, w := range ws {
		if len(w.Tasks) == 0 || len(w.Tasks) > 5 {
			t.Fatalf("wave %d has %d tasks", w.Number, len(w.Tasks))
		}
		files := map[string]int{}
		for _, p := range w.Tasks {
			waveOf[int(p.Task.ID)] = w.Number
			placed++
			for _, f := range p.Task.Files {
				if o, dup := files[f]; dup {
					t.Errorf("wave %d: tasks %d and %d share %s", w.Number, o, p.Task.ID, f)
				}
				files[f] = int(p.Task.ID)
			}
		}
	}
	done := 0
	for _, tk := range tasks {
		if closed(tk) {
			done++
			continue
		}
		for _, d := range tk.Deps {
			if dw, ok := waveOf[int(d)]; ok && dw >= waveOf[int(tk.ID)] {
				t.Errorf("task %d (wave %d) depends on %d (wave %d)", tk.ID, waveOf[int(tk.ID)], d, dw)
			}
		}
	}
	if placed+done != len(tasks) {
		t.Errorf("placed %d + done %d != %d tasks", placed, done, len(tasks))
	}
}

// TestGroupsAside: tasks in failed_tasks and tasks whose result is
// complete hold no wave slot and no file, so a ready task sharing their
// file is in wave 1; what waits on a failed task is left out too, what
// waits on a finished one is planned as if it were done.
func TestGroupsAside(t *testing.T) {
	tasks := []Task{
		pending(1).with("a.go"),                // failed
		pending(2).with("a.go"),                // ready, shares a.go with 1
		pending(3, 1).with("c.go"),             // waits on failed 1
		pending(4, 3),                          // waits on 3, so on 1
		pending(5).with("b.go"),                // result complete
		pending(6, 5).with("b.go"),             // waits on finished 5
		pending(7).with("d.go").status("done"), // closed: neither planned nor listed
	}
	aside := map[domain.TaskID]Aside{1: AsideFailed, 5: AsideFinished, 7: AsideFailed, 42: AsideFailed}
	tests := []struct {
		name    string
		aside   map[domain.TaskID]Aside
		want    [][]int
		left    []string
		reasons map[int][]string
	}{
		{
			name: "none set aside", aside: nil,
			want: [][]int{{1, 5}, {2, 3, 6}, {4}},
		},
		{
			name: "failed and finished set aside", aside: aside,
			want: [][]int{{2, 6}},
			left: []string{
				"1: in failed_tasks (retries exhausted): left out until a person decides",
				"3: waits on failed task 1: left out",
				"4: waits on failed task 1: left out",
				"5: result complete, waiting to be merged and marked done: left out; the tasks waiting on it are planned as if it were done",
			},
			reasons: map[int][]string{2: {"wave 1: no dependencies"}, 6: {"wave 1: depends on 5 (result complete)"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			waves, left, err := GroupsAside(tasks, 5, tc.aside)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, waveIDs(waves)); d != "" {
				t.Errorf("waves (-want +got):\n%s", d)
			}
			var got []string
			for _, o := range left {
				got = append(got, o.Task.ID.String()+": "+o.Reason)
			}
			if d := cmp.Diff(tc.left, got); d != "" {
				t.Errorf("left out (-want +got):\n%s", d)
			}
			for id, want := range tc.reasons {
				if d := cmp.Diff(want, reasonsOf(waves, id)); d != "" {
					t.Errorf("reasons of %d (-want +got):\n%s", id, d)
				}
			}
		})
	}
	// A cycle through a task set aside is still an error.
	cyc := []Task{pending(1, 2), pending(2, 1), pending(3)}
	var ve *ValidationError
	if _, _, err := GroupsAside(cyc, 5, map[domain.TaskID]Aside{1: AsideFailed}); !errors.As(err, &ve) {
		t.Errorf("cycle through a failed task: err = %v, want a *ValidationError", err)
	}
}

// TestGroupsClashRun: a task turned away by clashes wave after wave gets
// its first clash and one summary, not one reason per wave.
func TestGroupsClashRun(t *testing.T) {
	tasks := []Task{pending(1).with("a.go"), pending(2).with("a.go"), pending(3).with("a.go"), pending(4).with("a.go")}
	waves, err := Groups(tasks, 5)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]int{{1}, {2}, {3}, {4}}, waveIDs(waves)); d != "" {
		t.Errorf("waves (-want +got):\n%s", d)
	}
	want := map[int][]string{
		3: {"wave 1: no dependencies", "moved to wave 2: shares a.go with task 1", "moved to wave 3: shares a.go with task 2"},
		4: {"wave 1: no dependencies", "moved to wave 2: shares a.go with task 1",
			"moved to wave 4: a file clash in each of waves 2–3 (the last: shares a.go with task 3)"},
	}
	for id, w := range want {
		if d := cmp.Diff(w, reasonsOf(waves, id)); d != "" {
			t.Errorf("reasons of %d (-want +got):\n%s", id, d)
		}
	}
}
