package continuity

import (
	"fmt"
	"strings"
)

// Criterion is one acceptance criterion: a "- [ ]" or "- [x]" item.
type Criterion struct {
	N    int    `json:"n"` // 1-based, as `taskie task check` counts
	Done bool   `json:"done"`
	Text string `json:"text"`
	line int
	box  int // byte offset of the character between the brackets
}

// Criteria returns the checkbox items of the Acceptance Criteria section,
// or of the whole file when it has no such section. Items inside code
// blocks do not count.
func (f *File) Criteria() []Criterion {
	sp, ok := f.section(SectionCriteria)
	if !ok {
		sp = span{0, len(f.lines)}
	}
	var out []Criterion
	for i := sp.start; i < sp.end; i++ {
		if f.fence[i] {
			continue
		}
		if c, ok := parseCheckbox(f.text(i)); ok {
			c.N, c.line = len(out)+1, i
			out = append(out, c)
		}
	}
	return out
}

// HasCriteriaSection reports whether the file has an Acceptance Criteria
// section.
func (f *File) HasCriteriaSection() bool {
	_, ok := f.section(SectionCriteria)
	return ok
}

// parseCheckbox recognises "- [ ] text" (also "*" and "+" bullets,
// indented, "[x]" or "[X]").
func parseCheckbox(line string) (Criterion, bool) {
	t := strings.TrimLeft(line, " \t")
	if len(t) < 5 || (t[0] != '-' && t[0] != '*' && t[0] != '+') || (t[1] != ' ' && t[1] != '\t') {
		return Criterion{}, false
	}
	rest := strings.TrimLeft(t[1:], " \t")
	if len(rest) < 3 || rest[0] != '[' || rest[2] != ']' || (len(rest) > 3 && rest[3] != ' ' && rest[3] != '\t') {
		return Criterion{}, false
	}
	var done bool
	switch rest[1] {
	case ' ':
	case 'x', 'X':
		done = true
	default:
		return Criterion{}, false
	}
	box := len(line) - len(rest) + 1
	return Criterion{Done: done, Text: strings.TrimSpace(rest[3:]), box: box}, true
}

// RangeError is returned when a criterion number does not exist.
type RangeError struct {
	N        int
	Criteria []Criterion
}

func (e *RangeError) Error() string {
	if len(e.Criteria) == 0 {
		return fmt.Sprintf("criterion %d does not exist: the task has no acceptance criteria (no \"- [ ]\" items)", e.N)
	}
	return fmt.Sprintf("criterion %d does not exist: the task has %d acceptance criteria (1-%d)", e.N, len(e.Criteria), len(e.Criteria))
}

// SetCriterion checks (done) or unchecks criterion n, changing only the
// character between its brackets. It reports whether anything changed.
func (f *File) SetCriterion(n int, done bool) (Criterion, bool, error) {
	cs := f.Criteria()
	if n < 1 || n > len(cs) {
		return Criterion{}, false, &RangeError{N: n, Criteria: cs}
	}
	c := cs[n-1]
	if c.Done == done {
		return c, false, nil
	}
	mark := byte(' ')
	if done {
		mark = 'x'
	}
	l := []byte(f.lines[c.line])
	l[c.box] = mark
	f.lines[c.line] = string(l)
	c.Done = done
	return c, true, nil
}

// FormatCriteria lists criteria one per line as "  n. [x] text".
func FormatCriteria(cs []Criterion) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%3d. %s %s\n", c.N, box(c.Done), c.Text)
	}
	return b.String()
}

func box(done bool) string {
	if done {
		return "[x]"
	}
	return "[ ]"
}
