package cli

// The display form of the log's events: the rows of `taskie history` and
// `taskie serve`, the one-line messages of `taskie log` and of the commands
// that echo what they logged. Each formats an event decoded
// (events.Event) or read lean (events.Lean, nothing decoded until asked
// for) alike; the folds of the log stay in internal/history.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// eventRow is one event as `taskie history` shows it.
type eventRow struct {
	TS      string // RFC 3339
	Plan    string
	Event   string
	Task    string // "-" when none
	Actor   string // who acted, "-" when the log does not say
	From    string // "-" when none, or when the event changed nothing
	To      string
	Change  string // "from → to", "→ to", or "-"; "-" too when from and to are equal
	Reason  string // "-" when none
	Meta    string // meta as compact JSON, "-" when none
	Summary string // reason and meta, "-" when neither
}

// historyColumns are the keys of an event in `taskie history --json` that the
// piped table shows, in the log's order (TSV gives their cells).
var historyColumns = []string{"ts", "plan", "task", "event", "from", "to", "actor", "reason", "meta"}

// Cells returns the row's columns on a terminal.
func (r eventRow) Cells() []string {
	return []string{r.TS, r.Event, r.Task, r.Actor, r.Change, r.Summary}
}

// TSV returns the row's cells under historyColumns.
func (r eventRow) TSV() []string {
	return []string{r.TS, orDash(r.Plan), r.Task, r.Event, r.From, r.To, r.Actor, r.Reason, r.Meta}
}

// eventText is an event's top-level text, as both event forms give it.
type eventText struct {
	ts, plan, task, event, from, to, actor, reason string
	// set is the raw value a commit event set a state field to.
	set func(field string) ([]byte, bool)
}

// metaView reads an event's meta, decoded (events.Event) or raw
// (events.Lean), so that one set of formatting rules serves both.
type metaView interface {
	// str is a string value, "" when absent or another type.
	str(k string) string
	// num is a number value (a numeric string too), false when absent.
	num(k string) (float64, bool)
	// boolean is a boolean value, false when absent.
	boolean(k string) (v, ok bool)
	// has reports whether k is present, null included.
	has(k string) bool
	// text renders k's value as summary does.
	text(k string) string
	// length is the length of an array value, false when not an array.
	length(k string) (int, bool)
	// summary renders every key as "key=value …", keys sorted.
	summary() string
	// compact is the whole meta as one line of JSON, "" when absent.
	compact() string
}

// eventHistoryRow formats one event for `taskie history`.
func eventHistoryRow(e events.Event) eventRow {
	return buildHistoryRow(eventFields(e), mapMeta(e.Meta))
}

// leanHistoryRow formats one lean event for `taskie history`.
func leanHistoryRow(l *events.Lean) eventRow {
	m := newRawMeta(l.Meta)
	defer m.free()
	return buildHistoryRow(leanFields(l), m)
}

func eventFields(e events.Event) eventText {
	return eventText{eventTS(e), e.Plan, e.Task, e.Event, e.From, e.To, e.Actor, e.Reason, func(k string) ([]byte, bool) {
		v, ok := e.Set[k]
		return v, ok
	}}
}

func leanFields(l *events.Lean) eventText {
	return eventText{leanTS(l.TS), l.Plan, l.Task, l.Event, l.From, l.To, l.Actor, l.Reason, func(k string) ([]byte, bool) {
		return rawSetValue(l.Raw, k)
	}}
}

// rawSetValue finds set[k] in an event line, as the log holds it.
func rawSetValue(line []byte, k string) (v []byte, ok bool) {
	_ = events.MetaEachRaw(line, func(key, val []byte) bool {
		if !events.KeyIs(key, "set") {
			return true
		}
		_ = events.MetaEachRaw(val, func(key, val []byte) bool {
			if events.KeyIs(key, k) {
				v, ok = val, true
			}
			return !ok
		})
		return false
	})
	return v, ok
}

// moved reports whether an event's from and to say a change: both empty,
// or equal (a commit whose phase stayed), say none.
func (e eventText) moved() bool { return e.from != e.to }

