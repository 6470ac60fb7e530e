//go:build !unix

package review

import "testing"

// checkChildGone is a no-op: without process groups only the reviewer
// itself is killed.
func checkChildGone(t *testing.T, pid int) {}

// childMain is a no-op: the hook-child test is unix only.
func childMain() (int, bool) { return 0, false }
