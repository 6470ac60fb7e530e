package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Every kind of event events.jsonl holds, beside the ones above: the
// lifecycle's effects, the review ledger's, the claims' and the progress
// log's. Their payloads are the *Meta structs below; an event's meta is
// written with Meta and read back with MetaOf.
const (
	TaskCreated     = "TASK_CREATED"
	Failure         = "FAILURE"
	CTOIntervention = "CTO_INTERVENTION"
	Escalated       = "ESCALATED"
	Recovery        = "RECOVERY"
	TimeoutWarning  = "TIMEOUT_WARNING"

	FindingOpened     = "FINDING_OPENED"
	FindingFixed      = "FINDING_FIXED"
	FindingDeclined   = "FINDING_DECLINED"
	FindingReopened   = "FINDING_REOPENED"
	FindingSeverity   = "FINDING_SEVERITY"
	FindingsReviewed  = "FINDINGS_REVIEWED"
	FindingsResumed   = "FINDINGS_RESUMED"
	FindingsNeedHuman = "FINDINGS_NEED_HUMAN"

	ClaimTakeover = "CLAIM_TAKEOVER"
	Release       = "RELEASE"
	TaskResult    = "TASK_RESULT"
	ClaimOverride = "CLAIM_OVERRIDE"
	TaskAdded     = "TASK_ADDED"

	GroupStart    = "GROUP_START"
	TaskComplete  = "TASK_COMPLETE"
	GroupComplete = "GROUP_COMPLETE"
)

// The payloads. Their json tags are the keys the log has always written
// (an old log reads the same), omitempty where a writer left a key out
// when it had nothing to say. Fields are plain strings, numbers and bools,
// so that the meta of an event not yet written holds the Go values its
// readers have always found there.

// PlanCreatedMeta is the meta of PLAN_CREATED.
type PlanCreatedMeta struct {
	TDD  bool `json:"tdd"`
	Auto bool `json:"auto"`
}

// FieldSetMeta is the meta of FIELD_SET: the field set and its value as
// given; Task and Action when a claim or result changed failed_tasks, By
// and Started when state.json was edited by hand.
type FieldSetMeta struct {
	Field   string   `json:"field"`
	Value   any      `json:"value"`
	Task    string   `json:"task,omitempty"`
	Action  string   `json:"action,omitempty"`
	By      string   `json:"by,omitempty"`
	Started []string `json:"started,omitempty"`
}

// PhaseChangeMeta is what a PHASE_CHANGE of an old log may carry (before
// every commit logged its change): Loose, because null and absent differ.
type PhaseChangeMeta struct {
	NextPhase      Loose `json:"next_phase"`
	PhaseIteration Loose `json:"phase_iteration"`
}

// Loose is a meta value read as written, for the readers of old logs:
// Set tells a value (null included) from an absent key.
type Loose struct {
	Set bool
	V   any
}

// MarshalJSON writes the value.
func (l Loose) MarshalJSON() ([]byte, error) { return json.Marshal(l.V) }

// UnmarshalJSON keeps the value, and that there was one.
func (l *Loose) UnmarshalJSON(b []byte) error {
	l.Set = true
	return json.Unmarshal(b, &l.V)
}

// LooseInt reads a meta number as old logs may hold it: a float64 after
// decoding, an int, a json.Number or a numeric string.
func LooseInt(v any) (int, bool) {
	switch v := v.(type) {
	case float64:
		if v == float64(int(v)) {
			return int(v), true
		}
	case int:
		return v, true
	case json.Number:
		n, err := strconv.Atoi(v.String())
		return n, err == nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return n, err == nil
	}
	return 0, false
}

// ReviewRun is what every event of one review run carries.
type ReviewRun struct {
	Review     string `json:"review"`
	Iteration  int    `json:"iteration"`
	Model      string `json:"model"`
	Standalone bool   `json:"standalone,omitempty"` // a `taskie review`
}

// ReviewStartedMeta is the meta of REVIEW_STARTED.
type ReviewStartedMeta struct {
	ReviewRun
	Reviewer string `json:"reviewer"`
}

