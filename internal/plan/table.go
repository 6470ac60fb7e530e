package plan

import (
	"strings"
	"unicode/utf8"
)

// row is one table line split at its unescaped pipes. Pieces are kept raw
// (padding and escapes intact) so that lead + join(cells, "|") + trail is
// the original line and untouched cells survive a rewrite unchanged.
type row struct {
	lead  string   // indentation plus the leading pipe, if any
	cells []string // raw text between pipes
	trail string   // the closing pipe and what follows it, if any
}

// pipeAt reports whether s[i] is a cell delimiter. As in GFM, a pipe
// preceded by a backslash is part of the cell.
func pipeAt(s string, i int) bool {
	return s[i] == '|' && (i == 0 || s[i-1] != '\\')
}

// splitRow splits a line into a row, or reports false when the line has
// no delimiter pipe and so is not a table line.
func splitRow(s string) (row, bool) {
	var a []string
	return splitRowIn(s, &a)
}

// splitRowIn is splitRow taking the cells from arena (grown when short):
// it runs for every line of tasks.md, and one arena for the whole file
// saves an allocation per row. The row's cells are capped, so that an edit
// appending to them never writes into the next row's.
func splitRowIn(s string, arena *[]string) (row, bool) {
	first, last, count := -1, -1, 0
	for i := 0; i < len(s); i++ {
		if pipeAt(s, i) {
			if first < 0 {
				first = i
			}
			last = i
			count++
		}
	}
	if first < 0 {
		return row{}, false
	}
	var r row
	start, end := 0, len(s)
	if strings.TrimSpace(s[:first]) == "" {
		r.lead, start = s[:first+1], first+1
	}
	if last >= start && strings.TrimSpace(s[last+1:]) == "" {
		r.trail, end = s[last:], last
	}
	a := *arena
	if cap(a)-len(a) < count+1 {
		a = make([]string, 0, max(count+1, 2*cap(a)))
	}
	from := len(a)
	prev := start
	for i := start; i < end; i++ {
		if pipeAt(s, i) {
			a = append(a, s[prev:i])
			prev = i + 1
		}
	}
	a = append(a, s[prev:end])
	r.cells = a[from:len(a):len(a)]
	*arena = a
	return r, true
}

func (r row) render() string {
	return r.lead + strings.Join(r.cells, "|") + r.trail
}

// values returns the trimmed, unescaped text of every cell.
func (r row) values() []string {
	var a []string
	var b strings.Builder
	return r.valuesIn(&a, &b)
}

// valuesIn is values taking its slice from arena, as splitRowIn, and
// writing the cells it unescapes to text: a string taken from a
// strings.Builder stays valid as it grows.
func (r row) valuesIn(arena *[]string, text *strings.Builder) []string {
	a := *arena
	if cap(a)-len(a) < len(r.cells) {
		a = make([]string, 0, max(len(r.cells), 2*cap(a)))
	}
	from := len(a)
	for _, c := range r.cells {
		c = strings.TrimSpace(c)
		if strings.Contains(c, `\|`) {
			if text.Cap()-text.Len() < len(c) {
				text.Grow(max(len(c), 4<<10))
			}
			at := text.Len()
			for i := 0; i < len(c); i++ {
				if c[i] == '\\' && i+1 < len(c) && c[i+1] == '|' {
					continue
				}
				text.WriteByte(c[i])
			}
			c = text.String()[at:]
		}
		a = append(a, c)
	}
	*arena = a
	return a[from:len(a):len(a)]
}

func escapeCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// isSeparator reports whether r is a delimiter row such as |---|:--:|.
func (r row) isSeparator() bool {
	for _, c := range r.cells {
		c = strings.TrimSpace(c)
		c = strings.TrimPrefix(c, ":")
		c = strings.TrimSuffix(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// formatCell renders value in place of the raw cell old, keeping old's
// leading padding. width > 0 pads the cell to that many runes, so aligned
// tables stay aligned when a shorter value is written.
func formatCell(old, value string, width int) string {
	body := strings.TrimLeft(old, " \t")
	lead := old[:len(old)-len(body)]
	if body == "" {
		lead = " " // a blank cell has no padding style worth keeping
	}
	text := lead + escapeCell(value)
	if n := utf8.RuneCountInString(text); n < width {
		return text + strings.Repeat(" ", width-n)
	}
	if strings.HasSuffix(old, " ") || strings.HasSuffix(old, "\t") || body == "" || strings.HasSuffix(text, `\`) {
		text += " " // also keeps a trailing backslash from escaping the pipe
	}
	return text
}
