package domain

import (
	"slices"
	"strings"
)

// Nearest returns the candidate nearest to s when it is near enough to be
// a likely typo (a third of its letters at most, case ignored), else "".
// Phases, fields, config keys, commands and topics use it for "did you mean".
func Nearest(s string, candidates []string) string {
	return NearestByUse(s, candidates, nil)
}

// NearestByUse is Nearest with ties broken by use: byUse lists candidates
// most used first, and of two candidates at the same distance the one used
// more wins (candidates it does not list rank after it, in their order).
// With byUse given (command names), a candidate that s is a prefix of (two
// letters or more) counts as distance 1, so "sta" finds status, the most
// used of start and status.
func NearestByUse(s string, candidates []string, byUse []string) string {
	rank := func(c string) int {
		if i := slices.Index(byUse, c); i >= 0 {
			return i
		}
		return len(byUse)
	}
	low := strings.ToLower(s)
	best, bestD, bestR := "", 0, 0
	for _, c := range candidates {
		if c == s {
			return ""
		}
		lc := strings.ToLower(c)
		d := distance(low, lc)
		if byUse != nil && len([]rune(s)) >= 2 && strings.HasPrefix(lc, low) {
			d = min(d, 1)
		}
		limit := max(1, len([]rune(c))/3)
		if d > limit {
			continue
		}
		if r := rank(c); best == "" || d < bestD || d == bestD && r < bestR {
			best, bestD, bestR = c, d, r
		}
	}
	return best
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
