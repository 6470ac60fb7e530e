package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCycles(t *testing.T) {
	all := func(int) bool { return true }
	byIndex := func(a, b int) bool { return a < b }
	tests := []struct {
		name    string
		deps    [][]int
		include func(int) bool
		less    func(a, b int) bool
		want    [][]int
	}{
		{name: "chain", deps: [][]int{nil, {0}, {1}}, want: nil},
		{name: "self", deps: [][]int{{0}}, want: [][]int{{0, 0}}},
		{name: "two groups, ordered", deps: [][]int{{3}, {2}, {1}, {0}}, want: [][]int{{0, 3, 0}, {1, 2, 1}}},
		{name: "shortest through the least", deps: [][]int{{1}, {2, 0}, {0}}, want: [][]int{{0, 1, 0}}},
		{name: "least by another order", deps: [][]int{{1}, {0}}, less: func(a, b int) bool { return a > b }, want: [][]int{{1, 0, 1}}},
		{name: "left-out root still reached", deps: [][]int{{1}, {0}}, include: func(v int) bool { return v == 1 }, want: [][]int{{0, 1, 0}}},
		{name: "nothing included", deps: [][]int{{0}}, include: func(int) bool { return false }, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			include, less := tc.include, tc.less
			if include == nil {
				include = all
			}
			if less == nil {
				less = byIndex
			}
			got := Cycles(len(tc.deps), func(v int) []int { return tc.deps[v] }, include, less)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Cycles (-want +got):\n%s", diff)
			}
		})
	}
}
