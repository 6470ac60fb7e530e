package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Field is one key of state.json with its compact JSON value.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Fields lists the fields Encode writes, in the same order: known fields
// first (optional ones only when set), then unknown fields by name.
func (s *State) Fields() []Field {
	var out []Field
	put := func(k string, v any) {
		val, _ := json.Marshal(v)
		out = append(out, Field{k, val})
	}
	put("max_reviews", s.MaxReviews)
	put("current_task", taskText(s.CurrentTask))
	put("phase", s.Phase)
	put("phase_iteration", s.PhaseIteration)
	put("next_phase", s.NextPhase)
	put("review_model", s.ReviewModel)
	put("consecutive_clean", s.ConsecutiveClean)
	put("tdd", s.TDD)
	if s.Enabled != nil {
		put("enabled", *s.Enabled)
	}
	for _, f := range []struct{ k, v string }{{"session_id", s.SessionID}, {"worktree", s.Worktree}, {"base_sha", s.BaseSHA}, {"last_commit", s.LastCommit}} {
		if f.v != "" {
			put(f.k, f.v)
		}
	}
	if s.NeedsHuman {
		put("needs_human", true)
	}
	if len(s.FailedTasks) > 0 {
		ids := make([]string, len(s.FailedTasks))
		for i, id := range s.FailedTasks {
			ids[i] = id.String()
		}
		put("failed_tasks", ids)
	}
	if len(s.Lifecycle) > 0 {
		var c bytes.Buffer
		v := []byte(s.Lifecycle)
		if json.Compact(&c, v) == nil {
			v = c.Bytes()
		}
		out = append(out, Field{"lifecycle", v})
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s.Extra[k]
		var c bytes.Buffer
		if json.Compact(&c, v) == nil {
			v = c.Bytes()
		}
		out = append(out, Field{k, v})
	}
	return out
}

// taskText is current_task as the file holds it: the string "3", or null.
// A pointer to 0 is a file that said "" and is written back so.
func taskText(t *domain.TaskID) *string {
	if t == nil {
		return nil
	}
	v := t.String()
	return &v
}

// Delta is a change of state.json as the event log records it: the fields
// that take a new value and the optional or unknown fields that go away.
// A lifecycle field present before and after is logged as the records
// that changed (Lifecycle: task id → record, null for one removed), not
// whole: it holds a record per task, and a commit that moves one task
// would otherwise log them all (a log growing with tasks × moves).
type Delta struct {
	Set       map[string]json.RawMessage `json:"set,omitempty"`
	Unset     []string                   `json:"unset,omitempty"`
	Lifecycle map[string]json.RawMessage `json:"lifecycle,omitempty"`
}

// Empty reports whether the delta changes nothing.
func (d Delta) Empty() bool { return len(d.Set) == 0 && len(d.Unset) == 0 && len(d.Lifecycle) == 0 }

// DiffOf returns the delta that turns old into cur; a nil old is a plan
// without state.json, so every field of cur is set.
func DiffOf(old, cur *State) Delta {
	var d Delta
	before := map[string]string{}
	var oldFields []Field
	if old != nil {
		oldFields = old.Fields()
		for _, f := range oldFields {
			before[f.Key] = string(f.Value)
		}
	}
	seen := map[string]bool{}
	for _, f := range cur.Fields() {
		seen[f.Key] = true
		if v, ok := before[f.Key]; !ok || v != string(f.Value) {
			if f.Key == "lifecycle" && ok {
				if patch, ok := lifecyclePatch([]byte(v), f.Value); ok {
					d.Lifecycle = patch
					continue
				}
			}
			if d.Set == nil {
				d.Set = map[string]json.RawMessage{}
			}
			d.Set[f.Key] = f.Value
		}
	}
	if old != nil {
		for _, f := range oldFields {
			if !seen[f.Key] {
				d.Unset = append(d.Unset, f.Key)
			}
		}
	}
	return d
}

// Full returns the delta that sets every field of s from nothing.
func Full(s *State) Delta { return DiffOf(nil, s) }

// Apply returns s with the delta applied; a nil s starts from New(). It is
// the one function that both writes state.json (the store applies the
// change's delta) and replays the event log, so a replay rebuilds the file
// exactly.
func Apply(s *State, d Delta) (*State, error) {
	var n *State
	if s == nil {
		n = New()
		n.Extra = map[string]json.RawMessage{}
	} else {
		n = s.Clone()
	}
	for _, k := range d.Unset {
		n.unset(k)
	}
	keys := make([]string, 0, len(d.Set))
	for k := range d.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := n.setField(k, d.Set[k]); err != nil {
			return nil, &FieldError{Path: "event", Field: k, Msg: err.Error()}
		}
	}
	if len(d.Lifecycle) > 0 {
		merged, err := mergeLifecycle(n.Lifecycle, d.Lifecycle)
		if err != nil {
			return nil, &FieldError{Path: "event", Field: "lifecycle", Msg: err.Error()}
		}
		n.Lifecycle = merged
	}
	return n, nil
}