// Usage is what a finished review's event records of the tokens used
// (Tokens their total; every count only when above 0).
type Usage struct {
	Tokens        int64 `json:"tokens,omitempty"`
	Input         int64 `json:"input_tokens,omitempty"`
	Output        int64 `json:"output_tokens,omitempty"`
	CacheRead     int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreation int64 `json:"cache_creation_input_tokens,omitempty"`
}

// Total is the tokens a review used: Tokens, else the sum of the counts.
func (u Usage) Total() int64 {
	if u.Tokens > 0 {
		return u.Tokens
	}
	return max(u.Input, 0) + max(u.Output, 0) + max(u.CacheRead, 0) + max(u.CacheCreation, 0)
}

// ReviewCost is what a finished review cost: the reviewer's figures, and
// how long taskie saw it run.
type ReviewCost struct {
	CostUSD         float64 `json:"cost_usd"`
	DurationMS      int64   `json:"duration_ms"`
	TookMS          int64   `json:"took_ms"`
	ReviewerSession string  `json:"reviewer_session"`
	Usage
}

// ReviewFinishedMeta is the meta of REVIEW_FINISHED: a review's (Verdict,
// ReviewFile, WroteFile, Clean, Rule) or a CTO review's (Decision,
// CTOFile, RollbackTo). Recorded is false when the hook did not record
// the verdict in state.json.
type ReviewFinishedMeta struct {
	ReviewRun
	Verdict  string `json:"verdict,omitempty"`
	Decision string `json:"decision,omitempty"`
	ReviewCost
	ReviewFile string `json:"review_file,omitempty"`
	WroteFile  *bool  `json:"wrote_file,omitempty"`
	Clean      *bool  `json:"clean,omitempty"`
	Rule       string `json:"rule,omitempty"`
	CTOFile    string `json:"cto_file,omitempty"`
	RollbackTo string `json:"rollback_to,omitempty"`
	Recorded   *bool  `json:"recorded,omitempty"`
}

// NotRecorded reports whether the hook logged the verdict as not recorded.
func (m ReviewFinishedMeta) NotRecorded() bool { return m.Recorded != nil && !*m.Recorded }

// Took is how long the review ran: taskie's own measure, else the
// reviewer's; 0 when neither is known.
func (c ReviewCost) Took() int64 {
	if c.TookMS > 0 {
		return c.TookMS
	}
	return max(c.DurationMS, 0)
}

// ReviewFailedMeta is the meta of REVIEW_FAILED: the failure's kind, the
// kept log (relative to the repository root) and how long it ran.
type ReviewFailedMeta struct {
	ReviewRun
	Failure string `json:"failure"`
	Log     string `json:"log"`
	TookMS  int64  `json:"took_ms"`
}

