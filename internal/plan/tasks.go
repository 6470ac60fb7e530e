package plan

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Task is one row of tasks.md.
type Task struct {
	ID        int
	Status    string   // as written, trimmed (not normalised)
	DependsOn []int    // ids from a "Depends on"-like column
	Files     []string // entries of a "Files" column, backticks stripped
	Line      int      // 1-based line in tasks.md

	// The row's unescaped cells by column, read through Cell: a map per
	// row was a fifth of reading a 10,000-task plan.
	vals []string
	cols *columns
	// cells replaces vals once a cell of the row was edited.
	cells map[string]string
}

// columns is what every row of one table shares about its header.
type columns struct {
	header []string
	first  []bool // first[c]: column c is the first of its name
	title  []int  // the Title-like columns, by priority
}

func newColumns(header []string) *columns {
	cs := &columns{header: header, first: make([]bool, len(header))}
	for c, h := range header {
		cs.first[c] = !slices.Contains(header[:c], h)
	}
	for _, n := range titleNames {
		for c, h := range header {
			if cs.first[c] && strings.EqualFold(strings.TrimSpace(h), n) {
				cs.title = append(cs.title, c)
			}
		}
	}
	return cs
}

// Cell returns the row's cell in the column named name (as written in the
// header; a repeated name gives its first column), "" when absent.
func (t Task) Cell(name string) string {
	if t.cells != nil {
		return t.cells[name]
	}
	if t.cols == nil {
		return ""
	}
	for c, h := range t.cols.header {
		if h == name {
			if c < len(t.vals) {
				return t.vals[c]
			}
			return ""
		}
	}
	return ""
}

// CellMap returns the row's cells by header name as written (a repeated
// name keeps its first column's cell); a new map the caller may keep.
func (t Task) CellMap() map[string]string {
	if t.cells != nil {
		return maps.Clone(t.cells)
	}
	m := map[string]string{}
	if t.cols == nil {
		return m
	}
	for c, h := range t.cols.header {
		if c < len(t.vals) && t.cols.first[c] {
			m[h] = t.vals[c]
		}
	}
	return m
}

// StatusNorm is the status lower-cased and trimmed, for comparisons.
func (t Task) StatusNorm() string { return strings.ToLower(strings.TrimSpace(t.Status)) }

// Title returns the first present column of Title, Name, Task, Summary,
// Description, because plans name that column differently.
func (t Task) Title() string {
	if t.cells != nil {
		v, _ := lookup(t.cells, titleNames...)
		return v
	}
	if t.cols == nil {
		return ""
	}
	for _, c := range t.cols.title {
		if c < len(t.vals) {
			return t.vals[c]
		}
	}
	return ""
}

// titleNames are the accepted names of the title column, by priority.
var titleNames = []string{"title", "name", "task", "summary", "description"}

// Problem is a tasks.md parse problem (validation rule 7). Line is 1-based,
// 0 when the problem is about the file as a whole.
type Problem struct {
	Line int
	Msg  string
}

// dependsNames are the accepted names of the dependency column, by
// priority.
var dependsNames = []string{"depends on", "dependencies", "deps", "depends", "depends-on"}

// lookup returns the cell of the first of names (case-insensitive) that is
// a column; names are tried in priority order.
func lookup(cells map[string]string, names ...string) (string, bool) {
	for _, n := range names {
		for k, v := range cells {
			if strings.EqualFold(strings.TrimSpace(k), n) {
				return v, true
			}
		}
	}
	return "", false
}

// derive fills the fields computed from the Depends on and Files cells.
func (ts *Tasks) derive(t *Task) {
	var a []int
	ts.deriveIn(t, &a)
}

// deriveIn is derive taking the dependency ids from arena (ParseTasks
// shares one for every row).
func (ts *Tasks) deriveIn(t *Task, arena *[]int) {
	t.DependsOn, t.Files = nil, nil
	if ts.depCol >= 0 {
		t.DependsOn = parseIntsIn(t.Cell(ts.Header[ts.depCol]), arena)
	}
	if ts.filesCol >= 0 {
		t.Files = parseFiles(t.Cell(ts.Header[ts.filesCol]))
	}
}

// parseIntsIn returns every distinct positive integer in s, in order, so
// "1, 2", "#1 #2" and "T1 and T2" all work and "-"/"none" yield nothing;
// appended to arena, the result is capped and nil when s holds no id.
func parseIntsIn(s string, arena *[]int) []int {
	a := *arena
	from := len(a)
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(s[i:j]); err == nil && n > 0 && !slices.Contains(a[from:], n) {
			if len(a) == cap(a) && len(a) > from {
				// Grown: this row's ids move with it, the earlier rows keep theirs.
				a = append(make([]int, 0, max(64, 2*cap(a))), a[from:]...)
				from = 0
			}
			a = append(a, n)
		}
		i = j
	}
	*arena = a
	if len(a) == from {
		return nil
	}
	return a[from:len(a):len(a)]
}

// parseFiles splits a Files cell on commas and spaces.
func parseFiles(s string) []string {
	var out []string
	for len(s) > 0 {
		r, size := rune(s[0]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s)
		}
		if r == ',' || unicode.IsSpace(r) {
			s = s[size:]
			continue
		}
		end := fieldEnd(s)
		f := strings.Trim(s[:end], "`")
		s = s[end:]
		if f == "" || f == "-" || strings.EqualFold(f, "none") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// fieldEnd is where the field that s starts with ends: at the first comma
// or space, or the end of s.
func fieldEnd(s string) int {
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if r == ',' || unicode.IsSpace(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// positiveInt accepts only plain decimal digits, so "+3", "3.0" and "0"
// are rejected.
func positiveInt(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// Tasks is a parsed tasks.md that can be rewritten without losing anything.
// Edit it through SetStatus and SetCell: changing Tasks directly is not
// reflected by Bytes.
type Tasks struct {
	Header []string
	Tasks  []Task

	lines       []string    // original lines without "\n"; edited rows replaced
	rows        []row       // rows[i] is the raw row of Tasks[i]
	headerCells []string    // raw header cells, to detect aligned tables
	headerLine  int         // index in lines of the header
	lastLine    int         // index in lines of the table's last line
	byID        map[int]int // id → index of its first row in Tasks
	idCol       int         // -1 when absent
	statusCol   int         // -1 when absent
	depCol      int         // "Depends on" or alike, -1 when absent
	filesCol    int         // -1 when absent
}

// Find returns the task with id (its first row if the id is duplicated).
func (ts *Tasks) Find(id int) (*Task, bool) {
	i, ok := ts.byID[id]
	if !ok {
		return nil, false
	}
	return &ts.Tasks[i], true
}

// IDs returns the task ids in table order.
func (ts *Tasks) IDs() []int {
	ids := make([]int, len(ts.Tasks))
	for i, t := range ts.Tasks {
		ids[i] = t.ID
	}
	return ids
}

// NextPending returns the first task in table order whose status is
// pending and whose id is not exclude (0 excludes nothing).
func (ts *Tasks) NextPending(exclude int) (Task, bool) {
	for _, t := range ts.Tasks {
		if t.ID != exclude && t.StatusNorm() == StatusPending {
			return t, true
		}
	}
	return Task{}, false
}

// Bytes re-renders the file: lines not edited are returned byte for byte.
func (ts *Tasks) Bytes() []byte {
	return []byte(strings.Join(ts.lines, "\n"))
}
