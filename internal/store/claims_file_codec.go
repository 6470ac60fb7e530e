package store

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/jsonscan"
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
	r := jsonscan.New(data)
	r.Object(func(k string) bool {
		switch k {
		case "plan":
			doc.Plan = r.Str()
		case "claims":
			doc.Claims = nil
			if !r.Null() {
				doc.Claims = readClaimsArray(r)
			}
		case "last_token":
			doc.LastToken = r.Int()
		case "lost":
			doc.Lost = nil
			if !r.Null() {
				doc.Lost = readClaimsArray(r)
			}
		default:
			return false
		}
		return true
	})
	return doc, r.End()
}

func readClaimsArray(r *jsonscan.Reader) []claimJSON {
	out := []claimJSON{}
	r.Array(func() {
		var c claimJSON
		r.Object(func(k string) bool {
			switch k {
			case "task":
				c.Task = r.Str()
			case "agent":
				c.Agent = r.Str()
			case "acquired":
				c.Acquired = r.Time()
			case "expires":
				c.Expires = r.Time()
			case "heartbeat":
				c.Heartbeat = r.Time()
			case "token":
				c.Token = r.Int()
			case "place":
				c.Place = r.Str()
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
	r := jsonscan.New(data)
	task := func() domain.TaskID { return domain.TaskID(r.QuotedInt()) }
	r.Object(func(k string) bool {
		switch k {
		case "worktrees":
			doc.Worktrees = nil
			if r.Null() {
				return true
			}
			doc.Worktrees = []Worktree{}
			r.Array(func() {
				var t Worktree
				r.Object(func(k string) bool {
					switch k {
					case "task":
						t.Task = task()
					case "path":
						t.Path = r.Str()
					case "branch":
						t.Branch = r.Str()
					case "base_sha":
						t.BaseSHA = r.Str()
					case "last_commit":
						t.LastCommit = r.Str()
					case "created":
						t.Created = r.Time()
					case "adopted":
						t.Adopted = r.Bool()
					default:
						return false
					}
					return true
				})
				doc.Worktrees = append(doc.Worktrees, t)
			})
		case "checkouts":
			doc.Checkouts = nil
			if r.Null() {
				return true
			}
			doc.Checkouts = []Checkout{}
			r.Array(func() {
				var c Checkout
				r.Object(func(k string) bool {
					switch k {
					case "task":
						c.Task = task()
					case "path":
						c.Path = r.Str()
					case "head":
						c.Head = r.Str()
					case "claimed":
						c.Claimed = r.Time()
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
	return doc, r.End()
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
	r := jsonscan.New(data)
	if r.Null() {
		return nil, r.End()
	}
	hs = []Held{}
	r.Array(func() {
		var h Held
		r.Object(func(k string) bool {
			switch k {
			case "task":
				h.Task = domain.TaskID(r.QuotedInt())
			case "agent":
				h.Agent = r.Str()
			case "place":
				h.Place = r.Str()
			case "token":
				h.Token = r.Int()
			case "at":
				h.At = r.Time()
			default:
				return false
			}
			return true
		})
		hs = append(hs, h)
	})
	return hs, r.End()
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
