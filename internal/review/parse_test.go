package review

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

func TestParseClaude(t *testing.T) {
	const meta = `"total_cost_usd":0.12,"duration_ms":3456,"session_id":"s1"`
	tests := []struct {
		name    string
		out     string
		want    Result
		wantErr string // substring of the Failure message; "" = success
	}{
		{
			name: "structured output pass",
			out:  `{"type":"result","subtype":"success","is_error":false,"result":"done","structured_output":{"verdict":"PASS","review":"all good"},` + meta + `}`,
			want: Result{Verdict: domain.Pass, Text: "all good", CostUSD: 0.12, DurationMS: 3456, SessionID: "s1"},
		},
		{
			name: "structured output fail",
			out:  `{"type":"result","subtype":"success","is_error":false,"structured_output":{"verdict":"FAIL","review":"1. broken"},` + meta + `}`,
			want: Result{Verdict: domain.Fail, Text: "1. broken", CostUSD: 0.12, DurationMS: 3456, SessionID: "s1"},
		},
		{
			name: "lowercase verdict with spaces",
			out:  `{"type":"result","subtype":"success","structured_output":{"verdict":" pass ","review":"ok"}}`,
			want: Result{Verdict: domain.Pass, Text: "ok"},
		},
		{
			name: "structured output wins over result",
			out:  `{"type":"result","subtype":"success","result":{"verdict":"PASS","review":"r"},"structured_output":{"verdict":"FAIL","review":"s"}}`,
			want: Result{Verdict: domain.Fail, Text: "s"},
		},
		{
			name: "leading warning line",
			out:  "warning: something\n" + `{"type":"result","subtype":"success","structured_output":{"verdict":"PASS","review":"ok"}}` + "\n",
			want: Result{Verdict: domain.Pass, Text: "ok"},
		},
		{
			name:    "is_error",
			out:     `{"type":"result","subtype":"success","is_error":true,"result":"API Error: overloaded","structured_output":{"verdict":"PASS","review":"x"}}`,
			wantErr: "API Error: overloaded",
		},
		{
			name:    "error subtype",
			out:     `{"type":"result","subtype":"error_max_turns","is_error":false,"structured_output":{"verdict":"PASS","review":"x"}}`,
			wantErr: "error_max_turns",
		},
		{
			name: "result object",
			out:  `{"type":"result","subtype":"success","result":{"verdict":"fail","review":"from result"},` + meta + `}`,
			want: Result{Verdict: domain.Fail, Text: "from result", CostUSD: 0.12, DurationMS: 3456, SessionID: "s1"},
		},
		{
			name: "result string with fenced json",
			out:  `{"type":"result","subtype":"success","result":"Here it is:\n` + "```json" + `\n{\"verdict\": \"PASS\", \"review\": \"fenced\"}\n` + "```" + `\nbye"}`,
			want: Result{Verdict: domain.Pass, Text: "fenced"},
		},
		{
			name: "result string with bare json",
			out:  `{"type":"result","subtype":"success","result":"{\"verdict\":\"FAIL\",\"review\":\"bare\"}"}`,
			want: Result{Verdict: domain.Fail, Text: "bare"},
		},
		{
			name:    "missing verdict",
			out:     `{"type":"result","subtype":"success","is_error":false,"result":"I reviewed it and it looks fine."}`,
			wantErr: "no verdict",
		},
		{
			name:    "structured output without verdict",
			out:     `{"type":"result","subtype":"success","structured_output":{"review":"x"}}`,
			wantErr: "no verdict",
		},
		{
			name:    "garbage",
			out:     "not json at all",
			wantErr: "not JSON",
		},
		{
			name:    "empty",
			out:     "",
			wantErr: "not JSON",
		},
		{
			name:    "bad verdict value",
			out:     `{"type":"result","subtype":"success","structured_output":{"verdict":"MAYBE","review":"x"}}`,
			wantErr: `invalid verdict "MAYBE"`,
		},
		{
			name:    "verdict not a string",
			out:     `{"type":"result","subtype":"success","structured_output":{"verdict":true,"review":"x"}}`,
			wantErr: "not a string",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseClaude([]byte(tc.out))
			if string(got.Raw) != tc.out {
				t.Errorf("Raw = %q, want the input", got.Raw)
			}
			checkParse(t, got, err, tc.want, tc.wantErr, tc.out)
		})
	}
}

