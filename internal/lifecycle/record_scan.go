package lifecycle

import (
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/jsonscan"
)

// decodeScan reads the lifecycle object as Encode writes it, without
// reflection: every command that reads a plan's state decodes every
// task's record, some of them several times (a claim's lifecycle move
// about six), and encoding/json took a claim about 1 ms per decode of a
// 200-task plan. ok is false for anything else (a hand-edited record:
// other keys, escapes, nulls, fractions, a key twice), which Decode then
// reads with encoding/json as before, with its errors.
func decodeScan(data []byte) (out map[domain.TaskID]Task, ok bool) {
	r := jsonscan.New(data)
	out = map[domain.TaskID]Task{}
	r.Object(func(k string) bool {
		id, err := domain.ParseTaskID(k)
		if err != nil || id <= 0 {
			return false
		}
		if _, dup := out[id]; dup { // "1" and "01"
			return false
		}
		t, ok := scanRecord(r, id)
		out[id] = t
		return ok
	})
	if !r.End() {
		return nil, false
	}
	return out, true
}

// counts reads a state-keyed object of integers.
func counts(r *jsonscan.Reader, put func(State, int64) bool) {
	r.Object(func(k string) bool { return put(State(k), r.Int()) })
}

// scanRecord reads one record, as decodeTask would.
func scanRecord(r *jsonscan.Reader, id domain.TaskID) (Task, bool) {
	t := Task{ID: id, Failures: map[State]int{}, Entered: map[State]time.Duration{}}
	var since, created, warned string
	r.Object(func(k string) bool {
		switch k {
		case "state":
			t.State = State(r.Str())
		case "since":
			since = r.Str()
		case "created":
			created = r.Str()
		case "failures":
			counts(r, func(st State, n int64) bool { t.Failures[st] = int(n); return true })
		case "cto_attempts":
			t.CTOAttempts = int(r.Int())
		case "escalated_from":
			t.EscalatedFrom = State(r.Str())
		case "time":
			counts(r, func(st State, sec int64) bool {
				t.Entered[st] = time.Duration(sec) * time.Second
				return sec <= 1<<53 && sec >= -(1<<53) // beyond, encoding/json reads a float: left to it
			})
		case "head":
			t.Head = r.Str()
		case "warned":
			warned = r.Str()
		case "agent":
			t.Agent = r.Str()
		default:
			return false
		}
		return true
	})
	if !r.OK() {
		return t, false
	}
	return finish(t, since, created, warned)
}

// finish checks what decodeTask checks; a record it would refuse is left
// to it, for its error.
func finish(t Task, since, created, warned string) (Task, bool) {
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
