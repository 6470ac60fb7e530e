package plan

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// lineInfo is the classification of one tasks.md line.
type lineInfo struct {
	text  string // without a trailing "\r"
	blank bool
	isRow bool
	row   row
}

// taskParser holds the state of one ParseTasks call.
type taskParser struct {
	ts       *Tasks
	info     []lineInfo
	problems []Problem
	header   int  // index of the header line, -1 when none
	hasSep   bool // the line after the header is a separator
	dataRows int  // table rows after the header, readable or not
	// Arenas for the cells, values and dependency ids of every row: one
	// allocation for the file, not one per row (10,000 rows parse in a
	// few milliseconds).
	cells, vals []string
	ints        []int
	text        strings.Builder // the unescaped cells, one string for the file
	// cols is the header every row shares.
	cols *columns
}

// ParseTasks parses tasks.md content. It returns the table and every
// problem found; rows it can read are always returned, even when they
// carry problems, so callers never lose tasks.
func ParseTasks(data []byte) (*Tasks, []Problem) {
	p := &taskParser{
		ts: &Tasks{
			lines:     strings.Split(string(data), "\n"),
			byID:      map[int]int{},
			idCol:     -1,
			statusCol: -1,
			depCol:    -1,
			filesCol:  -1,
		},
		header: -1,
	}
	n := bytes.Count(data, []byte{'|'}) + len(p.ts.lines)
	p.cells = make([]string, 0, n)
	p.classify()
	p.findHeader()
	p.walk()
	sort.SliceStable(p.problems, func(i, j int) bool { return p.problems[i].Line < p.problems[j].Line })
	return p.ts, p.problems
}

func (p *taskParser) problem(idx int, format string, args ...any) {
	p.problems = append(p.problems, Problem{Line: idx + 1, Msg: fmt.Sprintf(format, args...)})
}

func (p *taskParser) classify() {
	p.info = make([]lineInfo, len(p.ts.lines))
	rows := 0
	for i, l := range p.ts.lines {
		text := strings.TrimSuffix(l, "\r")
		li := lineInfo{text: text, blank: strings.TrimSpace(text) == ""}
		if !li.blank {
			li.row, li.isRow = splitRowIn(text, &p.cells)
		}
		if li.isRow {
			rows++
		}
		p.info[i] = li
	}
	// Sized once: appending 1,000 tasks one by one showed in profiles.
	p.ts.Tasks = make([]Task, 0, rows)
	p.ts.rows = make([]row, 0, rows)
}

// findHeader picks the first table line followed by a separator; failing
// that, the first table line, so a table missing its separator is still
// read.
func (p *taskParser) findHeader() {
	first := -1
	for i, li := range p.info {
		if !li.isRow || li.row.isSeparator() {
			continue
		}
		if first < 0 {
			first = i
		}
		if i+1 < len(p.info) && p.info[i+1].isRow && p.info[i+1].row.isSeparator() {
			p.header, p.hasSep = i, true
			return
		}
	}
	p.header = first
}

// walk visits every line once, reporting anything that is not table.
func (p *taskParser) walk() {
	if p.header < 0 {
		p.reportNoTable()
		return
	}
	last := p.header
	for i := p.header; i < len(p.info); i++ {
		if p.info[i].isRow {
			last = i
		}
	}
	p.ts.lastLine = last
	for i, li := range p.info {
		switch {
		case li.blank:
			if i > p.header && i < last {
				p.problem(i, "blank line inside the table")
			}
		case i < p.header && p.prose(i):
			// A heading and prose above the table are kept as written.
		case !li.isRow || i < p.header:
			p.problem(i, "text outside the table: %q", clip(li.text))
		case i == p.header:
			p.readHeader(i)
		case i == p.header+1 && p.hasSep:
			if n, want := len(li.row.cells), len(p.ts.Header); n != want {
				p.problem(i, "separator has %d cells, header has %d", n, want)
			}
		case li.row.isSeparator():
			p.problem(i, "unexpected separator line")
		default:
			p.dataRows++
			p.readRow(i)
		}
	}
	if p.dataRows == 0 {
		p.problem(p.header, "table has no task rows")
	}
}

