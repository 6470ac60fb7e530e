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

func TestNearestByUse(t *testing.T) {
	commands := []string{"claim", "config", "continue", "history", "review", "start", "stats-of-nothing", "status", "store", "trust"}
	byUse := []string{"status", "continue", "claim", "review", "history", "start", "config"}
	for _, tc := range []struct{ s, want string }{
		{"stauts", "status"},
		{"staus", "status"},
		{"stats", "status"},
		{"stat", "status"},
		{"sta", "status"},
		{"statr", "start"},
		{"strat", "start"},
		{"contineu", "continue"},
		{"cotninue", "continue"},
		{"hsitory", "history"},
		{"reviw", "review"},
		{"claime", "claim"},
		{"confgi", "config"},
		{"stroe", "store"},
		{"status", ""},
		{"xyzzy", ""},
	} {
		t.Run(tc.s, func(t *testing.T) {
			if got := NearestByUse(tc.s, commands, byUse); got != tc.want {
				t.Errorf("NearestByUse(%q) = %q, want %q", tc.s, got, tc.want)
			}
		})
	}
}
