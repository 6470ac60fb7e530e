package plan

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SetStatus sets the Status cell of task id. Only known statuses are
// accepted so taskie never writes a value its own validation rejects.
func (ts *Tasks) SetStatus(id int, status string) error {
	status = strings.TrimSpace(status)
	if !KnownStatus(status) {
		return fmt.Errorf("unknown status %q (known: %s)", status, strings.Join(statuses, ", "))
	}
	if ts.statusCol < 0 {
		return fmt.Errorf("tasks.md has no Status column")
	}
	return ts.SetCell(id, ts.Header[ts.statusCol], status)
}

// SetCell sets one cell of task id. The column is matched by name, exactly
// first and then ignoring case. Only that cell of that row changes in
// Bytes.
func (ts *Tasks) SetCell(id int, column, value string) error {
	idx, ok := ts.byID[id]
	if !ok {
		return ts.unknownTask(id)
	}
	col := ts.column(column)
	if col < 0 {
		return fmt.Errorf("tasks.md has no %q column (columns: %s)", column, strings.Join(ts.Header, ", "))
	}
	if col == ts.idCol {
		return fmt.Errorf("the Id column of task %d cannot be changed", id)
	}
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("value for column %q of task %d contains a line break", column, id)
	}
	value = strings.TrimSpace(value)
	ts.setCell(idx, col, value)
	return nil
}

