package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Lean is an event as the queries read it: the top-level text fields, and
// meta as its raw JSON object, found by a scanner that walks each line once
// and decodes nothing else (a commit's change, meta's values). Raw and Meta
// point into the scanner's buffer: they are valid during the callback only.
type Lean struct {
	Line                                           int    // 1-based line number; 0 when unknown (a tail read)
	Raw                                            []byte // the whole line, trimmed
	TS, Plan, Task, Event, From, To, Actor, Reason string
	Meta                                           []byte // the "meta" object, nil when absent
}

// Filter narrows a lean scan. Lines are tested on their bytes before they
// are decoded, so a query that needs one task's events skips the others
// almost for free.
type Filter struct {
	// Task keeps only the events of this task ("" keeps all).
	Task string
	// Kinds keeps only events of these kinds (nil keeps all).
	Kinds []string
}

// ScanLean streams the events read from r that pass f to fn, in order,
// without decoding what no query needs. A line that does not parse (a
// torn write) goes to warn with its line number, never fatal. fn's error
// stops the scan and is returned.
func ScanLean(r io.Reader, name string, f Filter, fn func(*Lean) error, warn func(string)) error {
	m := newMatcher(f)
	in := interner{}
	var l Lean
	return ScanLines(r, MaxLine, func(n int, raw []byte) error {
		line := bytes.TrimSpace(raw)
		if len(line) == 0 || !m.maybe(line) {
			return nil
		}
		if err := parseLean(line, &l, in); err != nil {
			warn(fmt.Sprintf("%s:%d: skipped unreadable event line (torn write?): %v", name, n, err))
			return nil
		}
		l.Line = n
		if !m.keep(&l) {
			return nil
		}
		return fn(&l)
	}, func(n int) { warn(tooLongWarning(name, n)) })
}

// matcher applies a Filter.
type matcher struct {
	f              Filter
	taskKey, exact []byte
}

func newMatcher(f Filter) matcher {
	m := matcher{f: f}
	if f.Task != "" {
		m.taskKey = []byte(`"task":"`)
		m.exact = []byte(`"task":"` + f.Task + `"`)
	}
	return m
}

// maybe tells from the bytes whether a line can pass: the log writes
// `"task":"3"` exactly, so a line naming another task that way, or no
// task at all, cannot. A line written otherwise (by hand: spaces, a
// number) is decoded to be sure.
func (m matcher) maybe(line []byte) bool {
	if m.exact == nil {
		return true
	}
	if bytes.Contains(line, m.exact) {
		return true
	}
	if bytes.Contains(line, m.taskKey) {
		return false
	}
	return bytes.Contains(line, []byte(`"task"`))
}

// keep applies the filter to a decoded line.
func (m matcher) keep(l *Lean) bool {
	if m.f.Task != "" && l.Task != m.f.Task {
		return false
	}
	return m.f.Kinds == nil || slices.Contains(m.f.Kinds, l.Event)
}

// ParseLean decodes one line into l: the top-level string fields ts,
// plan, task, event, from, to, actor and reason (a number or null is
// taken as its text or ""), and meta's raw object. The whole line is
// checked to be one JSON object (strings closed, brackets balanced,
// nothing after it), so a torn line is an error.
func ParseLean(line []byte, l *Lean) error { return parseLean(line, l, nil) }

// interner keeps one copy of the values that repeat from line to line
// (kinds, actors, states, task ids, the plan), so that a scan does not
// allocate them again for every line. It stops growing at maxInterned.
type interner map[string]string

const maxInterned = 4096

func (in interner) text(v []byte) (string, error) {
	if in == nil || len(v) < 2 || v[0] != '"' || len(v) > 64 {
		return Text(v)
	}
	if s, ok := in[string(v)]; ok {
		return s, nil
	}
	s, err := Text(v)
	if err == nil && len(in) < maxInterned {
		in[string(v)] = s
	}
	return s, err
}

