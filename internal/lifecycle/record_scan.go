package lifecycle

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/taskie-dev/taskie/internal/domain"
)

// decodeScan reads the lifecycle object as Encode writes it, without
// reflection: every command that reads a plan's state decodes every
// task's record, some of them several times (a claim's lifecycle move
// about six), and encoding/json took a claim about 1 ms per decode of a
// 200-task plan. ok is false for anything else (a hand-edited record:
// other keys, escapes, nulls, fractions, a key twice), which Decode then
// reads with encoding/json as before, with its errors.
func decodeScan(data []byte) (out map[domain.TaskID]Task, ok bool) {
	s := scan{b: data}
	out = map[domain.TaskID]Task{}
	if !s.is('{') {
		return nil, false
	}
	if s.is('}') {
		return out, s.end()
	}
	for {
		k, ok := s.str()
		if !ok || !s.is(':') {
			return nil, false
		}
		id, err := domain.ParseTaskID(k)
		if err != nil || id <= 0 {
			return nil, false
		}
		if _, dup := out[id]; dup {
			return nil, false
		}
		t, ok := s.record(id)
		if !ok {
			return nil, false
		}
		out[id] = t
		if s.is('}') {
			return out, s.end()
		}
		if !s.is(',') {
			return nil, false
		}
	}
}

type scan struct {
	b []byte
	i int
}

func (s *scan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\r' || s.b[s.i] == '\t') {
		s.i++
	}
}

func (s *scan) is(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// str reads a string without escapes, of valid UTF-8.
func (s *scan) str() (string, bool) {
	if !s.is('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			return string(raw), utf8.Valid(raw)
		case c == '\\' || c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

// int reads a JSON integer (no fraction, no exponent, no leading zero).
func (s *scan) int() (int64, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || (s.b[digits] == '0' && s.i-digits > 1) {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return n, err == nil
}

// counts reads a state-keyed object of integers.
func (s *scan) counts(put func(State, int64)) bool {
	if !s.is('{') {
		return false
	}
	if s.is('}') {
		return true
	}
	seen := map[string]bool{}
	for {
		k, ok := s.str()
		if !ok || seen[k] || !s.is(':') {
			return false
		}
		seen[k] = true
		n, ok := s.int()
		if !ok {
			return false
		}
		put(State(k), n)
		if s.is('}') {
			return true
		}
		if !s.is(',') {
			return false
		}
	}
}

// record reads one record, as decodeTask would.
func (s *scan) record(id domain.TaskID) (Task, bool) {
	t := Task{ID: id, Failures: map[State]int{}, Entered: map[State]time.Duration{}}
	var since, created, warned string
	seen := map[string]bool{}
	if !s.is('{') {
		return t, false
	}
	if s.is('}') {
		return s.finish(t, since, created, warned)
	}
	for {
		k, ok := s.str()
		if !ok || seen[k] || !s.is(':') {
			return t, false
		}
		seen[k] = true
		var v string
		switch k {
		case "state":
			v, ok = s.str()
			t.State = State(v)
		case "since":
			since, ok = s.str()
		case "created":
			created, ok = s.str()
		case "failures":
			ok = s.counts(func(st State, n int64) { t.Failures[st] = int(n) })
		case "cto_attempts":
			var n int64
			n, ok = s.int()
			t.CTOAttempts = int(n)
		case "escalated_from":
			v, ok = s.str()
			t.EscalatedFrom = State(v)
		case "time":
			ok = s.counts(func(st State, sec int64) {
				if sec > 1<<53 || sec < -(1<<53) {
					ok = false // encoding/json reads it as a float: left to it
				}
				t.Entered[st] = time.Duration(sec) * time.Second
			}) && ok
		case "head":
			t.Head, ok = s.str()
		case "warned":
			warned, ok = s.str()
		case "agent":
			t.Agent, ok = s.str()
		default:
			return t, false
		}
		if !ok {
			return t, false
		}
		if s.is('}') {
			return s.finish(t, since, created, warned)
		}
		if !s.is(',') {
			return t, false
		}
	}
}

// finish checks what decodeTask checks; a record it would refuse is left
// to it, for its error.
func (s *scan) finish(t Task, since, created, warned string) (Task, bool) {
	var err error
	if warned != "" {
		if t.Warned, err = ParseLevel(warned); err != nil || t.Warned == LevelOK {
			return t, false
		}
	}
	if t.Since, err = parseStamp("since", since); err != nil {
		return t, false
	}
	if t.Created, err = parseStamp("created", created); err != nil {
		return t, false
	}
	return t, true
}
