package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// Schema returns the answer schema given to claude with --json-schema and
// to codex with --output-schema: the verdict, the review text (so taskie
// can write the file itself) and the findings (docs/ledger.md), in strict mode
// (ledger.SchemaJSON).
func Schema() string { return ledger.SchemaJSON() }

// claudeOutput is the part of `claude -p --output-format json` we use.
type claudeOutput struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	IsError          bool            `json:"is_error"`
	Result           json.RawMessage `json:"result"`
	StructuredOutput json.RawMessage `json:"structured_output"`
	TotalCostUSD     float64         `json:"total_cost_usd"`
	Usage            struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	DurationMS int64  `json:"duration_ms"`
	SessionID  string `json:"session_id"`
}

// ParseClaude extracts the verdict from claude's JSON output. The verdict
// comes from .structured_output; .result (an object, or a string holding
// one) is the fallback for older CLIs or a client run without a schema.
func ParseClaude(out []byte) (Result, error) {
	co, err := decodeClaude(out)
	if err != nil {
		return Result{Raw: out}, failf(FailOutput, out, "claude reviewer: output is not JSON: %s", snippet(out))
	}
	if claudeFailed(co) {
		msg := fmt.Sprintf("claude reviewer: reported an error (subtype %q)", co.Subtype)
		if s := oneLine(resultText(co.Result)); s != "" {
			msg += ": " + s
		}
		return Result{Raw: out}, failf(FailOutput, out, "%s", msg)
	}
	res := Result{
		CostUSD:    co.TotalCostUSD,
		Usage:      Usage{Input: co.Usage.Input, Output: co.Usage.Output, CacheRead: co.Usage.CacheRead, CacheCreation: co.Usage.CacheCreation},
		DurationMS: co.DurationMS,
		SessionID:  co.SessionID,
		Raw:        out,
	}
	obj, ok := claudeVerdictObject(co)
	if !ok {
		return res, failf(FailOutput, out, "claude reviewer: no verdict in structured_output or result")
	}
	if obj["verdict"] == nil {
		cto, err := ctoOf(obj)
		if err != nil {
			return res, failf(FailOutput, out, "claude reviewer: %v", err)
		}
		res.CTO, res.Text = &cto, cto.Review
		return res, nil
	}
	v, text, err := verdictOf(obj)
	if err != nil {
		return res, failf(FailOutput, out, "claude reviewer: %v", err)
	}
	res.Verdict, res.Text, res.Findings = v, text, findingsOf(obj)
	return res, nil
}

// ParseCodex extracts the verdict from codex's final message: a JSON object,
// possibly fenced or surrounded by prose.
func ParseCodex(msg []byte) (Result, error) {
	obj, ok := findObject(string(msg))
	if !ok {
		return Result{Raw: msg}, failf(FailOutput, msg, "codex reviewer: final message holds no verdict object: %s", snippet(msg))
	}
	if obj["verdict"] == nil {
		cto, err := ctoOf(obj)
		if err != nil {
			return Result{Raw: msg}, failf(FailOutput, msg, "codex reviewer: %v", err)
		}
		return Result{CTO: &cto, Text: cto.Review, Raw: msg}, nil
	}
	v, text, err := verdictOf(obj)
	if err != nil {
		return Result{Raw: msg}, failf(FailOutput, msg, "codex reviewer: %v", err)
	}
	return Result{Verdict: v, Text: text, Findings: findingsOf(obj), Raw: msg}, nil
}

// claudeVerdictObject returns the first object carrying a verdict, in
// order of trust.
func claudeVerdictObject(co claudeOutput) (map[string]json.RawMessage, bool) {
	if obj, ok := asObject(co.StructuredOutput); ok && isAnswer(obj) {
		return obj, true
	}
	if obj, ok := asObject(co.Result); ok && isAnswer(obj) {
		return obj, true
	}
	var s string
	if json.Unmarshal(co.Result, &s) == nil {
		return findObject(s)
	}
	return nil, false
}

// verdictOf reads and normalises the verdict and review fields.
func verdictOf(obj map[string]json.RawMessage) (verdict domain.Verdict, text string, err error) {
	var v string
	if err := json.Unmarshal(obj["verdict"], &v); err != nil {
		return "", "", fmt.Errorf("verdict is not a string: %s", snippet(obj["verdict"]))
	}
	switch verdict = domain.Verdict(strings.ToUpper(strings.TrimSpace(v))); verdict {
	case domain.Pass, domain.Fail:
	default:
		return "", "", fmt.Errorf("invalid verdict %q (want PASS or FAIL)", v)
	}
	if raw, ok := obj["review"]; ok {
		// A non-string review is treated as absent: the file check decides.
		_ = json.Unmarshal(raw, &text)
	}
	return verdict, text, nil
}