func parseLean(line []byte, l *Lean, in interner) error {
	*l = Lean{Raw: line}
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipWS(line, i+1)
	if i < len(line) && line[i] == '}' {
		return end(line, i+1)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return errAt("a key", i)
		}
		ke, err := skipString(line, i)
		if err != nil {
			return err
		}
		key := line[i+1 : ke-1]
		i = skipWS(line, ke)
		if i >= len(line) || line[i] != ':' {
			return errAt("':'", i)
		}
		vs := skipWS(line, i+1)
		ve, err := skipValue(line, vs)
		if err != nil {
			return err
		}
		if err := l.set(key, line[vs:ve], in); err != nil {
			return err
		}
		i = skipWS(line, ve)
		if i >= len(line) {
			return errors.New("unexpected end of line")
		}
		switch line[i] {
		case ',':
			i = skipWS(line, i+1)
		case '}':
			return end(line, i+1)
		default:
			return errAt("',' or '}'", i)
		}
	}
}

// set stores a top-level value the queries use.
func (l *Lean) set(key, v []byte, in interner) error {
	var dst *string
	switch string(key) {
	case "ts":
		dst, in = &l.TS, nil
	case "plan":
		dst = &l.Plan
	case "task":
		dst = &l.Task
	case "event":
		dst = &l.Event
	case "from":
		dst = &l.From
	case "to":
		dst = &l.To
	case "actor":
		dst = &l.Actor
	case "reason":
		dst, in = &l.Reason, nil
	case "meta":
		if v[0] == '{' {
			l.Meta = v
		}
		return nil
	default:
		return nil
	}
	s, err := in.text(v)
	*dst = s
	return err
}

// Text returns a raw JSON value as text: a string unquoted, null as "",
// anything else as written.
func Text(v []byte) (string, error) {
	switch {
	case len(v) == 0:
		return "", nil
	case v[0] == '"':
		if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
			return string(v[1 : len(v)-1]), nil
		}
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case string(v) == "null":
		return "", nil
	}
	return string(v), nil
}

func end(line []byte, i int) error {
	if i = skipWS(line, i); i != len(line) {
		return errAt("the end of the line", i)
	}
	return nil
}

func errAt(want string, i int) error {
	return fmt.Errorf("expected %s at offset %d", want, i)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the offset after the string that opens at b[i]. A
// plain loop: the log's strings are short, shorter than what a call to
// IndexByte pays for.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, nil
		case '\\':
			j++
		}
	}
	return 0, errors.New("unterminated string")
}

// skipValue returns the offset after the JSON value that starts at b[i].
// Nested objects and arrays are checked for balance only.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("unexpected end of line")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		return skipNested(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		return j, nil
	}
	return 0, errAt("a value", i)
}

func literal(b []byte, i int, word string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(word)) {
		return 0, errAt(word, i)
	}
	return i + len(word), nil
}

// skipNested skips an object or array, strings included, checking that
// every bracket is closed by its own kind.
func skipNested(b []byte, i int) (int, error) {
	var stack [64]byte
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			e, err := skipString(b, j)
			if err != nil {
				return 0, err
			}
			j = e - 1
		case '{', '[':
			if depth == len(stack) {
				return 0, errors.New("nested too deep")
			}
			stack[depth] = c
			depth++
		case '}', ']':
			if depth == 0 || stack[depth-1] != c-2 {
				return 0, errAt("a matching bracket", j)
			}
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, errors.New("unexpected end of line")
}

// MetaValue returns the raw value of key in a raw meta object; false when
// absent (or meta is no object). It walks the object's top level only and
// allocates nothing for keys written without escapes.
func MetaValue(meta []byte, key string) ([]byte, bool) {
	var out []byte
	found := false
	_ = metaEach(meta, func(k, v []byte) bool {
		if keyIs(k, key) {
			out, found = v, true // the last of a repeated key wins, as in encoding/json
		}
		return true
	})
	return out, found
}