func buildHistoryRow(e eventText, m metaView) eventRow {
	r := eventRow{TS: e.ts, Plan: e.plan, Event: orDash(e.event), Task: orDash(e.task), Actor: orDash(e.actor), Change: "-",
		From: "-", To: "-", Reason: orDash(clipLine(e.reason, 1000)), Meta: orDash(m.compact())}
	if e.moved() {
		r.From, r.To = orDash(e.from), orDash(e.to)
	}
	switch {
	case !e.moved():
	case e.from != "" && e.to != "":
		r.Change = e.from + " → " + e.to
	case e.to != "":
		r.Change = "→ " + e.to
	case e.from != "":
		r.Change = e.from + " →"
	}
	var parts []string
	if e.reason != "" {
		parts = append(parts, clipLine(e.reason, 120))
	}
	if s := m.summary(); s != "" {
		parts = append(parts, s)
	}
	r.Summary = orDash(strings.Join(parts, "; "))
	return r
}

// eventTS renders an event's time in RFC 3339 (UTC when the log says so).
func eventTS(e events.Event) string { return e.TS.Format(time.RFC3339) }

// leanTS renders a logged time as eventTS does: the log's own text when it is
// already RFC 3339 to the second in UTC, as taskie writes it.
func leanTS(s string) string {
	if len(s) == 20 && s[19] == 'Z' && s[10] == 'T' {
		return s
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return orDash(s)
	}
	return t.Format(time.RFC3339)
}

// joinSorted renders key=value pairs sorted by key.
func joinSorted(keys []string, val func(k string) string) string {
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + clipLine(val(k), 60)
	}
	return strings.Join(parts, " ")
}

// mapMeta is a decoded meta object.
type mapMeta map[string]any

func (m mapMeta) str(k string) string { s, _ := m[k].(string); return s }
func (m mapMeta) num(k string) (float64, bool) {
	n, ok := events.LooseInt(m[k])
	if f, isF := m[k].(float64); isF {
		return f, true
	}
	return float64(n), ok
}
func (m mapMeta) boolean(k string) (bool, bool) { b, ok := m[k].(bool); return b, ok }
func (m mapMeta) has(k string) bool             { _, ok := m[k]; return ok }
func (m mapMeta) text(k string) string          { return metaValueText(m[k]) }
func (m mapMeta) length(k string) (int, bool) {
	a, ok := m[k].([]any)
	return len(a), ok
}
func (m mapMeta) summary() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return joinSorted(keys, m.text)
}

func (m mapMeta) compact() string {
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(map[string]any(m))
	return string(b)
}

