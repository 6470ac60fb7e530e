package plan

import (
	"regexp"
	"strings"
	"sync"
)

// Subtask is a "### Subtask T.k: title" section of task-T.md.
type Subtask struct {
	ID     string // "T.k" as written
	Title  string
	Status string // from its "- **Status**: x" line, "" when absent
	Line   int    // 1-based line of the heading
}

var (
	subtaskRe = lazyRegexp(`^###\s+Subtask\s+([0-9]+(?:\.[0-9]+)*)\s*:?\s*(.*?)\s*$`)
	// Both "**Status**: x" and "**Status:** x" are common in agent output.
	subStatusRe = lazyRegexp(`^\s*[-*]\s+\*\*Status(?:\*\*\s*:|:\*\*)\s*(.*?)\s*$`)
)

// ParseSubtasks returns the subtasks of a task file in order. A status
// line belongs to the nearest subtask heading above it, up to the next
// heading of level 1-3.
func ParseSubtasks(data []byte) []Subtask {
	var out []Subtask
	open := false // a subtask section is open and still lacks a status
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if m := subtaskRe().FindStringSubmatch(line); m != nil {
			out = append(out, Subtask{ID: m[1], Title: m[2], Line: i + 1})
			open = true
			continue
		}
		if isSectionHeading(line) {
			open = false
			continue
		}
		if !open {
			continue
		}
		if m := subStatusRe().FindStringSubmatch(line); m != nil {
			out[len(out)-1].Status = m[1]
			open = false
		}
	}
	return out
}

// isSectionHeading reports a heading of level 1-3, which ends a subtask.
func isSectionHeading(line string) bool {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	return n >= 1 && n <= 3 && (len(line) == n || line[n] == ' ')
}

// lazyRegexp compiles on first use, keeping start-up cheap for the hook.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
