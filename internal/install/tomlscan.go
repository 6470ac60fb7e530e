package install

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/taskie-dev/taskie/internal/domain"
)

// A small TOML scanner, enough to edit Codex's config.toml by hand: it
// finds every table header and every key/value with its full dotted path
// and its byte span, and decodes string values. It does not build the
// document, so an edit changes only the bytes it means to change and the
// user's comments, order and formatting survive. (A TOML library would
// parse and re-encode, losing exactly those.)

// tomlHeader is a [table] or [[array]] header line.
type tomlHeader struct {
	path       []string
	array      bool
	start, end int // the line, newline included
}

// tomlEntry is one key = value, at top level or inside an inline table.
type tomlEntry struct {
	table            []string // the table it is in (its header's path)
	key              []string // the dotted key as written
	str              string   // the decoded value, when it is a string
	isStr, isTable   bool     // a string; an inline table
	inline           bool     // inside an inline table (no line of its own)
	valStart, valEnd int      // the value
	start, end       int      // the line, newline included (top level only)
}

func (e tomlEntry) path() []string { return append(append([]string{}, e.table...), e.key...) }

type tomlDoc struct {
	src     string
	headers []tomlHeader
	entries []tomlEntry
}

type tomlScanner struct {
	src   string
	i     int
	table []string
	doc   *tomlDoc
}

// scanTOML scans src; an error names the line where the text stops being
// TOML (Codex would refuse such a file too).
func scanTOML(src string) (*tomlDoc, error) {
	s := &tomlScanner{src: src, doc: &tomlDoc{src: src}}
	for s.i < len(src) {
		if err := s.line(); err != nil {
			return nil, fmt.Errorf("line %d: %v", strings.Count(src[:min(s.i, len(src))], "\n")+1, err)
		}
	}
	return s.doc, nil
}

func (s *tomlScanner) peek(off int) byte {
	if s.i+off < len(s.src) {
		return s.src[s.i+off]
	}
	return 0
}

func (s *tomlScanner) skipSpace() {
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// skipBlank skips spaces, newlines and comments (inside arrays and inline tables).
func (s *tomlScanner) skipBlank() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		case '#':
			s.skipComment()
		default:
			return
		}
	}
}

func (s *tomlScanner) skipComment() {
	for s.i < len(s.src) && s.src[s.i] != '\n' {
		s.i++
	}
}

// endOfLine accepts trailing spaces and a comment, then the newline.
func (s *tomlScanner) endOfLine() error {
	s.skipSpace()
	if s.peek(0) == '#' {
		s.skipComment()
	}
	if s.peek(0) == '\r' {
		s.i++
	}
	switch s.peek(0) {
	case '\n':
		s.i++
		return nil
	case 0:
		if s.i >= len(s.src) {
			return nil
		}
	}
	return fmt.Errorf("unexpected %q after the value", s.peek(0))
}

func (s *tomlScanner) line() error {
	start := s.i
	s.skipSpace()
	switch c := s.peek(0); {
	case c == '\n' || c == '\r':
		s.i++
		return nil
	case c == '#':
		s.skipComment()
		return nil
	case c == 0 && s.i >= len(s.src):
		return nil
	case c == '[':
		h := tomlHeader{start: start}
		s.i++
		if s.peek(0) == '[' {
			h.array = true
			s.i++
		}
		s.skipSpace()
		key, err := s.key()
		if err != nil {
			return err
		}
		s.skipSpace()
		closing := "]"
		if h.array {
			closing = "]]"
		}
		if !strings.HasPrefix(s.src[s.i:], closing) {
			return fmt.Errorf("table header not closed by %s", closing)
		}
		s.i += len(closing)
		if err := s.endOfLine(); err != nil {
			return err
		}
		h.path, h.end = key, s.i
		s.table = key
		if h.array {
			s.table = append(append([]string{}, key...), "[]") // elements never match a plain path
		}
		s.doc.headers = append(s.doc.headers, h)
		return nil
	}
	e, err := s.keyValue(s.table, false)
	if err != nil {
		return err
	}
	if err := s.endOfLine(); err != nil {
		return err
	}
	e.start, e.end = start, s.i
	s.doc.entries = append(s.doc.entries, e)
	return nil
}

// keyValue reads key = value; entries of an inline table value are
// recorded before it.
func (s *tomlScanner) keyValue(table []string, inline bool) (tomlEntry, error) {
	key, err := s.key()
	if err != nil {
		return tomlEntry{}, err
	}
	s.skipSpace()
	if s.peek(0) != '=' {
		return tomlEntry{}, fmt.Errorf("expected = after the key %s", strings.Join(key, "."))
	}
	s.i++
	s.skipSpace()
	e := tomlEntry{table: table, key: key, inline: inline, valStart: s.i}
	switch {
	case s.peek(0) == '{':
		e.isTable = true
		err = s.inlineTable(e.path())
	default:
		e.str, e.isStr, err = s.value()
	}
	e.valEnd = s.i
	return e, err
}