// KeyIs reports whether the raw key k (its quotes included) is key.
func KeyIs(k []byte, key string) bool { return keyIs(k, key) }

func keyIs(k []byte, key string) bool {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k[1:len(k)-1]) == key
	}
	s, err := Text(k)
	return err == nil && s == key
}

// MetaEachRaw calls fn with each raw key (quotes included, see KeyIs) and
// raw value of a raw meta object, in order, until fn returns false. It
// allocates nothing.
func MetaEachRaw(meta []byte, fn func(k, v []byte) bool) error { return metaEach(meta, fn) }

func metaEach(meta []byte, fn func(k, v []byte) bool) error {
	i := skipWS(meta, 0)
	if i >= len(meta) || meta[i] != '{' {
		return errors.New("meta is not an object")
	}
	i = skipWS(meta, i+1)
	if i < len(meta) && meta[i] == '}' {
		return nil
	}
	for i < len(meta) {
		if meta[i] != '"' {
			return errAt("a key", i)
		}
		ke, err := skipString(meta, i)
		if err != nil {
			return err
		}
		k := meta[i:ke]
		i = skipWS(meta, ke)
		if i >= len(meta) || meta[i] != ':' {
			return errAt("':'", i)
		}
		vs := skipWS(meta, i+1)
		ve, err := skipValue(meta, vs)
		if err != nil {
			return err
		}
		if !fn(k, meta[vs:ve]) {
			return nil
		}
		i = skipWS(meta, ve)
		if i < len(meta) && meta[i] == ',' {
			i = skipWS(meta, i+1)
			continue
		}
		break
	}
	return nil
}

// MetaString returns a string value of meta, "" when absent or not a string.
func MetaString(meta []byte, key string) string {
	v, ok := MetaValue(meta, key)
	if !ok || len(v) == 0 || v[0] != '"' {
		return ""
	}
	s, _ := Text(v)
	return s
}

// MetaNumber returns a number value of meta; false when absent or not a number.
func MetaNumber(meta []byte, key string) (float64, bool) {
	v, ok := MetaValue(meta, key)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// tailChunk is how much ScanLeanTail reads at a time, from the end.
var tailChunk = 64 << 10

// ScanLeanTail streams the last n events of a log that pass f to fn, in
// order, reading the file backwards from its end: the cost is that of the
// lines shown, not of the whole log. Unreadable lines go to warn (their
// line number is not known; they are counted from the end).
func ScanLeanTail(r io.ReaderAt, size int64, name string, n int, f Filter, fn func(*Lean) error, warn func(string)) error {
	if n <= 0 {
		return nil
	}
	m := newMatcher(f)
	var picked [][]byte // newest first
	var carry []byte
	fromEnd := 0
	var l Lean
	take := func(line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return
		}
		fromEnd++
		if !m.maybe(line) {
			return
		}
		if err := ParseLean(line, &l); err != nil {
			warn(fmt.Sprintf("%s: line %d from the end: skipped unreadable event line (torn write?): %v", name, fromEnd, err))
			return
		}
		if m.keep(&l) {
			picked = append(picked, bytes.Clone(line))
		}
	}
	for pos := size; pos > 0 && len(picked) < n; {
		size := min(int64(tailChunk), pos)
		pos -= size
		buf := make([]byte, size, int(size)+len(carry))
		if _, err := r.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		data := append(buf, carry...)
		cut := 0
		if pos > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				carry = data
				continue
			}
			cut = i + 1
		}
		carry = data[:max(cut-1, 0)]
		lines := bytes.Split(data[cut:], []byte{'\n'})
		for i := len(lines) - 1; i >= 0 && len(picked) < n; i-- {
			take(lines[i])
		}
		if pos == 0 {
			break
		}
	}
	for i := len(picked) - 1; i >= 0; i-- {
		if err := ParseLean(picked[i], &l); err != nil {
			return err
		}
		if err := fn(&l); err != nil {
			return err
		}
	}
	return nil
}
