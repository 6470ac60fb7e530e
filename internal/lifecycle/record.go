package lifecycle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// The records' form in state.json's "lifecycle" field: an object keyed by
// task id (in numeric order), each record
//
//	{"state":"quality_review","since":"2026-03-01T09:40:00Z","created":"2026-03-01T09:00:00Z",
//	 "failures":{"quality_review":1},"cto_attempts":1,"escalated_from":"testing",
//	 "time":{"pending":0,"assigned":0,"planning":0,"validated":0,"in_progress":1800,"testing":60}}
//
// agent (the agent a claim assigned it to, kept until it returns to
// pending), head (HEAD when the task entered committing, kept while it is there),
// warned (the highest timeout level logged since it entered its state) and
// failures, cto_attempts, escalated_from and time are left out when empty;
// time holds whole seconds per state entered and left (zero included: it
// says the state was entered). Encode writes one canonical byte form, so a
// record that goes through Decode and Encode comes out unchanged, and the
// state.json a replay of the log rebuilds is byte for byte the written one.

// record is one task's JSON form.
type record struct {
	State         State             `json:"state"`
	Since         string            `json:"since"`
	Created       string            `json:"created"`
	Failures      map[State]int     `json:"failures,omitempty"`
	CTOAttempts   int               `json:"cto_attempts,omitempty"`
	EscalatedFrom State             `json:"escalated_from,omitempty"`
	Time          map[State]float64 `json:"time,omitempty"`
	Head          string            `json:"head,omitempty"`
	Warned        string            `json:"warned,omitempty"`
	Agent         string            `json:"agent,omitempty"`
}

// Encode writes the records as state.json's "lifecycle" object, in
// canonical form; nil when there are none.
func Encode(tasks map[domain.TaskID]Task) []byte {
	if len(tasks) == 0 {
		return nil
	}
	ids := make([]domain.TaskID, 0, len(tasks))
	for id := range tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(id.String()))
		b.WriteByte(':')
		encodeTask(&b, tasks[id])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// EncodeTask writes one record as Encode writes it inside the object.
func EncodeTask(t Task) []byte {
	var b bytes.Buffer
	encodeTask(&b, t)
	return b.Bytes()
}

func encodeTask(b *bytes.Buffer, t Task) {
	b.WriteString(`{"state":`)
	quote(b, string(t.State))
	b.WriteString(`,"since":`)
	quote(b, stamp(t.Since.UTC()))
	b.WriteString(`,"created":`)
	quote(b, stamp(t.Created.UTC()))
	if len(t.Failures) > 0 {
		b.WriteString(`,"failures":`)
		encodeCounts(b, t.Failures, func(n int) string { return strconv.Itoa(n) })
	}
	if t.CTOAttempts != 0 {
		b.WriteString(`,"cto_attempts":` + strconv.Itoa(t.CTOAttempts))
	}
	if t.EscalatedFrom != "" {
		b.WriteString(`,"escalated_from":`)
		quote(b, string(t.EscalatedFrom))
	}
	if len(t.Entered) > 0 {
		b.WriteString(`,"time":`)
		encodeCounts(b, t.Entered, func(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) })
	}
	if t.Head != "" {
		b.WriteString(`,"head":`)
		quote(b, t.Head)
	}
	if t.Warned != LevelOK {
		b.WriteString(`,"warned":`)
		quote(b, t.Warned.String())
	}
	if t.Agent != "" {
		b.WriteString(`,"agent":`)
		quote(b, t.Agent)
	}
	b.WriteByte('}')
}

// encodeCounts writes a state-keyed map: known states in machine order,
// then any others (a hand-edited record) by name.
func encodeCounts[V any](b *bytes.Buffer, m map[State]V, num func(V) string) {
	keys := make([]State, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y State) int {
		if c := x.index() - y.index(); c != 0 {
			return c
		}
		if x < y {
			return -1
		}
		if x > y {
			return 1
		}
		return 0
	})
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		quote(b, string(k))
		b.WriteByte(':')
		b.WriteString(num(m[k]))
	}
	b.WriteByte('}')
}

