package domain

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"models", "modles", 1},
		{"kitten", "sitting", 3},
		{"cmd", "cdm", 1},
		{"größe", "grösse", 2},
	}
	for _, tc := range tests {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := distance(tc.b, tc.a); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	for _, tc := range []struct{ s, want string }{
		{"modles", "models"}, {"claud", "claude"}, {"models", ""}, {"zzzzzz", ""}, {"MODLES", "models"},
	} {
		if got := Nearest(tc.s, []string{"models", "claude", "codex"}); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
