package parallel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// TestChangeProgress: the progress events of a change come from the marks
// before and after it, read from the lifecycle records and the Status
// cells the change sets.
func TestChangeProgress(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tasks := []Task{{ID: 1, Status: "pending"}, {ID: 2, Status: "pending", Deps: []domain.TaskID{1}}}
	none := map[domain.TaskID]lifecycle.Task{}
	claimed := map[domain.TaskID]lifecycle.Task{1: {ID: 1, State: lifecycle.InProgress, Since: at, Created: at}}
	completed := map[domain.TaskID]lifecycle.Task{1: {ID: 1, State: lifecycle.Completed, Since: at, Created: at}}
	cases := []struct {
		name          string
		before, after map[domain.TaskID]lifecycle.Task
		set           map[domain.TaskID]string
		want          []string
	}{
		{"nothing moves", none, none, nil, nil},
		{"the first task leaves pending", none, claimed, nil, []string{"GROUP_START: Group 1 of 2 (tasks 1)"}},
		{"it completes", claimed, completed, nil, []string{"TASK_COMPLETE: Task 1 (wave 1 of 2)", "GROUP_COMPLETE: Group 1 of 2 - 1/1 tasks"}},
		{"marked done by hand", none, none, map[domain.TaskID]string{1: "Done"},
			[]string{"GROUP_START: Group 1 of 2 (tasks 1)", "TASK_COMPLETE: Task 1 (wave 1 of 2)", "GROUP_COMPLETE: Group 1 of 2 - 1/1 tasks"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range ChangeProgress(tasks, 2, tc.before, tc.after, tc.set) {
				got = append(got, e.Kind+": "+e.Reason())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
