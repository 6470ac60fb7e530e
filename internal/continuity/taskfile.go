package continuity

import (
	"fmt"
	"strings"
)

// Names of the sections taskie manages in a task file.
const (
	SectionCriteria = "Acceptance Criteria"
	SectionProgress = "Progress Log"
	SectionChain    = "Chain Output"
)

// File is a parsed task-{T}.md. Its edits replace whole lines and leave
// every other byte as it was; lines it adds use the file's own line ending.
type File struct {
	lines []string // each line with its ending ("\n", "\r\n", or none for the last)
	eol   string   // ending for added lines
	heads []heading
	fence []bool // fence[i]: line i is inside or delimits a fenced code block
}

// heading is an ATX heading outside fenced code, starting in column 0.
type heading struct {
	line  int
	level int
	text  string // without the #s, trimmed
}

// Parse reads a task file. It never fails: anything it does not recognise
// is kept as text.
func Parse(data []byte) *File {
	f := &File{eol: "\n"}
	s := string(data)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			f.lines = append(f.lines, s)
			break
		}
		f.lines = append(f.lines, s[:i+1])
		s = s[i+1:]
	}
	if len(f.lines) > 0 && strings.HasSuffix(f.lines[0], "\r\n") {
		f.eol = "\r\n"
	}
	f.scan()
	return f
}

// Bytes returns the file's content.
func (f *File) Bytes() []byte { return []byte(strings.Join(f.lines, "")) }

// Len is the size of the file in bytes.
func (f *File) Len() int {
	n := 0
	for _, l := range f.lines {
		n += len(l)
	}
	return n
}

// text returns line i without its ending.
func (f *File) text(i int) string {
	return strings.TrimSuffix(strings.TrimSuffix(f.lines[i], "\n"), "\r")
}

func (f *File) blank(i int) bool { return strings.TrimSpace(f.text(i)) == "" }

// scan finds the headings and fenced code blocks.
func (f *File) scan() {
	f.heads = f.heads[:0]
	f.fence = make([]bool, len(f.lines))
	var fs fenceState
	for i := range f.lines {
		t := f.text(i)
		if fs.step(t) {
			f.fence[i] = true
			continue
		}
		if lv, txt, ok := parseHeading(t); ok {
			f.heads = append(f.heads, heading{line: i, level: lv, text: txt})
		}
	}
}

// fenceState follows CommonMark fenced code blocks (``` and ~~~).
type fenceState struct {
	ch byte // 0 outside a block
	n  int
}

// step consumes one line and reports whether it belongs to a code block
// (its delimiters included).
func (fs *fenceState) step(line string) bool {
	ch, n, rest := fenceOf(line)
	if fs.ch == 0 {
		if n == 0 || (ch == '`' && strings.ContainsRune(rest, '`')) {
			return false
		}
		fs.ch, fs.n = ch, n
		return true
	}
	if ch == fs.ch && n >= fs.n && strings.TrimSpace(rest) == "" {
		fs.ch, fs.n = 0, 0
	}
	return true
}

// open reports whether a code block is still open.
func (fs *fenceState) open() bool { return fs.ch != 0 }

// closeFence returns the fence that closes a code block still open before
// line i, or nothing. Text inserted there would otherwise read as code,
// and a session added at the end of a file whose last block is unclosed
// would be lost; the block looked the same before, since CommonMark ends
// an unclosed block at the end of the document.
func (f *File) closeFence(i int) []string {
	var fs fenceState
	for _, l := range f.lines[:i] {
		fs.step(strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r"))
	}
	if !fs.open() {
		return nil
	}
	return []string{strings.Repeat(string(fs.ch), fs.n)}
}

// fenceOf returns the fence character and length of a fence line (up to
// three spaces of indentation), or n == 0.
func fenceOf(line string) (ch byte, n int, rest string) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, ""
	}
	ch = t[0]
	for n < len(t) && t[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, ""
	}
	return ch, n, t[n:]
}

// parseHeading recognises "# text" to "###### text" in column 0.
func parseHeading(line string) (level int, text string, ok bool) {
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(line) && line[level] != ' ' && line[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[level:]), "#"))
	return level, text, true
}

// endsSection reports whether h ends a managed section: a heading of level
// 1 or 2, or a subtask heading (subtasks are the file's structure).
func endsSection(h heading) bool {
	return h.level <= 2 || (h.level == 3 && isSubtask(h.text))
}

func isSubtask(text string) bool {
	f := strings.Fields(text)
	return len(f) > 1 && strings.EqualFold(f[0], "subtask")
}

// span is a range of lines [start, end).
type span struct{ start, end int }