func TestParseCodex(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		want    Result
		wantErr string
	}{
		{name: "plain", msg: `{"verdict":"PASS","review":"ok"}`, want: Result{Verdict: domain.Pass, Text: "ok"}},
		{name: "whitespace", msg: "\n  {\"verdict\":\"FAIL\",\"review\":\"bad\"}\n\n", want: Result{Verdict: domain.Fail, Text: "bad"}},
		{name: "fenced", msg: "Verdict:\n```json\n{\"verdict\":\"fail\",\"review\":\"f\"}\n```\n", want: Result{Verdict: domain.Fail, Text: "f"}},
		{name: "fence without language", msg: "```\n{\"verdict\":\"Pass\",\"review\":\"p\"}\n```", want: Result{Verdict: domain.Pass, Text: "p"}},
		{name: "missing review", msg: `{"verdict":"PASS"}`, want: Result{Verdict: domain.Pass}},
		{name: "garbage", msg: "not json at all", wantErr: "no verdict object"},
		{name: "empty", msg: "", wantErr: "no verdict object"},
		{name: "no verdict field", msg: `{"review":"x"}`, wantErr: "no verdict object"},
		{name: "bad verdict", msg: `{"verdict":"OK","review":"x"}`, wantErr: `invalid verdict "OK"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCodex([]byte(tc.msg))
			checkParse(t, got, err, tc.want, tc.wantErr, tc.msg)
		})
	}
}

func checkParse(t *testing.T, got Result, err error, want Result, wantErr, input string) {
	t.Helper()
	if wantErr != "" {
		var f *Failure
		if !errors.As(err, &f) {
			t.Fatalf("err = %v, want a *Failure containing %q", err, wantErr)
		}
		if f.Kind != FailOutput || !strings.Contains(f.Msg, wantErr) {
			t.Errorf("Failure = {%s, %q}, want {output, ...%q...}", f.Kind, f.Msg, wantErr)
		}
		if string(f.Raw) != input {
			t.Errorf("Failure.Raw = %q, want the input", f.Raw)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	got.Raw = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}
}

func TestLastObject(t *testing.T) {
	stdout := "thinking\n{\"not\":\"it\"}\nmore\n{\"verdict\":\"FAIL\",\n \"review\":\"multi\"}\ntokens used: 5\n"
	got, ok := lastObject([]byte(stdout))
	if !ok {
		t.Fatal("no object found")
	}
	if want := "{\"verdict\":\"FAIL\",\n \"review\":\"multi\"}"; string(got) != want {
		t.Errorf("lastObject = %q, want %q", got, want)
	}
	if _, ok := lastObject([]byte("no json {here\n")); ok {
		t.Error("found an object in text without one")
	}
}

func TestSchemas(t *testing.T) {
	obj, ok := asObject([]byte(Schema()))
	if !ok || obj["properties"] == nil || obj["required"] == nil {
		t.Fatalf("Schema is not a usable object schema: %s", Schema())
	}
	for _, want := range []string{`"additionalProperties":false`, `"required":["verdict","review","findings"]`,
		`"required":["id","severity","title","file","line","status"]`} {
		if !strings.Contains(Schema(), want) {
			t.Errorf("Schema lacks %s (strict mode): %s", want, Schema())
		}
	}
}

func TestParseFindings(t *testing.T) {
	finding := `{"id":"","severity":"major","title":"error ignored","file":"b.go","line":20,"status":"open"}`
	tests := []struct {
		name  string
		parse func() (Result, error)
		want  []ledger.ReportedFinding
	}{
		{
			name: "claude structured_output with findings",
			parse: func() (Result, error) {
				return ParseClaude([]byte(`{"type":"result","subtype":"success","structured_output":{"verdict":"FAIL","review":"r","findings":[` +
					finding + `,{"id":"f2","severity":"critical","title":"x","file":"","line":0,"status":"fixed"}]}}`))
			},
			want: []ledger.ReportedFinding{
				{Severity: domain.Major, Title: "error ignored", File: "b.go", Line: 20, Status: ledger.Open},
				{ID: "F2", Severity: domain.Blocker, Title: "x", Status: ledger.Fixed},
			},
		},
		{
			name: "claude without findings: nil, the verdict alone decides",
			parse: func() (Result, error) {
				return ParseClaude([]byte(`{"structured_output":{"verdict":"PASS","review":"r"}}`))
			},
		},
		{
			name: "claude with no findings: empty, tracked",
			parse: func() (Result, error) {
				return ParseClaude([]byte(`{"structured_output":{"verdict":"PASS","review":"r","findings":[]}}`))
			},
			want: []ledger.ReportedFinding{},
		},
		{
			name: "claude findings that are no list: none",
			parse: func() (Result, error) {
				return ParseClaude([]byte(`{"structured_output":{"verdict":"PASS","review":"r","findings":"none"}}`))
			},
		},
		{
			name: "claude findings in a .result string",
			parse: func() (Result, error) {
				text := "verdict:\n```json\n{\"verdict\":\"FAIL\",\"review\":\"r\",\"findings\":[" + finding + "]}\n```"
				return ParseClaude([]byte(`{"result":` + mustJSON(t, text) + `}`))
			},
			want: []ledger.ReportedFinding{{Severity: domain.Major, Title: "error ignored", File: "b.go", Line: 20, Status: ledger.Open}},
		},
		{
			name: "codex final message with findings",
			parse: func() (Result, error) {
				return ParseCodex([]byte(`{"verdict":"FAIL","review":"r","findings":[` + finding + `]}`))
			},
			want: []ledger.ReportedFinding{{Severity: domain.Major, Title: "error ignored", File: "b.go", Line: 20, Status: ledger.Open}},
		},
		{
			name:  "codex without findings",
			parse: func() (Result, error) { return ParseCodex([]byte(`{"verdict":"PASS","review":"r"}`)) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.parse()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if (tc.want == nil) != (res.Answer().Findings == nil) {
				t.Errorf("Answer().Findings nil = %v, want %v", res.Answer().Findings == nil, tc.want == nil)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseUsage(t *testing.T) {
	t.Run("claude", func(t *testing.T) {
		out := `{"type":"result","subtype":"success","total_cost_usd":0.2,"usage":{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":300,"cache_creation_input_tokens":4000},"structured_output":{"verdict":"PASS","review":"ok"}}`
		res, err := ParseClaude([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Usage{Input: 10, Output: 20, CacheRead: 300, CacheCreation: 4000}, res.Usage); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
		if res.Usage.Total() != 4330 {
			t.Errorf("Total = %d, want 4330", res.Usage.Total())
		}
	})
	tests := []struct {
		name         string
		stdout, errs string
		want         Usage
	}{
		{"nothing reported", "{\"verdict\":\"PASS\"}\n", "done\n", Usage{}},
		{"tokens used on one line", "", "thinking\ntokens used: 1,234\n", Usage{Input: 1234}},
		{"tokens used on the next line", "", "tokens used\n56,789\n", Usage{Input: 56789}},
		{"json events, cached input apart", `{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}}` + "\n" +
			`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":3}}` + "\n", "tokens used: 999\n",
			Usage{Input: 70, CacheRead: 40, Output: 10}},
	}
	for _, tc := range tests {
		t.Run("codex/"+tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseCodexUsage([]byte(tc.stdout), []byte(tc.errs))); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}
