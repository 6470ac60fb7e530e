// Package state reads and writes a plan's state.json (docs/state-machine.md#statejson): tolerant
// decoding, unknown fields preserved, atomic replacement under a sidecar lock.
package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/taskie-dev/taskie/internal/domain"
)

// FileName is the state file inside a plan directory.
const FileName = "state.json"

// State is the current state of one plan. Pointers mark fields that may be
// null in the file; Extra keeps every field taskie does not know so that a
// rewrite never drops it. The values are typed; the file's form of them
// (current_task "3" or 3, nulls) is handled by Decode and Fields only.
type State struct {
	MaxReviews       int
	CurrentTask      *domain.TaskID
	Phase            domain.Phase
	PhaseIteration   *int
	NextPhase        *domain.Phase
	ReviewModel      domain.Model
	ConsecutiveClean int
	TDD              bool
	Enabled          *bool
	SessionID        string
	Worktree         string
	BaseSHA          string
	LastCommit       string
	// NeedsHuman stops a review cycle that does not converge until a
	// human decides (taskie resume clears it).
	NeedsHuman bool
	// Lifecycle holds the tasks' lifecycle records (package lifecycle
	// owns their form), "" when no task has one yet.
	Lifecycle LifecycleJSON
	// FailedTasks lists the tasks that failed past their retries.
	FailedTasks []domain.TaskID

	Extra map[string]json.RawMessage
}

// LifecycleJSON is the "lifecycle" object of state.json, kept as written:
// package lifecycle owns its form.
type LifecycleJSON []byte

// New returns the state of a fresh plan.
func New() *State {
	return &State{MaxReviews: domain.DefaultMaxReviews, Phase: domain.NewPlan, ReviewModel: domain.DefaultModels()[0]}
}

// IsEnabled reports whether automation is on (the default).
func (s *State) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Iteration returns phase_iteration, 0 when null.
func (s *State) Iteration() int {
	if s.PhaseIteration == nil {
		return 0
	}
	return *s.PhaseIteration
}

// Next returns next_phase, "" when null.
func (s *State) Next() domain.Phase {
	if s.NextPhase == nil {
		return ""
	}
	return *s.NextPhase
}

// Task returns current_task, 0 when null (or "").
func (s *State) Task() domain.TaskID {
	if s.CurrentTask == nil {
		return 0
	}
	return *s.CurrentTask
}

// Opt returns a pointer to v, or nil for the zero value (a JSON null): no
// next_phase is "", no current_task 0.
func Opt[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// Int returns a pointer to v.
func Int(v int) *int { return &v }

// Clone returns a deep copy.
func (s *State) Clone() *State {
	c := *s
	if s.CurrentTask != nil {
		v := *s.CurrentTask
		c.CurrentTask = &v
	}
	if s.NextPhase != nil {
		v := *s.NextPhase
		c.NextPhase = &v
	}
	if s.PhaseIteration != nil {
		c.PhaseIteration = Int(*s.PhaseIteration)
	}
	if s.Enabled != nil {
		v := *s.Enabled
		c.Enabled = &v
	}
	c.Lifecycle = append(LifecycleJSON(nil), s.Lifecycle...)
	if s.Lifecycle == nil {
		c.Lifecycle = nil
	}
	c.FailedTasks = append([]domain.TaskID(nil), s.FailedTasks...)
	c.Extra = make(map[string]json.RawMessage, len(s.Extra))
	for k, v := range s.Extra {
		c.Extra[k] = v
	}
	return &c
}

// SyntaxError is malformed JSON, located by line and column.
type SyntaxError struct {
	Path      string
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: malformed JSON: %s", e.Path, e.Line, e.Col, e.Msg)
}

// FieldError is a field with a value of the wrong type or out of range.
type FieldError struct {
	Path, Field, Msg string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: field %q: %s", e.Path, e.Field, e.Msg)
}

// decodeHook, when set (SetDecodeHook), is told of every Decode: tests
// count a command's decodes with it; unset it costs one atomic load.
var decodeHook atomic.Pointer[func(path string)]

// SetDecodeHook makes fn see the path of every Decode until restore is
// called. For tests: fn must be safe for concurrent use. Not in a _test.go
// file: the hook's tests, in another package, count a stop's decodes with it.
func SetDecodeHook(fn func(path string)) (restore func()) {
	old := decodeHook.Swap(&fn)
	return func() { decodeHook.Store(old) }
}

// Decode parses state.json content. path is only used in error messages.
// Numbers are accepted where strings are expected and the reverse.
func Decode(path string, data []byte) (*State, error) {
	if fn := decodeHook.Load(); fn != nil {
		(*fn)(path)
	}
	raw, err := DecodeObject(path, data)
	if err != nil {
		return nil, err
	}
	s := New()
	s.Extra = map[string]json.RawMessage{}
	for k, v := range raw {
		if err := s.setField(k, v); err != nil {
			return nil, &FieldError{Path: path, Field: k, Msg: err.Error()}
		}
	}
	return s, nil
}

// DecodeObject parses data as exactly one JSON object and returns its
// fields undecoded. Malformed JSON, data after the object and a top-level
// value that is not an object are a *SyntaxError with the line and column;
// path is only used in the message. Every JSON file taskie reads
// (state.json, config.json) reports bad content this way.
func DecodeObject(path string, data []byte) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	// The common case, one well-formed value, without a stream decoder's
	// buffer (the hook reads the state of every plan at every stop); the
	// decoder below says where anything else goes wrong.
	if json.Unmarshal(data, &raw) == nil && raw != nil {
		return raw, nil
	}
	raw = nil
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, syntaxError(path, data, err)
	}
	if dec.More() {
		off := int(dec.InputOffset())
		line, col := position(data, off)
		return nil, &SyntaxError{Path: path, Line: line, Col: col, Msg: "unexpected data after the JSON object"}
	}
	if raw == nil {
		return nil, &SyntaxError{Path: path, Line: 1, Col: 1, Msg: "expected a JSON object, found null"}
	}
	return raw, nil
}