// findingsOf reads the answer's findings (ledger.DecodeAnswer's leniency):
// nil when the answer has none, as from a reviewer that does not track
// findings; unreadable findings count as none, so the verdict alone decides.
func findingsOf(obj map[string]json.RawMessage) []ledger.ReportedFinding {
	raw, ok := obj["findings"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(map[string]json.RawMessage{"verdict": json.RawMessage(`"PASS"`), "findings": raw})
	if err != nil {
		return nil
	}
	a, err := ledger.DecodeAnswer(b)
	if err != nil {
		return nil
	}
	return a.Findings
}

var fence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```[a-zA-Z]*[ \t]*\r?\n(.*?)```") })

// findObject finds a JSON object with a "verdict" field in s: the whole
// string, a fenced block, or the span from the first '{' to the last '}'.
func findObject(s string) (map[string]json.RawMessage, bool) {
	cands := []string{strings.TrimSpace(s)}
	for _, m := range fence().FindAllStringSubmatch(s, -1) {
		cands = append(cands, m[1])
	}
	if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i {
		cands = append(cands, s[i:j+1])
	}
	for _, c := range cands {
		if obj, ok := asObject([]byte(c)); ok && isAnswer(obj) {
			return obj, true
		}
	}
	return nil, false
}

// lastObject returns the last line-leading JSON object in b that carries a
// verdict; codex prints its final message at the end of stdout.
func lastObject(b []byte) ([]byte, bool) {
	for end := len(b); end > 0; {
		i := bytes.LastIndexByte(b[:end], '{')
		if i < 0 {
			break
		}
		if atLineStart(b, i) {
			dec := json.NewDecoder(bytes.NewReader(b[i:]))
			var obj map[string]json.RawMessage
			if dec.Decode(&obj) == nil && isAnswer(obj) {
				return b[i : i+int(dec.InputOffset())], true
			}
		}
		end = i
	}
	return nil, false
}

func atLineStart(b []byte, i int) bool {
	for i > 0 {
		i--
		switch b[i] {
		case '\n':
			return true
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return true
}

// isAnswer reports whether obj is a reviewer's answer: a review's verdict
// or a CTO's decision.
func isAnswer(obj map[string]json.RawMessage) bool {
	return obj["verdict"] != nil || obj["decision"] != nil
}

func asObject(b []byte) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if len(b) == 0 || json.Unmarshal(b, &obj) != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

// decodeClaude decodes out as one JSON object; failing that, the last line
// that is one (tolerates a warning printed before the result).
func decodeClaude(out []byte) (claudeOutput, error) {
	var co claudeOutput
	err := json.Unmarshal(bytes.TrimSpace(out), &co)
	if err == nil {
		return co, nil
	}
	lines := bytes.Split(out, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		var c claudeOutput // fresh: a failed decode may leave fields set
		if len(l) > 0 && l[0] == '{' && json.Unmarshal(l, &c) == nil {
			return c, nil
		}
	}
	return claudeOutput{}, err
}

// claudeFailed reports an is_error or non-success answer. A missing subtype
// is tolerated; only an explicit non-success fails.
func claudeFailed(co claudeOutput) bool {
	return co.IsError || (co.Subtype != "" && co.Subtype != "success")
}

func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// oneLine folds s onto one line and shortens it, for the first line of a
// failure message.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 300
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// snippet shortens output for an error message; the full text is in Raw.
func snippet[T ~string | ~[]byte](b T) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty)"
	}
	const max = 300
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// codexUsageEvent is the part of a `codex exec --json` turn.completed event
// that counts tokens.
type codexUsageEvent struct {
	Type  string `json:"type"`
	Usage *struct {
		Input       int64 `json:"input_tokens"`
		CachedInput int64 `json:"cached_input_tokens"`
		Output      int64 `json:"output_tokens"`
	} `json:"usage"`
}

// codexTokensUsed matches the summary codex exec prints without --json:
// "tokens used" then the count, on the same line or the next.
var codexTokensUsed = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^tokens used:?\s*\n?\s*([0-9][0-9,]*)\s*$`)
})

// ParseCodexUsage reads the tokens codex reported: the sum of its
// turn.completed events' usage, else its last "tokens used" count (all of
// it counted as input, codex does not split it there). Zero when neither.
func ParseCodexUsage(outs ...[]byte) Usage {
	var u Usage
	found := false
	for _, b := range outs {
		for _, l := range bytes.Split(b, []byte("\n")) {
			l = bytes.TrimSpace(l)
			var ev codexUsageEvent
			if len(l) == 0 || l[0] != '{' || json.Unmarshal(l, &ev) != nil || ev.Type != "turn.completed" || ev.Usage == nil {
				continue
			}
			found = true
			// Codex counts cached input within input_tokens.
			u.Input += max(ev.Usage.Input-ev.Usage.CachedInput, 0)
			u.CacheRead += ev.Usage.CachedInput
			u.Output += ev.Usage.Output
		}
	}
	if found {
		return u
	}
	for _, b := range outs {
		if m := codexTokensUsed().FindAllSubmatch(b, -1); len(m) > 0 {
			n, err := strconv.ParseInt(strings.ReplaceAll(string(m[len(m)-1][1]), ",", ""), 10, 64)
			if err == nil {
				u.Input = n
			}
		}
	}
	return u
}