// FindingMeta is the meta of the review ledger's events (FINDING_*,
// FINDINGS_REVIEWED, FINDINGS_RESUMED): the series' review and the
// ledger event's fields.
type FindingMeta struct {
	Review    string `json:"review"`
	Iteration int    `json:"iteration"`
	ID        string `json:"id,omitempty"`
	Severity  string `json:"severity,omitempty"`
	Title     string `json:"title,omitempty"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	Note      string `json:"note,omitempty"`
	Verdict   string `json:"verdict,omitempty"`
	From      string `json:"from,omitempty"`
}

// NeedsHumanMeta is the meta of FINDINGS_NEED_HUMAN.
type NeedsHumanMeta struct {
	Review    string   `json:"review"`
	Iteration int      `json:"iteration"`
	Reason    string   `json:"reason"`
	Going     []string `json:"going"`
}

// LifecycleMeta is the meta of the lifecycle's events (TASK_CREATED,
// STATE_TRANSITION, FAILURE, CTO_INTERVENTION, ESCALATED, RECOVERY,
// TIMEOUT_WARNING; docs/lifecycle.md).
type LifecycleMeta struct {
	Action      string `json:"action,omitempty"`
	Note        string `json:"note,omitempty"`
	Failures    int    `json:"failures,omitempty"`
	CTOAttempts int    `json:"cto_attempts,omitempty"`
	Head        string `json:"head,omitempty"`
	Level       string `json:"level,omitempty"`
	State       string `json:"state,omitempty"`
	Limit       string `json:"limit,omitempty"`
	Agent       string `json:"agent,omitempty"`
}

// ClaimMeta is the meta of CLAIM and CLAIM_TAKEOVER: the lease's expiry
// (RFC 3339) and length, its fencing token and place when it has them.
type ClaimMeta struct {
	Expires string `json:"expires"`
	TTL     string `json:"ttl"`
	Token   int64  `json:"token,omitempty"`
	Place   string `json:"place,omitempty"`
}

// Forced is who a write forced over a live claim, and who forced it.
type Forced struct {
	ForcedOver string `json:"forced_over,omitempty"`
	Agent      string `json:"agent,omitempty"`
}

// TaskResultMeta is the meta of TASK_RESULT: a subagent's result.
type TaskResultMeta struct {
	Status  string   `json:"status"`
	Commit  string   `json:"commit,omitempty"`
	Output  string   `json:"output,omitempty"`
	Attempt int      `json:"attempt,omitempty"`
	Action  string   `json:"action,omitempty"`
	Note    string   `json:"note,omitempty"`
	Files   []string `json:"files,omitempty"`
	Forced
}

// ClaimOverrideMeta is the meta of CLAIM_OVERRIDE: the command that wrote
// with --force over a live claim, its holder and when the claim expires.
type ClaimOverrideMeta struct {
	Command string    `json:"command"`
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// TaskAddedMeta is the meta of TASK_ADDED.
type TaskAddedMeta struct {
	Title     string   `json:"title"`
	DependsOn []int    `json:"depends_on,omitempty"`
	Files     []string `json:"files,omitempty"`
}

// ProgressMeta is the meta of PROGRESS: one entry of a task's progress
// log; Archived names the sessions it moved to the archive ("1–20").
type ProgressMeta struct {
	Session  int    `json:"session"`
	Did      string `json:"did"`
	Issues   string `json:"issues,omitempty"`
	Next     string `json:"next,omitempty"`
	Archived string `json:"archived,omitempty"`
}

// WaveMeta is the meta of GROUP_START, TASK_COMPLETE and GROUP_COMPLETE;
// Tasks lists a wave's tasks (a group event has no task of its own).
type WaveMeta struct {
	Wave  int      `json:"wave"`
	Waves int      `json:"waves"`
	Tasks []string `json:"tasks,omitempty"`
}

// OwnerChangedMeta is the meta of OWNER_CHANGED: the session before.
type OwnerChangedMeta struct {
	Previous string `json:"previous"`
}

// CheckpointMeta is the meta of a merge's STATE_CHECKPOINT: what the
// merge could not reconcile.
type CheckpointMeta struct {
	Notes []string `json:"notes,omitempty"`
}

// Meta packs a payload (one of the *Meta structs, by value) as an event's
// meta object: the keys json.Marshal would write, with the fields' Go
// values, so that the line written is what json.Marshal(p) gives. Nil
// when nothing is left.
func Meta(p any) map[string]any {
	v := reflect.ValueOf(p)
	m := map[string]any{}
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		m[f.name] = fv.Interface()
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// MetaOf reads an event's meta object as payload T. It is tolerant, as
// the log's readers have always been: absent keys and nulls leave their
// fields zero, a whole number is read as written (a JSON number, a Go
// number, a numeric string), other keys are ignored. A value of the
// wrong type leaves its field zero and is named in the error (a
// *MetaError, one per key, joined); the other fields are read all the same.
func MetaOf[T any](e Event) (T, error) {
	var t T
	err := decodeMeta(e.Meta, reflect.ValueOf(&t).Elem())
	return t, err
}

// HasMeta reports whether e's meta has key (null included).
func (e *Event) HasMeta(key string) bool {
	_, ok := e.Meta[key]
	return ok
}

// MetaError is a meta value MetaOf could not read into its field.
type MetaError struct {
	Key string
	Err error
}

func (e *MetaError) Error() string { return "meta." + e.Key + ": " + e.Err.Error() }

// BadMeta reports whether err (from MetaOf) names key.
func BadMeta(err error, key string) bool {
	if me, ok := err.(*MetaError); ok {
		return me.Key == key
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return slices.ContainsFunc(j.Unwrap(), func(e error) bool { return BadMeta(e, key) })
	}
	return false
}

// MergeMeta adds the fields of payload p to a meta object (nil makes one).
func MergeMeta(m map[string]any, p any) map[string]any {
	add := Meta(p)
	if len(add) == 0 {
		return m
	}
	if m == nil {
		m = make(map[string]any, len(add))
	}
	for k, v := range add {
		m[k] = v
	}
	return m
}

type metaField struct {
	name      string
	index     []int
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type → []metaField

// fieldsOf lists a struct's meta keys as encoding/json would, embedded
// structs flattened.
func fieldsOf(t reflect.Type) []metaField {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]metaField)
	}
	var fs []metaField
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			tag := sf.Tag.Get("json")
			if sf.Anonymous && tag == "" && sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, idx)
				continue
			}
			if !sf.IsExported() || tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" {
				name = sf.Name
			}
			fs = append(fs, metaField{name: name, index: idx, omitEmpty: opts == "omitempty"})
		}
	}
	walk(t, nil)
	fieldCache.Store(t, fs)
	return fs
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

var looseType = reflect.TypeFor[Loose]()

func decodeMeta(m map[string]any, dst reflect.Value) error {
	if len(m) == 0 {
		return nil
	}
	var errs []error
	for _, f := range fieldsOf(dst.Type()) {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		if err := assign(dst.FieldByIndex(f.index), v); err != nil {
			errs = append(errs, &MetaError{Key: f.name, Err: err})
		}
	}
	return errors.Join(errs...)
}

// assign sets dst to v, converting what JSON decoding and Go writers may
// have put in a meta object.
func assign(dst reflect.Value, v any) error {
	t := dst.Type()
	if t == looseType {
		dst.Set(reflect.ValueOf(Loose{Set: true, V: v}))
		return nil
	}
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Type().AssignableTo(t) {
		dst.Set(rv)
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := assign(p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.String:
		if rv.Kind() == reflect.String {
			dst.SetString(rv.String())
			return nil
		}
	case reflect.Bool:
		if rv.Kind() == reflect.Bool {
			dst.SetBool(rv.Bool())
			return nil
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n, ok := wholeNumber(rv); ok {
			dst.SetInt(n)
			return nil
		}
		return fmt.Errorf("%v is not a whole number", v)
	case reflect.Float64:
		if f, ok := number(rv); ok {
			dst.SetFloat(f)
			return nil
		}
		return fmt.Errorf("%v is not a number", v)
	case reflect.Slice:
		if rv.Kind() == reflect.Slice {
			out := reflect.MakeSlice(t, rv.Len(), rv.Len())
			for i := range rv.Len() {
				if err := assign(out.Index(i), rv.Index(i).Interface()); err != nil {
					return err
				}
			}
			dst.Set(out)
			return nil
		}
	case reflect.Struct: // a time, as JSON writes it
		b, err := json.Marshal(v)
		if err == nil && json.Unmarshal(b, dst.Addr().Interface()) == nil {
			return nil
		}
	}
	return fmt.Errorf("%v is not a %s", v, t)
}

// number reads a JSON number (float64 after decoding, json.Number), a Go
// number or a numeric string.
func number(v reflect.Value) (float64, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.String:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.String()), 64)
		return f, err == nil
	}
	return 0, false
}

func wholeNumber(v reflect.Value) (int64, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.String:
		n, err := strconv.ParseInt(strings.TrimSpace(v.String()), 10, 64)
		return n, err == nil
	}
	f, ok := number(v)
	if !ok || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}