// lifecyclePatch returns the records of cur that differ from old's (null
// for a task old has and cur has not), both compact lifecycle objects;
// false when that cannot rebuild cur byte for byte (a field that is no
// object, records out of order), and the whole field is logged instead.
func lifecyclePatch(old, cur []byte) (map[string]json.RawMessage, bool) {
	a, b := recordsOf(old), recordsOf(cur)
	if a == nil || b == nil {
		return nil, false
	}
	patch := map[string]json.RawMessage{}
	for k, v := range b {
		if w, ok := a[k]; !ok || !bytes.Equal(w, v) {
			patch[k] = v
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			patch[k] = json.RawMessage("null")
		}
	}
	if len(patch) == 0 {
		return nil, false
	}
	if got, err := mergeLifecycle(old, patch); err != nil || !bytes.Equal(got, cur) {
		return nil, false
	}
	return patch, true
}

// mergeLifecycle applies a lifecycle patch to a lifecycle object (nil: no
// records yet): records set, null ones removed, written compact in task
// id order — the order the lifecycle package writes.
func mergeLifecycle(old LifecycleJSON, patch map[string]json.RawMessage) (LifecycleJSON, error) {
	recs := map[string]json.RawMessage{}
	// split: the old records are taskie's compact form, written as they are.
	split := false
	if t := bytes.TrimSpace(old); len(t) > 0 && string(t) != "null" {
		if recs = splitRecords(t); recs != nil {
			split = true
		} else {
			recs = map[string]json.RawMessage{}
			if err := json.Unmarshal(t, &recs); err != nil {
				return nil, fmt.Errorf("the lifecycle records do not read: %v", err)
			}
		}
	}
	for k, v := range patch {
		if t := bytes.TrimSpace(v); string(t) == "null" {
			delete(recs, k)
			continue
		} else if len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("record %q: expected an object or null, got %s", k, kind(t))
		}
		recs[k] = v
	}
	keys := make([]string, 0, len(recs))
	for k := range recs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return idLess(keys[i], keys[j]) })
	var b bytes.Buffer
	b.Grow(len(old) + 512)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if _, patched := patch[k]; split && !patched {
			b.WriteByte('"')
			b.WriteString(k)
			b.WriteString(`":`)
			b.Write(recs[k])
			continue
		}
		q, _ := json.Marshal(k)
		b.Write(q)
		b.WriteByte(':')
		if err := json.Compact(&b, recs[k]); err != nil {
			return nil, fmt.Errorf("record %q: %v", k, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// recordsOf reads a lifecycle object as its records by task id, raw; nil
// when it is no JSON object.
func recordsOf(data []byte) map[string]json.RawMessage {
	if recs := splitRecords(data); recs != nil {
		return recs
	}
	var recs map[string]json.RawMessage
	if json.Unmarshal(data, &recs) != nil {
		return nil
	}
	return recs
}

// splitRecords is json.Unmarshal of a lifecycle object into raw records,
// for the form taskie writes (compact, keys plain and in task id order,
// each record an object) without decoding every record: a commit that
// moves one task compares and merges the objects of all of them. Nil for
// any other form, which json.Unmarshal reads instead.
func splitRecords(data []byte) map[string]json.RawMessage {
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' || !json.Valid(data) {
		return nil
	}
	recs := map[string]json.RawMessage{}
	prev := ""
	for i := 1; i < len(data)-1; {
		// "key":
		if data[i] != '"' {
			return nil
		}
		j := i + 1
		for j < len(data) && data[j] != '"' {
			if c := data[j]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
				return nil
			}
			j++
		}
		key := string(data[i+1 : j])
		if j+2 >= len(data) || data[j+1] != ':' || data[j+2] != '{' || (prev != "" && !idLess(prev, key)) || key == "" {
			return nil
		}
		// the record: an object, to its closing brace
		end, ok := objectEnd(data, j+2)
		if !ok {
			return nil
		}
		recs[key] = data[j+2 : end]
		prev = key
		i = end
		if i < len(data)-1 {
			if data[i] != ',' {
				return nil
			}
			i++
		}
	}
	return recs
}

// objectEnd returns the index just past the object opening at data[i],
// in valid compact JSON; false when it finds no end or any whitespace.
func objectEnd(data []byte, i int) (int, bool) {
	depth, inStr := 0, false
	for ; i < len(data); i++ {
		c := data[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case ' ', '\t', '\n', '\r':
			return 0, false
		}
	}
	return 0, false
}

// idLess orders task ids numerically, anything else after them by name.
func idLess(x, y string) bool {
	a, errA := strconv.Atoi(x)
	b, errB := strconv.Atoi(y)
	switch {
	case errA == nil && errB == nil:
		return a < b
	case errA == nil || errB == nil:
		return errA == nil
	}
	return x < y
}

func (s *State) unset(k string) {
	switch k {
	case "enabled":
		s.Enabled = nil
	case "session_id":
		s.SessionID = ""
	case "worktree":
		s.Worktree = ""
	case "base_sha":
		s.BaseSHA = ""
	case "last_commit":
		s.LastCommit = ""
	case "needs_human":
		s.NeedsHuman = false
	case "lifecycle":
		s.Lifecycle = nil
	case "failed_tasks":
		s.FailedTasks = nil
	default:
		delete(s.Extra, k)
	}
}