// section returns the lines of the first "## name" section (any case, a
// final colon allowed), heading included, up to the next heading that
// ends it.
func (f *File) section(name string) (span, bool) {
	for k, h := range f.heads {
		if h.level != 2 || !strings.EqualFold(strings.TrimSuffix(h.text, ":"), name) {
			continue
		}
		end := len(f.lines)
		for _, n := range f.heads[k+1:] {
			if endsSection(n) {
				end = n.line
				break
			}
		}
		return span{h.line, end}, true
	}
	return span{}, false
}

// trimBlank returns sp without its trailing blank lines.
func (f *File) trimBlank(sp span) span {
	for sp.end > sp.start+1 && f.blank(sp.end-1) {
		sp.end--
	}
	return sp
}

// headsIn returns the headings inside sp, its first line excluded.
func (f *File) headsIn(sp span) []heading {
	var out []heading
	for _, h := range f.heads {
		if h.line > sp.start && h.line < sp.end {
			out = append(out, h)
		}
	}
	return out
}

// splice replaces lines [from, to) with add, each given the file's line
// ending, and rescans the file.
func (f *File) splice(from, to int, add []string) {
	if from == len(f.lines) && from > 0 && !strings.HasSuffix(f.lines[from-1], "\n") {
		// A last line cut after the "\r" of a CRLF ending is completed to
		// "\r\n", not "\r\r\n", which would make the line another one
		// (a heading no longer one).
		if f.eol == "\r\n" && strings.HasSuffix(f.lines[from-1], "\r") {
			f.lines[from-1] += "\n"
		} else {
			f.lines[from-1] += f.eol
		}
	}
	if len(add) > 0 {
		add = append(f.closeFence(from), add...)
	}
	out := make([]string, 0, len(f.lines)-(to-from)+len(add))
	out = append(out, f.lines[:from]...)
	for _, l := range add {
		out = append(out, l+f.eol)
	}
	out = append(out, f.lines[to:]...)
	f.lines = out
	f.scan()
}

// replaceSection puts block (a section, heading first) in place of the
// section name, keeping the blank lines after it, or appends it at the end
// of the file after a blank line.
func (f *File) replaceSection(name string, block []string) {
	if sp, ok := f.section(name); ok {
		sp = f.trimBlank(sp)
		f.splice(sp.start, sp.end, block)
		return
	}
	f.appendBlock(block)
}

// appendBlock adds lines at the end of the file, separated by a blank line
// from what comes before.
func (f *File) appendBlock(block []string) {
	n := len(f.lines)
	if n > 0 && !f.blank(n-1) {
		block = append([]string{""}, block...)
	}
	f.splice(n, n, block)
}

// checkBlock refuses inserted text that would change the file's structure:
// an unclosed code fence, or (from line 1 on) a heading that ends a
// section or, when entries is set, a level-3 heading.
func checkBlock(lines []string, entries bool) error {
	var fs fenceState
	for i, l := range lines {
		if fs.step(l) {
			continue
		}
		lv, txt, ok := parseHeading(l)
		if i == 0 || !ok {
			continue
		}
		if endsSection(heading{level: lv, text: txt}) || (entries && lv == 3) {
			return fmt.Errorf("the text may not contain the heading %q: it would break the task file's sections (use #### or deeper)", l)
		}
	}
	if fs.open() {
		return fmt.Errorf("the text opens a code fence it never closes")
	}
	return nil
}

// Title returns the text of the file's first level-1 heading, "" when none.
func (f *File) Title() string {
	for _, h := range f.heads {
		if h.level == 1 {
			return h.text
		}
	}
	return ""
}

// descriptionSections are the sections read as the description when no
// text comes before the first "##" or "###" heading.
var descriptionSections = []string{"description", "overview", "requirements", "goal", "context", "summary"}

// Description returns the task's description: the text before the first
// "##" or "###" heading, without the level-1 title; failing that, the body
// of a Description (or Overview, Requirements, Goal…) section. Runs of
// blank lines are squeezed to one.
func (f *File) Description() string {
	end := len(f.lines)
	for _, h := range f.heads {
		if h.level == 2 || h.level == 3 {
			end = h.line
			break
		}
	}
	if d := f.textOf(span{0, end}, true); d != "" {
		return d
	}
	for _, name := range descriptionSections {
		if sp, ok := f.section(name); ok {
			return f.textOf(span{sp.start + 1, sp.end}, false)
		}
	}
	return ""
}

// textOf joins the lines of sp, trimmed and with blank runs squeezed;
// skipH1 drops level-1 headings.
func (f *File) textOf(sp span, skipH1 bool) string {
	var b strings.Builder
	blank := false
	for i := sp.start; i < sp.end; i++ {
		t := strings.TrimRight(f.text(i), " \t")
		if skipH1 && !f.fence[i] {
			if lv, _, ok := parseHeading(t); ok && lv == 1 {
				continue
			}
		}
		if t == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteString("\n")
			blank = false
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t)
	}
	return b.String()
}