func syntaxError(path string, data []byte, err error) error {
	off := len(data)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1 // Offset counts the offending byte
	case errors.As(err, &te):
		// A top-level value that is not an object: point at its start.
		off = len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		line, col := position(data, off)
		return &SyntaxError{Path: path, Line: line, Col: col, Msg: "expected a JSON object"}
	}
	line, col := position(data, off)
	msg := err.Error()
	if strings.Contains(msg, "EOF") {
		msg = "unexpected end of file"
	}
	return &SyntaxError{Path: path, Line: line, Col: col, Msg: msg}
}

// position turns a byte offset into 1-based line and column.
func position(data []byte, off int) (int, int) {
	off = max(0, min(off, len(data)))
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func (s *State) setField(k string, v json.RawMessage) error {
	set, ok := fieldSetter(k)
	if !ok {
		s.Extra[k] = v
		return nil
	}
	return set(s, v)
}

// fieldSetters decode each known field of state.json loosely (a number
// written as a string, a null where a default applies).
var fieldSetters = []struct {
	key string
	fn  func(s *State, v json.RawMessage) error
}{
	{"max_reviews", func(s *State, v json.RawMessage) error { return setCount(&s.MaxReviews, v) }},
	{"consecutive_clean", func(s *State, v json.RawMessage) error { return setCount(&s.ConsecutiveClean, v) }},
	{"current_task", func(s *State, v json.RawMessage) (err error) {
		s.CurrentTask, err = looseTask(v)
		return err
	}},
	{"phase", func(s *State, v json.RawMessage) error { return setString(&s.Phase, v) }},
	{"phase_iteration", func(s *State, v json.RawMessage) (err error) {
		s.PhaseIteration, err = looseInt(v)
		return err
	}},
	{"next_phase", func(s *State, v json.RawMessage) error {
		p, err := looseString(v)
		s.NextPhase = (*domain.Phase)(p)
		return err
	}},
	{"review_model", func(s *State, v json.RawMessage) error { return setString(&s.ReviewModel, v) }},
	{"tdd", func(s *State, v json.RawMessage) error { return setBool(&s.TDD, v) }},
	{"needs_human", func(s *State, v json.RawMessage) error { return setBool(&s.NeedsHuman, v) }},
	{"enabled", func(s *State, v json.RawMessage) (err error) {
		s.Enabled, err = looseBool(v)
		return err
	}},
	{"session_id", func(s *State, v json.RawMessage) error { return setStr(&s.SessionID, v) }},
	{"worktree", func(s *State, v json.RawMessage) error { return setStr(&s.Worktree, v) }},
	{"base_sha", func(s *State, v json.RawMessage) error { return setStr(&s.BaseSHA, v) }},
	{"last_commit", func(s *State, v json.RawMessage) error { return setStr(&s.LastCommit, v) }},
	{"lifecycle", (*State).setLifecycle},
	{"failed_tasks", (*State).setFailedTasks},
}

// setCount sets a count that must not be negative; null keeps it.
func setCount(dst *int, v json.RawMessage) error {
	n, err := looseInt(v)
	if err != nil || n == nil {
		return err
	}
	if *n < 0 {
		return fmt.Errorf("must be ≥ 0, got %d", *n)
	}
	*dst = *n
	return nil
}

// setString sets a string-like field; null keeps it.
func setString[T ~string](dst *T, v json.RawMessage) error {
	p, err := looseString(v)
	if err == nil && p != nil {
		*dst = T(*p)
	}
	return err
}

// setStr sets a string field; null empties it.
func setStr(dst *string, v json.RawMessage) (err error) {
	*dst, err = looseStr(v)
	return err
}

// setBool sets a flag; null keeps it.
func setBool(dst *bool, v json.RawMessage) error {
	b, err := looseBool(v)
	if err == nil && b != nil {
		*dst = *b
	}
	return err
}

func (s *State) setLifecycle(v json.RawMessage) error {
	t := bytes.TrimSpace(v)
	switch {
	case string(t) == "null":
		s.Lifecycle = nil
	case len(t) > 0 && t[0] == '{':
		s.Lifecycle = append(LifecycleJSON(nil), t...)
	default:
		return fmt.Errorf("expected an object or null, got %s", kind(t))
	}
	return nil
}

func (s *State) setFailedTasks(v json.RawMessage) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return fmt.Errorf("expected a list of task ids, got %s", kind(bytes.TrimSpace(v)))
	}
	s.FailedTasks = nil
	for _, r := range raw {
		id, err := looseTask(r)
		if err != nil {
			return err
		}
		if id != nil {
			s.FailedTasks = append(s.FailedTasks, *id)
		}
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func looseStr(v json.RawMessage) (string, error) {
	p, err := looseString(v)
	return deref(p), err
}

// looseString accepts a string, a number (kept as written) or null.
func looseString(v json.RawMessage) (*string, error) {
	t := bytes.TrimSpace(v)
	if string(t) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(t, &s); err == nil {
		return &s, nil
	}
	var n json.Number
	if err := json.Unmarshal(t, &n); err == nil {
		str := n.String()
		return &str, nil
	}
	return nil, fmt.Errorf("expected a string or null, got %s", kind(t))
}

// looseTask accepts a task id as a string ("3") or a number (3), or null.
// An empty string is no task as well, kept as a pointer to 0 so that a
// rewrite writes "" back; anything else is an error.
func looseTask(v json.RawMessage) (*domain.TaskID, error) {
	p, err := looseString(v)
	if err != nil || p == nil {
		return nil, err
	}
	var id domain.TaskID
	if *p != "" {
		if id, err = domain.ParseTaskID(*p); err != nil {
			return nil, err
		}
	}
	return &id, nil
}

// looseInt accepts an integer, a string holding one, or null.
func looseInt(v json.RawMessage) (*int, error) {
	t := bytes.TrimSpace(v)
	if string(t) == "null" {
		return nil, nil
	}
	var n int
	if err := json.Unmarshal(t, &n); err == nil {
		return &n, nil
	}
	var s string
	if err := json.Unmarshal(t, &s); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			return &n, nil
		}
		return nil, fmt.Errorf("expected an integer, got %q", s)
	}
	return nil, fmt.Errorf("expected an integer or null, got %s", kind(t))
}