func metaValueText(v any) string {
	switch v := v.(type) {
	case nil:
		return "none" // human output: a cleared field, never JSON's null
	case string:
		return v
	case float64, bool, int:
		return fmt.Sprint(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// rawMeta is a meta object as the log holds it, its top level walked once
// into raw key and value slices: nothing is decoded until asked for.
type rawMeta struct {
	kv  []rawKV
	buf [16]rawKV
}

// rawKV is one key (quotes included) and its raw value.
type rawKV struct{ k, v []byte }

// rawMetas recycles rawMeta values: one is used per event formatted.
var rawMetas = sync.Pool{New: func() any { return &rawMeta{} }}

func newRawMeta(meta []byte) *rawMeta {
	m := rawMetas.Get().(*rawMeta)
	m.kv = m.buf[:0]
	if len(meta) > 0 {
		_ = events.MetaEachRaw(meta, func(k, v []byte) bool {
			m.kv = append(m.kv, rawKV{k, v})
			return true
		})
	}
	return m
}

// free returns m to the pool; it must not be used after.
func (m *rawMeta) free() {
	clear(m.buf[:])
	m.kv = nil
	rawMetas.Put(m)
}

// get returns k's raw value; the last of a repeated key wins, as in
// encoding/json.
func (m *rawMeta) get(k string) ([]byte, bool) {
	for i := len(m.kv) - 1; i >= 0; i-- {
		if events.KeyIs(m.kv[i].k, k) {
			return m.kv[i].v, true
		}
	}
	return nil, false
}

func (m *rawMeta) str(k string) string {
	v, ok := m.get(k)
	if !ok || len(v) == 0 || v[0] != '"' {
		return ""
	}
	s, _ := events.Text(v)
	return s
}
func (m *rawMeta) num(k string) (float64, bool) {
	v, ok := m.get(k)
	if !ok {
		return 0, false
	}
	if len(v) > 0 && v[0] == '"' {
		s, _ := events.Text(v)
		n, isInt := events.LooseInt(s)
		return float64(n), isInt
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}
func (m *rawMeta) boolean(k string) (bool, bool) {
	v, ok := m.get(k)
	switch {
	case !ok:
		return false, false
	case string(v) == "true":
		return true, true
	case string(v) == "false":
		return false, true
	}
	return false, false
}
func (m *rawMeta) has(k string) bool { _, ok := m.get(k); return ok }
func (m *rawMeta) text(k string) string {
	v, _ := m.get(k)
	return rawJSONText(v)
}
func (m *rawMeta) length(k string) (int, bool) {
	v, ok := m.get(k)
	if !ok || len(v) == 0 || v[0] != '[' {
		return 0, false
	}
	var a []json.RawMessage
	if json.Unmarshal(v, &a) != nil {
		return 0, false
	}
	return len(a), true
}

// summary renders "key=value …" by key; the log writes meta's keys sorted
// already, so they are sorted (and deduplicated) only when written by hand.
func (m *rawMeta) summary() string {
	if len(m.kv) == 0 {
		return ""
	}
	list := m.kv
	for i := 1; i < len(list); i++ {
		if string(list[i-1].k) >= string(list[i].k) || bytes.IndexByte(list[i].k, '\\') >= 0 {
			list = sortRawKeys(list)
			break
		}
	}
	var b strings.Builder
	for i, e := range list {
		if i > 0 {
			b.WriteByte(' ')
		}
		if bytes.IndexByte(e.k, '\\') < 0 {
			b.Write(e.k[1 : len(e.k)-1])
		} else {
			k, _ := events.Text(e.k)
			b.WriteString(k)
		}
		b.WriteByte('=')
		if plainJSONString(e.v, 60) {
			b.Write(e.v[1 : len(e.v)-1])
		} else {
			b.WriteString(clipLine(rawJSONText(e.v), 60))
		}
	}
	return b.String()
}

func (m *rawMeta) compact() string {
	if len(m.kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range m.kv {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.k)
		b.WriteByte(':')
		var c bytes.Buffer
		if json.Compact(&c, e.v) == nil {
			b.Write(c.Bytes())
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.String()
}

// sortRawKeys sorts meta's entries by decoded key, keeping the last of a
// repeated key.
func sortRawKeys(list []rawKV) []rawKV {
	type entry struct {
		key string
		kv  rawKV
	}
	es := make([]entry, len(list))
	for i, e := range list {
		k, _ := events.Text(e.k)
		es[i] = entry{k, e}
	}
	slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	out := make([]rawKV, 0, len(es))
	for i, e := range es {
		if i+1 < len(es) && es[i+1].key == e.key {
			continue
		}
		out = append(out, e.kv)
	}
	return out
}

// plainJSONString reports whether v is a JSON string that clipLine would leave
// as it is, so that its bytes can be written as they are.
func plainJSONString(v []byte, n int) bool {
	if len(v) < 2 || v[0] != '"' || len(v)-2 > n {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		c := v[i]
		if c < ' ' || c >= 0x7f || c == '\\' || (c == ' ' && (i == 1 || i == len(v)-2 || v[i+1] == ' ')) {
			return false
		}
	}
	return true
}

// rawJSONText renders a raw JSON value as metaValueText renders its decoded form.
func rawJSONText(v []byte) string {
	if len(v) == 0 || string(v) == "null" {
		return "none"
	}
	switch c := v[0]; {
	case c == '"':
		s, _ := events.Text(v)
		return s
	case c == '-' || c >= '0' && c <= '9':
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return fmt.Sprint(f)
		}
	case c == '{' || c == '[':
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			return b.String()
		}
	}
	return string(v)
}

// clipLine puts s on one line (tabs and newlines become spaces, so the
// tab-separated output keeps its columns) and clips it to n runes.
func clipLine(s string, n int) string {
	if len(s) <= n && plainLine(s) {
		return s
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// plainLine reports whether s is ASCII with single inner spaces and no other
// white space, which clipLine leaves as it is.
func plainLine(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c >= 0x7f {
			return false
		}
		if c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ') {
			return false
		}
	}
	return true
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// eventMessage is a short human sentence for one event.
func eventMessage(e events.Event) string { return buildEventMessage(eventFields(e), mapMeta(e.Meta)) }

// leanEventMessage is eventMessage for a lean event.
func leanEventMessage(l *events.Lean) string {
	m := newRawMeta(l.Meta)
	defer m.free()
	return buildEventMessage(leanFields(l), m)
}

func buildEventMessage(e eventText, m metaView) string {
	task := ""
	if e.task != "" {
		task = "task " + e.task
	}
	var msg string
	switch e.event {
	case events.PlanCreated:
		mode := "standalone"
		if b, _ := m.boolean("auto"); b {
			mode = "automated"
		}
		msg = fmt.Sprintf("plan %s created (%s", orDash(e.plan), mode)
		if b, _ := m.boolean("tdd"); b {
			msg += ", test-first"
		}
		msg += ")"
	case events.PhaseChange:
		msg = phaseMessage(e, m)
		msg = taskPrefix(task, msg)
	case events.FieldSet:
		msg = taskPrefix(task, fieldMessage(e, m))
	case events.ReviewStarted, events.ReviewFinished, events.ReviewFailed:
		msg = reviewMessage(e, m)
	case events.Progress:
		msg = taskPrefix(task, clipLine(e.reason, 200))
	case events.TaskStatus:
		msg = taskPrefix(task, "status "+orDash(e.to))
	case events.ReviewsArchived:
		msg = clipLine(e.reason, 120)
		if n, ok := m.length("files"); ok {
			msg += fmt.Sprintf(": %d file(s) moved to %s", n, m.str("dir"))
		}
	case events.LifecycleCommit:
		msg = taskPrefix(task, clipLine(e.reason, 120))
	case lcCreated, lcTransition, lcFailure, lcCTO, lcEscalated, lcRecovery, lcTimeout:
		msg = taskPrefix(task, lifecycleMessage(e, m))
	default:
		var parts []string
		if e.moved() {
			parts = append(parts, strings.TrimSpace(e.from+" → "+e.to))
		}
		if e.reason != "" {
			parts = append(parts, clipLine(e.reason, 120))
		}
		if s := m.summary(); s != "" {
			parts = append(parts, s)
		}
		msg = taskPrefix(task, strings.Join(parts, ": "))
	}
	if msg == "" {
		msg = "-"
	}
	if !namesActor(e.event) && e.actor != "" && e.actor != "cli" { // cli: the person at the terminal
		msg += " (by " + e.actor + ")"
	}
	return msg
}

// namesActor reports whether an event's message already says who acted.
func namesActor(kind string) bool {
	switch kind {
	case lcCreated, lcTransition, lcFailure, lcCTO, lcEscalated, lcRecovery, lcTimeout:
		return true
	}
	return false
}

// fieldMessage is "failed_tasks = ["4"] (action=escalate task=4)": the
// value is meta's, else the one the event's commit set, else none (the
// field was cleared).
func fieldMessage(e eventText, m metaView) string {
	field := m.str("field")
	val := "none"
	switch {
	case m.has("value"):
		val = m.text("value")
	case e.set != nil:
		if v, ok := e.set(field); ok {
			val = clipLine(rawJSONText(v), 120)
		}
	}
	msg := field + " = " + val
	var extra []string
	for _, k := range []string{"action", "task"} {
		if m.has(k) && !(k == "task" && m.str(k) == e.task) {
			extra = append(extra, k+"="+m.text(k))
		}
	}
	if len(extra) > 0 {
		msg += " (" + strings.Join(extra, " ") + ")"
	}
	return msg
}

func phaseMessage(e eventText, m metaView) string {
	msg := e.from + " → " + e.to
	if e.from == e.to || e.from == "" {
		msg = e.to
	}
	var extra []string
	if m.has("next_phase") {
		extra = append(extra, "next "+m.text("next_phase"))
	}
	if n, ok := m.num("phase_iteration"); ok && n > 0 && n == float64(int(n)) {
		extra = append(extra, "iteration "+strconv.Itoa(int(n)))
	}
	if len(extra) > 0 {
		msg += " (" + strings.Join(extra, ", ") + ")"
	}
	return msg
}

func reviewMessage(e eventText, m metaView) string {
	msg := reviewName(e, m)
	switch e.event {
	case events.ReviewStarted:
		msg += " started"
	case events.ReviewFinished:
		v := m.str("verdict")
		if v == "" {
			v = "no readable verdict"
		}
		msg += ": " + v
		var extra []string
		if c, ok := m.num("cost_usd"); ok && c > 0 {
			extra = append(extra, "$"+strconv.FormatFloat(c, 'f', 2, 64))
		}
		if ms, ok := m.num("duration_ms"); ok && ms > 0 && ms == float64(int(ms)) {
			extra = append(extra, msDuration(int(ms)))
		}
		if len(extra) > 0 {
			msg += " (" + strings.Join(extra, ", ") + ")"
		}
		if rec, ok := m.boolean("recorded"); ok && !rec {
			msg += ", not recorded (state.json changed meanwhile)"
		}
	case events.ReviewFailed:
		msg += " failed"
		if f := m.str("failure"); f != "" {
			msg += ": " + f
		}
		if l := m.str("log"); l != "" {
			msg += " (log " + l + ")"
		}
	}
	return msg
}

// reviewName is "code-review 2 of task 3 by sonnet".
func reviewName(e eventText, m metaView) string {
	s := m.str("review")
	if s == "" {
		s = "review"
	}
	if n, ok := m.num("iteration"); ok && n == float64(int(n)) {
		s += " " + strconv.Itoa(int(n))
	}
	if e.task != "" && e.task != "0" {
		s += " of task " + e.task
	}
	if model := m.str("model"); model != "" {
		s += " by " + model
	}
	return s
}

func taskPrefix(task, msg string) string {
	switch {
	case task == "":
		return msg
	case msg == "":
		return task
	}
	return task + ": " + msg
}

// msDuration renders milliseconds briefly: "850ms", "45s", "2m5s".
func msDuration(ms int) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return d.String()
	}
	return d.Round(time.Second).String()
}

// The lifecycle's event kinds (lifecycle.Kind), as the log writes them.
const (
	lcCreated    = string(lifecycle.KindCreated)
	lcTransition = string(lifecycle.KindTransition)
	lcFailure    = string(lifecycle.KindFailure)
	lcCTO        = string(lifecycle.KindCTO)
	lcEscalated  = string(lifecycle.KindEscalated)
	lcRecovery   = string(lifecycle.KindRecovery)
	lcTimeout    = string(lifecycle.KindTimeout)
)

// lifecycleMessage renders a lifecycle effect: "in_progress → testing by
// hook: code review started", "failure 2 in quality_review by hook: …",
// "retry cto_intervention → testing by cto (CTO attempt 1): …".
func lifecycleMessage(e eventText, m metaView) string {
	var msg string
	switch e.event {
	case lcCreated:
		msg = "created in " + orDash(e.to)
	case lcTimeout:
		msg = "timeout " + orDash(m.str("level")) + " in " + orDash(e.from)
	case lcFailure:
		msg = "failure in " + orDash(e.from)
		if n, ok := m.num("failures"); ok && n > 0 {
			msg = "failure " + strconv.Itoa(int(n)) + " in " + orDash(e.from)
		}
	default:
		msg = orDash(e.from) + " → " + orDash(e.to)
		if a := m.str("action"); a != "" {
			msg = a + " " + msg
		}
	}
	if e.actor != "" {
		msg += " by " + e.actor
	}
	if n, ok := m.num("cto_attempts"); ok && n > 0 {
		msg += " (CTO attempt " + strconv.Itoa(int(n)) + ")"
	}
	if note := m.str("note"); note != "" && note != e.reason {
		msg += " [note: " + clipLine(note, 120) + "]"
	}
	if e.reason != "" {
		msg += ": " + clipLine(e.reason, 120)
	}
	return msg
}
