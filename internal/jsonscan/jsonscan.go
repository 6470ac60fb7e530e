// Package jsonscan reads JSON of the layout taskie writes without
// reflection, for files read on every command (state.json's lifecycle
// records, the clone's coordination files): a reader turns not OK at
// anything it is unsure of (escapes, other keys, a key twice, fractions),
// and its caller reads the bytes with encoding/json instead.
package jsonscan

import (
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Reader scans JSON of the layout taskie writes; it turns not OK at
// anything else, and the caller reads the bytes with encoding/json
// instead.
type Reader struct {
	b  []byte
	i  int
	ok bool
}

// New scans b.
func New(b []byte) *Reader { return &Reader{b: b, ok: true} }

// OK tells whether everything read so far was of the layout taken.
func (r *Reader) OK() bool { return r.ok }

func (r *Reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\n', '\r', '\t':
			r.i++
		default:
			return
		}
	}
}

// Is consumes c (after white space) when it comes next.
func (r *Reader) Is(c byte) bool {
	r.ws()
	if r.ok && r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// Want consumes c, which must come next.
func (r *Reader) Want(c byte) {
	if !r.Is(c) {
		r.ok = false
	}
}

// Str reads a string without escapes.
func (r *Reader) Str() string {
	r.Want('"')
	if !r.ok {
		return ""
	}
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			raw := r.b[start:r.i]
			r.i++
			if !utf8.Valid(raw) { // encoding/json would replace the bad bytes
				r.ok = false
				return ""
			}
			return string(raw)
		case c == '\\' || c < 0x20:
			r.ok = false
			return ""
		}
		r.i++
	}
	r.ok = false
	return ""
}

// Int reads an integer: digits, an optional minus, no leading zero.
func (r *Reader) Int() int64 {
	r.ws()
	start := r.i
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	return r.parseInt(r.b[start:r.i])
}

// QuotedInt reads an integer written as a string (a ",string" field).
func (r *Reader) QuotedInt() int64 {
	s := r.Str()
	if !r.ok {
		return 0
	}
	return r.parseInt([]byte(s))
}

// parseInt takes a JSON integer: digits, an optional minus, no leading
// zero.
func (r *Reader) parseInt(b []byte) int64 {
	d := b
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || (d[0] == '0' && len(d) > 1) {
		r.ok = false
		return 0
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			r.ok = false
			return 0
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		r.ok = false
	}
	return n
}

// Time reads an RFC 3339 time as encoding/json reads a time.Time.
func (r *Reader) Time() time.Time {
	var t time.Time
	if s := r.Str(); r.ok && t.UnmarshalText([]byte(s)) != nil {
		r.ok = false
	}
	return t
}

// Bool reads true or false.
func (r *Reader) Bool() bool {
	r.ws()
	for _, w := range []string{"true", "false"} {
		if len(r.b)-r.i >= len(w) && string(r.b[r.i:r.i+len(w)]) == w {
			r.i += len(w)
			return w == "true"
		}
	}
	r.ok = false
	return false
}

// Object reads an object, calling member for each key; member reads the
// value, or returns false for a key it does not know. A key met twice is
// left to encoding/json, which merges the two values.
func (r *Reader) Object(member func(key string) bool) {
	r.Want('{')
	if r.Is('}') {
		return
	}
	seen := make([]string, 0, 8)
	for r.ok {
		k := r.Str()
		r.Want(':')
		if !r.ok || slices.Contains(seen, k) || !member(k) {
			r.ok = false
			return
		}
		seen = append(seen, k)
		if r.Is('}') {
			return
		}
		r.Want(',')
	}
}

// Null consumes a null when it comes next.
func (r *Reader) Null() bool {
	r.ws()
	if r.ok && len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// Array reads an array, calling elem to read each element.
func (r *Reader) Array(elem func()) {
	r.Want('[')
	if r.Is(']') {
		return
	}
	for r.ok {
		elem()
		if r.Is(']') {
			return
		}
		r.Want(',')
	}
}

// End checks that nothing but white space follows.
func (r *Reader) End() bool {
	r.ws()
	return r.ok && r.i == len(r.b)
}