// looseBool accepts true/false, "true"/"false", or null.
func looseBool(v json.RawMessage) (*bool, error) {
	t := bytes.TrimSpace(v)
	if string(t) == "null" {
		return nil, nil
	}
	var b bool
	if err := json.Unmarshal(t, &b); err == nil {
		return &b, nil
	}
	var s string
	if err := json.Unmarshal(t, &s); err == nil {
		if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return &b, nil
		}
		return nil, fmt.Errorf("expected true or false, got %q", s)
	}
	return nil, fmt.Errorf("expected true or false, got %s", kind(t))
}

func kind(t []byte) string {
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// Encode renders the state as indented JSON: known fields in a fixed order,
// optional ones only when set, then unknown fields sorted by name.
func (s *State) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	// Keys are JSON strings: Go's %q writes "\x7f" or "\a", which JSON rejects.
	key := json.NewEncoder(&b)
	key.SetEscapeHTML(false)
	for i, f := range s.Fields() {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  ")
		_ = key.Encode(f.Key)   // a string always encodes
		b.Truncate(b.Len() - 1) // Encode ends with a newline
		fmt.Fprintf(&b, ": %s", f.Value)
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

// fieldSetter finds the entry of key in fieldSetters: a table the linker lays out, so
// nothing is built at start.
func fieldSetter(key string) (func(s *State, v json.RawMessage) error, bool) {
	for _, e := range fieldSetters {
		if e.key == key {
			return e.fn, true
		}
	}
	return nil, false
}
