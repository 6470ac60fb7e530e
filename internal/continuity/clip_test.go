package continuity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sizes  []int
		budget int
		want   []int
	}{
		{"all fit", []int{10, 20, 30}, 100, []int{10, 20, 30}},
		{"big part shares the rest", []int{10, 500, 20}, 100, []int{10, 70, 20}},
		{"two big parts split", []int{10, 500, 400}, 110, []int{10, 50, 50}},
		{"nothing", []int{5, 5}, 0, []int{0, 0}},
		{"negative budget", []int{5}, -3, []int{0}},
		{"no parts", nil, 10, []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fit(tc.sizes, tc.budget)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClipText(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		max     int
		more    string
		want    string
	}{
		{"fits", "short", 10, "…", "short"},
		{"cut at a space", "alpha beta gamma delta", 16, "…", "alpha beta …"},
		{"cut inside a long word", "abcdefghijklmnop", 10, "…", "abcdef …"},
		{"never splits a rune", "ééééé", 8, "…", "éé …"},
		{"no room", "abcdef", 3, "(see x)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clipText(tc.s, tc.max, tc.more)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clipText (-want +got):\n%s", diff)
			}
			if len(got) > tc.max {
				t.Errorf("len %d > max %d", len(got), tc.max)
			}
		})
	}
}