// prose reports whether line i, above the header, is prose: any line but
// a table line that runs into the table (no blank line between), which
// would be read as a row of it.
func (p *taskParser) prose(i int) bool {
	if !p.info[i].isRow {
		return true
	}
	for j := i + 1; j < p.header; j++ {
		if p.info[j].blank || !p.info[j].isRow {
			return true
		}
	}
	return false
}

func (p *taskParser) reportNoTable() {
	empty := true
	for i, li := range p.info {
		if li.blank {
			continue
		}
		empty = false
		p.problem(i, "text outside the table: %q", clip(li.text))
	}
	if empty {
		p.problems = append(p.problems, Problem{Msg: "tasks.md is empty: expected a markdown table with Id and Status columns"})
		return
	}
	p.problems = append(p.problems, Problem{Msg: "no markdown table with a header row found"})
}

func (p *taskParser) readHeader(i int) {
	ts := p.ts
	ts.Header = p.info[i].row.values()
	ts.headerLine = i
	ts.headerCells = p.info[i].row.cells
	if !p.hasSep {
		p.problem(i+1, "missing separator line (like |---|---|) after the header")
	}
	p.cols = newColumns(ts.Header)
	ts.idCol = columnIndex(ts.Header, "id")
	ts.statusCol = columnIndex(ts.Header, "status")
	ts.filesCol = columnIndex(ts.Header, "files")
	for _, n := range dependsNames {
		if ts.depCol = columnIndex(ts.Header, n); ts.depCol >= 0 {
			break
		}
	}
	switch {
	case ts.idCol < 0:
		p.problem(i, "no Id column: the first column must be Id")
	case ts.idCol > 0:
		p.problem(i, "first column is %q, but it must be Id (found Id in column %d)", ts.Header[0], ts.idCol+1)
	}
	if ts.statusCol < 0 {
		p.problem(i, "no Status column")
	}
}

// columnIndex finds a header by name, ignoring case and padding.
func columnIndex(header []string, name string) int {
	for i, h := range header {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return i
		}
	}
	return -1
}

func (p *taskParser) readRow(i int) {
	ts := p.ts
	r := p.info[i].row
	if p.vals == nil {
		p.vals = make([]string, 0, len(p.cells))
	}
	cells := r.valuesIn(&p.vals, &p.text)
	if len(cells) != len(ts.Header) {
		p.problem(i, "row has %d cells, header has %d", len(cells), len(ts.Header))
	}
	if ts.idCol < 0 {
		return // already reported on the header; nothing identifies the row
	}
	idText := ""
	if ts.idCol < len(cells) {
		idText = cells[ts.idCol]
	}
	id, ok := positiveInt(idText)
	if !ok {
		p.problem(i, "task id %q is not a positive integer", idText)
		return
	}
	t := Task{ID: id, Line: i + 1, vals: cells, cols: p.cols}
	if ts.statusCol >= 0 && ts.statusCol < len(cells) {
		t.Status = cells[ts.statusCol]
	}
	ts.deriveIn(&t, &p.ints)
	p.checkRow(i, t)
	if _, dup := ts.byID[id]; !dup {
		ts.byID[id] = len(ts.Tasks)
	}
	ts.Tasks = append(ts.Tasks, t)
	ts.rows = append(ts.rows, r)
}

// checkRow reports a duplicate id and a missing or unknown status.
func (p *taskParser) checkRow(i int, t Task) {
	if first, dup := p.ts.byID[t.ID]; dup {
		p.problem(i, "duplicate task id %d (first at line %d)", t.ID, p.ts.Tasks[first].Line)
	}
	if p.ts.statusCol < 0 {
		return
	}
	switch {
	case t.Status == "":
		p.problem(i, "task %d has an empty status", t.ID)
	case !KnownStatus(t.Status):
		p.problem(i, "task %d has unknown status %q (known: %s)", t.ID, t.Status, strings.Join(statuses, ", "))
	}
}

// clip shortens quoted prose in messages.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}
