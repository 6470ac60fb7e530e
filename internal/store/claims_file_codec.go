package store

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/taskie-dev/taskie/internal/domain"
)

// The clone's coordination files (claims.json, worktrees.json, held.json)
// are read and rewritten by every claim, and hold one entry per task: with
// encoding/json's reflection a 200-task plan cost a claim through the
// binary about 2 ms of each. They are written here by hand, byte for byte
// as json.MarshalIndent writes them, and read by a scanner that takes the
// layout taskie writes; a file it does not take (edited by hand: other
// keys, escapes, nulls) is read by encoding/json, as before.

// jw appends indented JSON.
type jw struct {
	b     []byte
	depth int
	first []bool // per open container: no member written yet
	bad   bool   // a value encoding/json must write (fallback)
}

func (w *jw) nl() {
	w.b = append(w.b, '\n')
	for range w.depth {
		w.b = append(w.b, ' ', ' ')
	}
}

func (w *jw) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = append(w.first, true)
}

func (w *jw) close(c byte) {
	w.depth--
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	if !empty {
		w.nl()
	}
	w.b = append(w.b, c)
}

// next starts a member of the open container.
func (w *jw) next() {
	if !w.first[len(w.first)-1] {
		w.b = append(w.b, ',')
	}
	w.first[len(w.first)-1] = false
	w.nl()
}

func (w *jw) key(k string) {
	w.next()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':', ' ')
}

func (w *jw) str(k, v string) {
	w.key(k)
	w.b = appendJSONString(w.b, v)
}

func (w *jw) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *jw) time(k string, t time.Time) {
	w.key(k)
	if y := t.Year(); y < 0 || y > 9999 {
		w.bad = true // encoding/json refuses it, with its error
		return
	}
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

func (w *jw) bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// appendJSONString appends s quoted as encoding/json quotes it: plain
// printable ASCII as it is, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jr scans JSON of the layout taskie writes; ok turns false at anything
// else, and the caller reads the file with encoding/json instead.
type jr struct {
	b  []byte
	i  int
	ok bool
}

func newJR(b []byte) *jr { return &jr{b: b, ok: true} }

func (r *jr) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\n', '\r', '\t':
			r.i++
		default:
			return
		}
	}
}

// is consumes c (after white space) when it comes next.
func (r *jr) is(c byte) bool {
	r.ws()
	if r.ok && r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *jr) want(c byte) {
	if !r.is(c) {
		r.ok = false
	}
}

