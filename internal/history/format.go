package history

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/events"
)

// Row is one event as `taskie history` shows it.
type Row struct {
	TS      string // RFC 3339
	Event   string
	Task    string // "-" when none
	Change  string // "from → to", "→ to", or "-"
	Summary string // reason and meta, "-" when neither
}

// Cells returns the row's columns in display order.
func (r Row) Cells() []string { return []string{r.TS, r.Event, r.Task, r.Change, r.Summary} }

// HistoryRow formats one event for `taskie history`.
func HistoryRow(e events.Event) Row {
	r := Row{TS: TS(e), Event: orDash(e.Event), Task: orDash(e.Task), Change: "-"}
	switch {
	case e.From != "" && e.To != "":
		r.Change = e.From + " → " + e.To
	case e.To != "":
		r.Change = "→ " + e.To
	case e.From != "":
		r.Change = e.From + " →"
	}
	var parts []string
	if e.Reason != "" {
		parts = append(parts, oneLine(e.Reason, 120))
	}
	if m := MetaSummary(e.Meta); m != "" {
		parts = append(parts, m)
	}
	r.Summary = orDash(strings.Join(parts, "; "))
	return r
}

// TS renders an event's time in RFC 3339 (UTC when the log says so).
func TS(e events.Event) string { return e.TS.Format(time.RFC3339) }

// MetaSummary renders meta as "key=value …", keys sorted, long values clipped.
func MetaSummary(meta map[string]any) string {
	if len(meta) == 0 {
		return ""
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + oneLine(value(meta[k]), 60)
	}
	return strings.Join(parts, " ")
}

func value(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
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

// oneLine puts s on one line (tabs and newlines become spaces, so the
// tab-separated output keeps its columns) and clips it to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// LogLine formats one event for `taskie log`: "[ts] EVENT: message".
func LogLine(e events.Event) string {
	return fmt.Sprintf("[%s] %s: %s", TS(e), e.Event, Message(e))
}

// Message is a short human sentence for one event.
func Message(e events.Event) string {
	m := e.Meta
	str := func(k string) string { s, _ := m[k].(string); return s }
	task := ""
	if e.Task != "" {
		task = "task " + e.Task
	}
	var msg string
	switch e.Event {
	case events.PlanCreated:
		mode := "standalone"
		if b, _ := m["auto"].(bool); b {
			mode = "automated"
		}
		msg = fmt.Sprintf("plan %s created (%s", orDash(e.Plan), mode)
		if b, _ := m["tdd"].(bool); b {
			msg += ", test-first"
		}
		msg += ")"
	case events.PhaseChange:
		msg = e.From + " → " + e.To
		if e.From == e.To || e.From == "" {
			msg = e.To
		}
		var extra []string
		if v, ok := m["next_phase"]; ok {
			extra = append(extra, "next "+value(v))
		}
		if n, ok := asInt(m["phase_iteration"]); ok && n > 0 {
			extra = append(extra, fmt.Sprintf("iteration %d", n))
		}
		if len(extra) > 0 {
			msg += " (" + strings.Join(extra, ", ") + ")"
		}
		msg = prefix(task, msg)
	case events.FieldSet:
		msg = fmt.Sprintf("%s = %s", str("field"), value(m["value"]))
	case events.ReviewStarted, events.ReviewFinished, events.ReviewFailed:
		msg = reviewName(e)
		switch e.Event {
		case events.ReviewStarted:
			msg += " started"
		case events.ReviewFinished:
			v := str("verdict")
			if v == "" {
				v = "no readable verdict"
			}
			msg += ": " + v
			var extra []string
			if c, ok := m["cost_usd"].(float64); ok && c > 0 {
				extra = append(extra, fmt.Sprintf("$%.2f", c))
			}
			if ms, ok := asInt(m["duration_ms"]); ok && ms > 0 {
				extra = append(extra, Duration(ms))
			}
			if len(extra) > 0 {
				msg += " (" + strings.Join(extra, ", ") + ")"
			}
			if rec, ok := m["recorded"].(bool); ok && !rec {
				msg += ", not recorded (state.json changed meanwhile)"
			}
		case events.ReviewFailed:
			msg += " failed"
			if f := str("failure"); f != "" {
				msg += ": " + f
			}
			if l := str("log"); l != "" {
				msg += " (log " + l + ")"
			}
		}
	case events.Progress:
		msg = prefix(task, oneLine(e.Reason, 200))
	case events.TaskStatus:
		msg = prefix(task, "status "+orDash(e.To))
	case events.ReviewsArchived:
		msg = oneLine(e.Reason, 120)
		if files, ok := m["files"].([]any); ok {
			msg += fmt.Sprintf(": %d file(s) moved to %s", len(files), str("dir"))
		}
	default:
		var parts []string
		if e.From != "" || e.To != "" {
			parts = append(parts, strings.TrimSpace(e.From+" → "+e.To))
		}
		if e.Reason != "" {
			parts = append(parts, oneLine(e.Reason, 120))
		}
		msg = prefix(task, strings.Join(parts, ": "))
	}
	if msg == "" {
		msg = "-"
	}
	return msg
}

// reviewName is "code-review 2 of task 3 by sonnet".
func reviewName(e events.Event) string {
	s, _ := e.Meta["review"].(string)
	if s == "" {
		s = "review"
	}
	if n, ok := asInt(e.Meta["iteration"]); ok {
		s += fmt.Sprintf(" %d", n)
	}
	if e.Task != "" && e.Task != "0" {
		s += " of task " + e.Task
	}
	if m, _ := e.Meta["model"].(string); m != "" {
		s += " by " + m
	}
	return s
}

func prefix(task, msg string) string {
	switch {
	case task == "":
		return msg
	case msg == "":
		return task
	}
	return task + ": " + msg
}

// Duration renders milliseconds briefly: "850ms", "45s", "2m5s".
func Duration(ms int) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return d.String()
	}
	return d.Round(time.Second).String()
}