func (s *tomlScanner) inlineTable(path []string) error {
	s.i++ // {
	for {
		s.skipBlank()
		switch s.peek(0) {
		case '}':
			s.i++
			return nil
		case ',':
			s.i++
			continue
		case 0:
			return fmt.Errorf("inline table not closed")
		}
		e, err := s.keyValue(path, true)
		if err != nil {
			return err
		}
		s.doc.entries = append(s.doc.entries, e)
	}
}

// value reads one value; it returns the decoded text of a string.
func (s *tomlScanner) value() (string, bool, error) {
	switch c := s.peek(0); {
	case c == '"' || c == '\'':
		v, err := s.str()
		return v, true, err
	case c == '[':
		s.i++
		for {
			s.skipBlank()
			switch s.peek(0) {
			case ']':
				s.i++
				return "", false, nil
			case ',':
				s.i++
				continue
			case 0:
				return "", false, fmt.Errorf("array not closed")
			case '{':
				if err := s.inlineTable(nil); err != nil {
					return "", false, err
				}
				continue
			}
			if _, _, err := s.value(); err != nil {
				return "", false, err
			}
		}
	case c == '{':
		return "", false, s.inlineTable(nil)
	}
	start := s.i
	for s.i < len(s.src) && !strings.ContainsRune(",]}#\r\n", rune(s.src[s.i])) {
		s.i++
	}
	if strings.TrimSpace(s.src[start:s.i]) == "" {
		return "", false, fmt.Errorf("missing value")
	}
	return "", false, nil
}

// key reads a dotted key: bare, "basic" and 'literal' parts.
func (s *tomlScanner) key() ([]string, error) {
	var parts []string
	for {
		s.skipSpace()
		switch c := s.peek(0); {
		case c == '"' || c == '\'':
			if strings.HasPrefix(s.src[s.i:], `"""`) || strings.HasPrefix(s.src[s.i:], `'''`) {
				return nil, fmt.Errorf("a key cannot be a multi-line string")
			}
			p, err := s.str()
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		case isBareKey(c):
			start := s.i
			for s.i < len(s.src) && isBareKey(s.src[s.i]) {
				s.i++
			}
			parts = append(parts, s.src[start:s.i])
		default:
			return nil, fmt.Errorf("expected a key, found %q", c)
		}
		s.skipSpace()
		if s.peek(0) != '.' {
			return parts, nil
		}
		s.i++
	}
}

func isBareKey(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str reads a basic, literal or multi-line string and decodes it.
func (s *tomlScanner) str() (string, error) {
	q := s.src[s.i]
	delim := string(q)
	if strings.HasPrefix(s.src[s.i:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	s.i += len(delim)
	var b strings.Builder
	for s.i < len(s.src) {
		c := s.src[s.i]
		if strings.HasPrefix(s.src[s.i:], delim) {
			// A multi-line string may end with one or two quotes before its delimiter.
			for len(delim) == 3 && strings.HasPrefix(s.src[s.i+1:], delim) {
				b.WriteByte(c)
				s.i++
			}
			s.i += len(delim)
			return b.String(), nil
		}
		if c == '\n' && len(delim) == 1 {
			return "", fmt.Errorf("string not closed on its line")
		}
		if c == '\\' && q == '"' {
			if err := s.escape(&b, len(delim) == 3); err != nil {
				return "", err
			}
			continue
		}
		b.WriteByte(c)
		s.i++
	}
	return "", fmt.Errorf("string not closed")
}

func (s *tomlScanner) escape(b *strings.Builder, multiline bool) error {
	s.i++ // backslash
	c := s.peek(0)
	simple := map[byte]string{'b': "\b", 't': "\t", 'n': "\n", 'f': "\f", 'r': "\r", '"': `"`, '\\': `\`, 'e': "\x1b"}
	if r, ok := simple[c]; ok {
		b.WriteString(r)
		s.i++
		return nil
	}
	n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if n > 0 && s.i+1+n <= len(s.src) {
		v, err := strconv.ParseUint(s.src[s.i+1:s.i+1+n], 16, 32)
		if err == nil && utf8.ValidRune(rune(v)) {
			b.WriteRune(rune(v))
			s.i += 1 + n
			return nil
		}
	}
	if multiline { // a line-ending backslash trims the following whitespace
		j := s.i
		for j < len(s.src) && (s.src[j] == ' ' || s.src[j] == '\t' || s.src[j] == '\r') {
			j++
		}
		if j < len(s.src) && s.src[j] == '\n' {
			for j < len(s.src) && strings.ContainsRune(" \t\r\n", rune(s.src[j])) {
				j++
			}
			s.i = j
			return nil
		}
	}
	return fmt.Errorf("bad escape \\%c in a string", c)
}

// tomlKey writes a dotted key, quoting the parts that are not bare.
func tomlKey(parts []string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p
		if p == "" || strings.IndexFunc(p, func(r rune) bool { return r > 127 || !isBareKey(byte(r)) }) >= 0 {
			out[i] = domain.QuoteTOML(p)
		}
	}
	return strings.Join(out, ".")
}

func samePath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && samePath(path[:len(prefix)], prefix)
}