// str reads a string without escapes.
func (r *jr) str() string {
	r.want('"')
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

func (r *jr) int() int64 {
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

// quotedInt reads an integer written as a string (a ",string" field).
func (r *jr) quotedInt() int64 {
	s := r.str()
	if !r.ok {
		return 0
	}
	return r.parseInt([]byte(s))
}

// parseInt takes a JSON integer: digits, an optional minus, no leading
// zero.
func (r *jr) parseInt(b []byte) int64 {
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

func (r *jr) time() time.Time {
	var t time.Time
	if s := r.str(); r.ok && t.UnmarshalText([]byte(s)) != nil {
		r.ok = false
	}
	return t
}

func (r *jr) bool() bool {
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

// object reads an object, calling member for each key; member reads the
// value, or returns false for a key it does not know. A key met twice is
// left to encoding/json, which merges the two values.
func (r *jr) object(member func(key string) bool) {
	r.want('{')
	if r.is('}') {
		return
	}
	seen := make([]string, 0, 8)
	for r.ok {
		k := r.str()
		r.want(':')
		if !r.ok || slices.Contains(seen, k) || !member(k) {
			r.ok = false
			return
		}
		seen = append(seen, k)
		if r.is('}') {
			return
		}
		r.want(',')
	}
}

// null consumes a null when it comes next.
func (r *jr) null() bool {
	r.ws()
	if r.ok && len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// array reads an array, calling elem to read each element.
func (r *jr) array(elem func()) {
	r.want('[')
	if r.is(']') {
		return
	}
	for r.ok {
		elem()
		if r.is(']') {
			return
		}
		r.want(',')
	}
}

// end checks that nothing but white space follows.
func (r *jr) end() bool {
	r.ws()
	return r.ok && r.i == len(r.b)
}

// encodeClaimsDoc writes claims.json as json.MarshalIndent(doc, "", "  ").
func encodeClaimsDoc(doc claimsDoc) ([]byte, error) {
	w := &jw{b: make([]byte, 0, 128+160*(len(doc.Claims)+len(doc.Lost)))}
	w.open('{')
	w.str("plan", doc.Plan)
	w.key("claims")
	if doc.Claims == nil {
		w.b = append(w.b, "null"...)
	} else {
		claimsArray(w, doc.Claims)
	}
	if doc.LastToken != 0 {
		w.int("last_token", doc.LastToken)
	}
	if len(doc.Lost) > 0 {
		w.key("lost")
		claimsArray(w, doc.Lost)
	}
	w.close('}')
	if w.bad {
		return json.MarshalIndent(doc, "", "  ")
	}
	return w.b, nil
}

func claimsArray(w *jw, cs []claimJSON) {
	w.open('[')
	for _, c := range cs {
		w.next()
		w.open('{')
		w.str("task", c.Task)
		w.str("agent", c.Agent)
		w.time("acquired", c.Acquired)
		w.time("expires", c.Expires)
		w.time("heartbeat", c.Heartbeat)
		if c.Token != 0 {
			w.int("token", c.Token)
		}
		if c.Place != "" {
			w.str("place", c.Place)
		}
		w.close('}')
	}
	w.close(']')
}

// decodeClaimsDoc reads claims.json; ok is false for a layout the scanner
// does not take.
func decodeClaimsDoc(data []byte) (doc claimsDoc, ok bool) {
	r := newJR(data)
	r.object(func(k string) bool {
		switch k {
		case "plan":
			doc.Plan = r.str()
		case "claims":
			doc.Claims = nil
			if !r.null() {
				doc.Claims = readClaimsArray(r)
			}
		case "last_token":
			doc.LastToken = r.int()
		case "lost":
			doc.Lost = nil
			if !r.null() {
				doc.Lost = readClaimsArray(r)
			}
		default:
			return false
		}
		return true
	})
	return doc, r.end()
}

func readClaimsArray(r *jr) []claimJSON {
	out := []claimJSON{}
	r.array(func() {
		var c claimJSON
		r.object(func(k string) bool {
			switch k {
			case "task":
				c.Task = r.str()
			case "agent":
				c.Agent = r.str()
			case "acquired":
				c.Acquired = r.time()
			case "expires":
				c.Expires = r.time()
			case "heartbeat":
				c.Heartbeat = r.time()
			case "token":
				c.Token = r.int()
			case "place":
				c.Place = r.str()
			default:
				return false
			}
			return true
		})
		out = append(out, c)
	})
	return out
}

// encodeWorktreesDoc writes worktrees.json as json.MarshalIndent does.
func encodeWorktreesDoc(doc worktreesDoc) ([]byte, error) {
	w := &jw{b: make([]byte, 0, 64+200*(len(doc.Worktrees)+len(doc.Checkouts)))}
	w.open('{')
	w.key("worktrees")
	if doc.Worktrees == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.open('[')
		for _, t := range doc.Worktrees {
			w.next()
			w.open('{')
			if t.Task != 0 {
				w.str("task", strconv.FormatInt(int64(t.Task), 10))
			}
			w.str("path", t.Path)
			if t.Branch != "" {
				w.str("branch", t.Branch)
			}
			w.str("base_sha", t.BaseSHA)
			if t.LastCommit != "" {
				w.str("last_commit", t.LastCommit)
			}
			w.time("created", t.Created)
			if t.Adopted {
				w.bool("adopted", true)
			}
			w.close('}')
		}
		w.close(']')
	}
	if len(doc.Checkouts) > 0 {
		w.key("checkouts")
		w.open('[')
		for _, k := range doc.Checkouts {
			w.next()
			w.open('{')
			w.str("task", strconv.FormatInt(int64(k.Task), 10))
			w.str("path", k.Path)
			w.str("head", k.Head)
			w.time("claimed", k.Claimed)
			w.close('}')
		}
		w.close(']')
	}
	w.close('}')
	if w.bad {
		return json.MarshalIndent(doc, "", "  ")
	}
	return w.b, nil
}

// decodeWorktreesDoc reads worktrees.json; ok is false for a layout the
// scanner does not take.
func decodeWorktreesDoc(data []byte) (doc worktreesDoc, ok bool) {
	r := newJR(data)
	task := func() domain.TaskID { return domain.TaskID(r.quotedInt()) }
	r.object(func(k string) bool {
		switch k {
		case "worktrees":
			doc.Worktrees = nil
			if r.null() {
				return true
			}
			doc.Worktrees = []Worktree{}
			r.array(func() {
				var t Worktree
				r.object(func(k string) bool {
					switch k {
					case "task":
						t.Task = task()
					case "path":
						t.Path = r.str()
					case "branch":
						t.Branch = r.str()
					case "base_sha":
						t.BaseSHA = r.str()
					case "last_commit":
						t.LastCommit = r.str()
					case "created":
						t.Created = r.time()
					case "adopted":
						t.Adopted = r.bool()
					default:
						return false
					}
					return true
				})
				doc.Worktrees = append(doc.Worktrees, t)
			})
		case "checkouts":
			doc.Checkouts = nil
			if r.null() {
				return true
			}
			doc.Checkouts = []Checkout{}
			r.array(func() {
				var c Checkout
				r.object(func(k string) bool {
					switch k {
					case "task":
						c.Task = task()
					case "path":
						c.Path = r.str()
					case "head":
						c.Head = r.str()
					case "claimed":
						c.Claimed = r.time()
					default:
						return false
					}
					return true
				})
				doc.Checkouts = append(doc.Checkouts, c)
			})
		default:
			return false
		}
		return true
	})
	return doc, r.end()
}

// encodeHeld writes held.json as json.MarshalIndent does.
func encodeHeld(hs []Held) ([]byte, error) {
	if hs == nil {
		return []byte("null"), nil
	}
	w := &jw{b: make([]byte, 0, 16+150*len(hs))}
	w.open('[')
	for _, h := range hs {
		w.next()
		w.open('{')
		w.str("task", strconv.FormatInt(int64(h.Task), 10))
		w.str("agent", h.Agent)
		w.str("place", h.Place)
		w.int("token", h.Token)
		w.time("at", h.At)
		w.close('}')
	}
	w.close(']')
	if w.bad {
		return json.MarshalIndent(hs, "", "  ")
	}
	return w.b, nil
}

// decodeHeld reads held.json; ok is false for a layout the scanner does
// not take.
func decodeHeld(data []byte) (hs []Held, ok bool) {
	r := newJR(data)
	if r.null() {
		return nil, r.end()
	}
	hs = []Held{}
	r.array(func() {
		var h Held
		r.object(func(k string) bool {
			switch k {
			case "task":
				h.Task = domain.TaskID(r.quotedInt())
			case "agent":
				h.Agent = r.str()
			case "place":
				h.Place = r.str()
			case "token":
				h.Token = r.int()
			case "at":
				h.At = r.time()
			default:
				return false
			}
			return true
		})
		hs = append(hs, h)
	})
	return hs, r.end()
}

// encodeCheckoutLine writes one line of the checkout log, as json.Marshal
// writes a Checkout.
func encodeCheckoutLine(k Checkout) ([]byte, error) {
	if y := k.Claimed.Year(); y < 0 || y > 9999 {
		b, err := json.Marshal(k)
		return append(b, '\n'), err
	}
	b := make([]byte, 0, 160)
	b = append(b, `{"task":"`...)
	b = strconv.AppendInt(b, int64(k.Task), 10)
	b = append(b, `","path":`...)
	b = appendJSONString(b, k.Path)
	b = append(b, `,"head":`...)
	b = appendJSONString(b, k.Head)
	b = append(b, `,"claimed":"`...)
	b = k.Claimed.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"', '}', '\n'), nil
}