// quote writes s as a JSON string, as json.Marshal writes it: a string
// of plain characters (states, times, agent names) as it is, any other by
// json.Marshal (its escapes).
func quote(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			b.Write(q)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// Decode reads state.json's "lifecycle" object. It checks the form only
// (task ids, types, times); what a record says is for Check to judge, so
// that validation can report a hand-edited record instead of refusing it.
// Empty input (no field) is no records.
func Decode(data []byte) (map[domain.TaskID]Task, error) {
	out := map[domain.TaskID]Task{}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return out, nil
	}
	if recs, ok := decoded.get(data); ok {
		return recs, nil
	}
	recs, ok := decodeScan(data)
	if !ok {
		var err error
		if recs, err = decodeJSON(data); err != nil {
			return nil, err
		}
	}
	decoded.put(data, recs)
	return recs, nil
}

// decoded holds the last lifecycle objects Decode read: one command reads
// the same records several times (what a move finds, what it implies, the
// waves before and after it) and gets a copy instead of a second parse.
var decoded decodeMemo

type decodeMemo struct {
	mu   sync.Mutex
	ents [2]memoEntry
	next int
}

type memoEntry struct {
	data []byte
	recs map[domain.TaskID]Task
}

// get returns a copy of the records decoded from exactly data.
func (m *decodeMemo) get(data []byte) (map[domain.TaskID]Task, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.ents {
		if e.recs != nil && bytes.Equal(e.data, data) {
			return cloneRecords(e.recs), true
		}
	}
	return nil, false
}

// put keeps a copy of recs as the decoding of data.
func (m *decodeMemo) put(data []byte, recs map[domain.TaskID]Task) {
	e := memoEntry{data: bytes.Clone(data), recs: cloneRecords(recs)}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ents[m.next] = e
	m.next = (m.next + 1) % len(m.ents)
}

// cloneRecords copies records deep enough that a caller changing its copy
// (a count, a time entered) leaves the other alone.
func cloneRecords(recs map[domain.TaskID]Task) map[domain.TaskID]Task {
	out := make(map[domain.TaskID]Task, len(recs))
	for id, t := range recs {
		t.Failures = maps.Clone(t.Failures)
		t.Entered = maps.Clone(t.Entered)
		out[id] = t
	}
	return out
}

// decodeJSON is Decode by encoding/json: any form, with its errors.
func decodeJSON(data []byte) (map[domain.TaskID]Task, error) {
	out := map[domain.TaskID]Task{}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("lifecycle: %v", err)
	}
	for k, v := range raw {
		id, err := domain.ParseTaskID(k)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("lifecycle: key %q is not a task id", k)
		}
		t, err := decodeTask(id, v)
		if err != nil {
			return nil, fmt.Errorf("lifecycle.%s: %v", k, err)
		}
		out[id] = t
	}
	return out, nil
}

func decodeTask(id domain.TaskID, v json.RawMessage) (Task, error) {
	var r record
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Task{}, err
	}
	t := Task{ID: id, State: r.State, CTOAttempts: r.CTOAttempts, EscalatedFrom: r.EscalatedFrom, Head: r.Head, Agent: r.Agent,
		Failures: map[State]int{}, Entered: make(map[State]time.Duration, len(r.Time))}
	var err error
	if r.Warned != "" {
		if t.Warned, err = ParseLevel(r.Warned); err != nil || t.Warned == LevelOK {
			return Task{}, fmt.Errorf("warned: %q is not a timeout level (warning, alert or escalate)", r.Warned)
		}
	}
	if t.Since, err = parseStamp("since", r.Since); err != nil {
		return Task{}, err
	}
	if t.Created, err = parseStamp("created", r.Created); err != nil {
		return Task{}, err
	}
	for s, n := range r.Failures {
		t.Failures[s] = n
	}
	for s, sec := range r.Time {
		if sec != float64(int64(sec)) {
			return Task{}, fmt.Errorf("time.%s: %v is not a whole number of seconds", s, sec)
		}
		t.Entered[s] = time.Duration(sec) * time.Second
	}
	return t, nil
}

// parseStamp reads an RFC 3339 time as the log keeps it.
func parseStamp(field, s string) (time.Time, error) {
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time", field, s)
	}
	return at.UTC(), nil
}