// setCell rewrites one cell of the row at idx and refreshes the task.
func (ts *Tasks) setCell(idx, col int, value string) {
	r := &ts.rows[idx]
	if n := len(r.cells); n <= col && n > 0 && strings.HasSuffix(r.cells[n-1], `\`) {
		// The pipe added after it must not be escaped by it.
		r.cells[n-1] += " "
	}
	for len(r.cells) <= col {
		r.cells = append(r.cells, " ")
	}
	r.cells[col] = formatCell(r.cells[col], value, ts.alignedWidth(col, r.cells[col]))
	t := &ts.Tasks[idx]
	line := t.Line - 1
	cr := ""
	if strings.HasSuffix(ts.lines[line], "\r") {
		cr = "\r"
	}
	ts.lines[line] = r.render() + cr
	if t.cells == nil {
		t.cells = t.CellMap()
	}
	t.cells[ts.Header[col]] = value
	if col == ts.statusCol {
		t.Status = value
	}
	if col == ts.depCol || col == ts.filesCol {
		ts.derive(t)
	}
}

// alignedWidth returns the width of cell when it matches the header cell's
// width (the table is padded for alignment), else 0.
func (ts *Tasks) alignedWidth(col int, cell string) int {
	if col >= len(ts.headerCells) {
		return 0
	}
	w := utf8.RuneCountInString(ts.headerCells[col])
	if w != utf8.RuneCountInString(cell) {
		return 0
	}
	return w
}

// column finds a header by exact name, then case-insensitively.
func (ts *Tasks) column(name string) int {
	for i, h := range ts.Header {
		if h == name {
			return i
		}
	}
	return columnIndex(ts.Header, strings.TrimSpace(name))
}

// unknownTask names the id and the known ids, as docs/reliability.md#bad-input requires.
func (ts *Tasks) unknownTask(id int) error {
	if len(ts.Tasks) == 0 {
		return fmt.Errorf("unknown task %d: tasks.md has no tasks", id)
	}
	known := make([]string, len(ts.Tasks))
	for i, t := range ts.Tasks {
		known[i] = strconv.Itoa(t.ID)
	}
	return fmt.Errorf("unknown task %d (known ids: %s)", id, strings.Join(known, ", "))
}

// NextID is the id a new task gets: one more than the highest.
func (ts *Tasks) NextID() int {
	n := 0
	for _, t := range ts.Tasks {
		n = max(n, t.ID)
	}
	return n + 1
}

// Column returns the header name of the first of names (case-insensitive)
// that is a column of the table, and false when none is.
func (ts *Tasks) Column(names ...string) (string, bool) {
	for _, n := range names {
		if i := columnIndex(ts.Header, n); i >= 0 {
			return ts.Header[i], true
		}
	}
	return "", false
}

// DependsColumn is the name of the table's dependency column, "" when it
// has none.
func (ts *Tasks) DependsColumn() string {
	if ts.depCol < 0 {
		return ""
	}
	return ts.Header[ts.depCol]
}

// AppendRow adds a task row after the last row of the table, with cells
// by column name (the columns not named stay empty); every other line of
// the file, prose above the table included, is kept byte for byte. The
// id must be new and the status known.
func (ts *Tasks) AppendRow(id int, cells map[string]string) error {
	if ts.idCol < 0 || ts.statusCol < 0 {
		return fmt.Errorf("tasks.md has no Id or no Status column")
	}
	if id <= 0 {
		return fmt.Errorf("task id %d is not a positive integer", id)
	}
	if _, dup := ts.byID[id]; dup {
		return fmt.Errorf("task %d already exists", id)
	}
	values := make([]string, len(ts.Header))
	values[ts.idCol] = strconv.Itoa(id)
	for name, v := range cells {
		col := ts.column(name)
		if col < 0 {
			return fmt.Errorf("tasks.md has no %q column (columns: %s)", name, strings.Join(ts.Header, ", "))
		}
		if col == ts.idCol {
			continue
		}
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("value for column %q of task %d contains a line break", name, id)
		}
		values[col] = strings.TrimSpace(v)
	}
	if !KnownStatus(values[ts.statusCol]) {
		return fmt.Errorf("unknown status %q (known: %s)", values[ts.statusCol], strings.Join(statuses, ", "))
	}
	hr, _ := splitRow(strings.TrimSuffix(ts.lines[ts.headerLine], "\r"))
	r := row{lead: hr.lead, cells: make([]string, len(values))}
	if hr.trail != "" {
		r.trail = "|" // not the header's trailing spaces
	}
	aligned := ts.aligned()
	for c, v := range values {
		r.cells[c] = newCell(ts.headerCells[c], v, aligned)
	}
	if n := len(r.cells); r.trail == "" && !aligned {
		r.cells[n-1] = strings.TrimRight(r.cells[n-1], " ")
	}
	at := ts.lastLine + 1 // after the last table line: a row or the separator
	cr := ""
	if strings.HasSuffix(ts.lines[ts.headerLine], "\r") {
		cr = "\r"
	}
	lines := make([]string, 0, len(ts.lines)+1)
	lines = append(lines, ts.lines[:at]...)
	if at == len(ts.lines) {
		// No newline at the end of the file: the row before gets one.
		lines[at-1] += cr
		lines = append(lines, r.render())
	} else {
		lines = append(lines, r.render()+cr)
		lines = append(lines, ts.lines[at:]...)
	}
	n, _ := ParseTasks([]byte(strings.Join(lines, "\n")))
	*ts = *n
	return nil
}

// aligned reports whether the table is padded for alignment: its last row
// (or, without rows, its separator) has every cell as wide as the header's.
func (ts *Tasks) aligned() bool {
	ref, ok := splitRow(strings.TrimSuffix(ts.lines[ts.lastLine], "\r"))
	if !ok || ts.lastLine == ts.headerLine || len(ref.cells) != len(ts.headerCells) {
		return false
	}
	for i, c := range ref.cells {
		if utf8.RuneCountInString(c) != utf8.RuneCountInString(ts.headerCells[i]) {
			return false
		}
	}
	return true
}

// newCell renders value as a new cell under the raw header cell h: its
// leading padding, the value escaped, then padded to h's width when the
// table is aligned, or one space when h ends with one.
func newCell(h, value string, aligned bool) string {
	lead := h[:len(h)-len(strings.TrimLeft(h, " \t"))]
	text := lead + escapeCell(value)
	if n, w := utf8.RuneCountInString(text), utf8.RuneCountInString(h); aligned && n < w {
		return text + strings.Repeat(" ", w-n)
	}
	if value == "" && lead != "" {
		return text
	}
	if strings.HasSuffix(h, " ") || strings.HasSuffix(h, "\t") || strings.HasSuffix(text, `\`) {
		text += " "
	}
	return text
}
