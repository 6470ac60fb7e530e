package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Status is where a finding stands. A reviewer reports Open or Fixed; the
// post-review may also decline one.
type Status string

// Statuses.
const (
	Open     Status = "open"
	Fixed    Status = "fixed"
	Declined Status = "declined"
)

// Answer is a reviewer's structured answer (docs/ledger.md). Findings is nil when
// the answer carried no "findings" (an older prompt, another tool): then the
// verdict alone decides and Record leaves the ledger alone. An empty,
// non-nil Findings means the reviewer tracks findings and reported none.
type Answer struct {
	Verdict  domain.Verdict    `json:"verdict"`
	Review   string            `json:"review"`
	Findings []ReportedFinding `json:"findings"`
}

// ReportedFinding is one finding as a reviewer reports it: ID "" for a new
// finding, a ledger id (F3) when re-checking one; File "" and Line 0 for no
// location.
type ReportedFinding struct {
	ID       string          `json:"id"`
	Severity domain.Severity `json:"severity"`
	Title    string          `json:"title"`
	File     string          `json:"file"`
	Line     int             `json:"line"`
	Status   Status          `json:"status"`
}

// schema is the answer's JSON Schema in strict mode: every object closed
// with "additionalProperties": false and every property required, as Codex
// demands; claude --json-schema accepts it too.
const schema = `{
  "type": "object",
  "properties": {
    "verdict": {"type": "string", "enum": ["PASS", "FAIL"]},
    "review": {"type": "string", "description": "The review, in markdown."},
    "findings": {
      "type": "array",
      "description": "Every finding: the earlier ones you were asked to re-check, with their id, and the new ones, with id \"\".",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "description": "The finding's id (F1, F2, ...) when re-checking one; \"\" for a new finding."},
          "severity": {"type": "string", "enum": ["blocker", "major", "minor", "nit"]},
          "title": {"type": "string", "description": "One line saying what is wrong."},
          "file": {"type": "string", "description": "The file concerned, relative to the repository; \"\" for none."},
          "line": {"type": "integer", "description": "The line in file; 0 for none."},
          "status": {"type": "string", "enum": ["open", "fixed"]}
        },
        "required": ["id", "severity", "title", "file", "line", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdict", "review", "findings"],
  "additionalProperties": false
}`

var compactSchema = sync.OnceValue(func() string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(schema)); err != nil {
		panic("ledger: invalid answer schema: " + err.Error())
	}
	return b.String()
})

// SchemaJSON returns the JSON Schema of Answer, compact, for claude
// --json-schema and codex --output-schema alike.
func SchemaJSON() string { return compactSchema() }

// DecodeAnswer reads a reviewer's answer object leniently: unknown fields
// are ignored, a missing "findings" leaves Findings nil, a finding's id or
// line may be a number or a string, and severities and statuses are
// normalised (an unknown severity counts as major, an unknown status as
// open). It fails only when data is not a JSON object or its verdict is
// missing or neither PASS nor FAIL (any case).
func DecodeAnswer(data []byte) (Answer, error) {
	var raw struct {
		Verdict  *string           `json:"verdict"`
		Review   json.RawMessage   `json:"review"`
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Answer{}, fmt.Errorf("reviewer answer: not a JSON object: %w", err)
	}
	if raw.Verdict == nil {
		return Answer{}, fmt.Errorf("reviewer answer: no verdict")
	}
	v := domain.Verdict(strings.ToUpper(strings.TrimSpace(*raw.Verdict)))
	if v != domain.Pass && v != domain.Fail {
		return Answer{}, fmt.Errorf("reviewer answer: invalid verdict %q (want PASS or FAIL)", *raw.Verdict)
	}
	a := Answer{Verdict: v, Review: text(raw.Review)}
	if raw.Findings != nil {
		a.Findings = make([]ReportedFinding, 0, len(raw.Findings))
	}
	for _, f := range raw.Findings {
		if rf, ok := decodeFinding(f); ok {
			a.Findings = append(a.Findings, rf)
		}
	}
	return a, nil
}

// decodeFinding reads one finding; anything but a JSON object is skipped.
func decodeFinding(data json.RawMessage) (ReportedFinding, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return ReportedFinding{}, false
	}
	line, _ := strconv.Atoi(text(obj["line"]))
	return normalise(ReportedFinding{
		ID:       text(obj["id"]),
		Severity: domain.Severity(text(obj["severity"])),
		Title:    text(obj["title"]),
		File:     text(obj["file"]),
		Line:     line,
		Status:   Status(text(obj["status"])),
	}), true
}

// text returns a JSON string's or number's text; "" for anything else.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// severityWords maps what other tools write to our severities.
var severityWords = map[string]domain.Severity{
	"blocker": domain.Blocker, "critical": domain.Blocker,
	"major": domain.Major, "high": domain.Major,
	"minor": domain.Minor, "medium": domain.Minor, "low": domain.Minor,
	"nit": domain.Nit, "info": domain.Nit, "trivial": domain.Nit,
}

// normalise cleans a reported finding: trimmed one-line text, a known
// severity (unknown → major), status open or fixed, id as the ledger writes
// it ("f3" and "3" → "F3").
func normalise(f ReportedFinding) ReportedFinding {
	f.ID = canonicalID(f.ID)
	f.Title = oneLine(f.Title)
	f.File = strings.TrimPrefix(strings.TrimSpace(f.File), "./")
	f.Line = max(f.Line, 0)
	f.Severity = severityOf(f.Severity)
	switch strings.ToLower(strings.TrimSpace(string(f.Status))) {
	case "fixed", "resolved", "closed":
		f.Status = Fixed
	default:
		f.Status = Open
	}
	return f
}

func severityOf(s domain.Severity) domain.Severity {
	if v, ok := severityWords[strings.ToLower(strings.TrimSpace(string(s)))]; ok {
		return v
	}
	return domain.Major
}

// knownSeverity reports whether s is a severity word severityOf knows.
func knownSeverity(s domain.Severity) bool {
	_, ok := severityWords[strings.ToLower(strings.TrimSpace(string(s)))]
	return ok
}

// canonicalID writes an id as the ledger does: "F" and a number.
func canonicalID(id string) string {
	id = strings.ToUpper(strings.TrimSpace(id))
	if _, err := strconv.Atoi(id); err == nil {
		return "F" + id
	}
	return id
}

// oneLine collapses whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
