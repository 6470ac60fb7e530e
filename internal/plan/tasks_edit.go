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
	t.Cells[ts.Header[col]] = value
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

// unknownTask names the id and the known ids, as §15 requires.
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
