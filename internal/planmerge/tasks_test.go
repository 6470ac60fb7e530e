package planmerge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTasks(t *testing.T) {
	base := "| Id | Status |\n|----|--------|\n| 1 | pending |\n| 2 | pending |\n"
	cases := []struct {
		name, ours, theirs, want string
		ok                       bool
	}{
		{"adjacent rows", "| Id | Status |\n|----|--------|\n| 1 | in-progress |\n| 2 | pending |\n",
			"| Id | Status |\n|----|--------|\n| 1 | pending |\n| 2 | done |\n",
			"| Id | Status |\n|----|--------|\n| 1 | in-progress |\n| 2 | done |\n", true},
		{"same change", "| Id | Status |\n|----|--------|\n| 1 | done |\n| 2 | pending |\n",
			"| Id | Status |\n|----|--------|\n| 1 | done |\n| 2 | pending |\n",
			"| Id | Status |\n|----|--------|\n| 1 | done |\n| 2 | pending |\n", true},
		{"one row both ways", "| Id | Status |\n|----|--------|\n| 1 | done |\n| 2 | pending |\n",
			"| Id | Status |\n|----|--------|\n| 1 | blocked |\n| 2 | pending |\n", "", false},
		{"row added", base + "| 3 | pending |\n", base, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Tasks([]byte(base), []byte(tc.ours), []byte(tc.theirs))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if d := cmp.Diff(tc.want, string(got)); ok && d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
