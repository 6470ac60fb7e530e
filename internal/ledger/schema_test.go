package ledger

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

// TestSchemaStrict checks Codex's strict mode: every object closed and
// every property required.
func TestSchemaStrict(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal([]byte(SchemaJSON()), &root); err != nil {
		t.Fatalf("SchemaJSON is not JSON: %v", err)
	}
	if strings.ContainsAny(SchemaJSON(), "\n\t") {
		t.Error("SchemaJSON is not compact")
	}
	objects := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if m["type"] == "object" {
			objects++
			checkStrict(t, path, m)
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for k, p := range props {
				walk(path+"."+k, p)
			}
		}
		walk(path+"[]", m["items"])
	}
	walk("$", root)
	if objects != 2 {
		t.Errorf("schema has %d objects, want 2 (answer, finding)", objects)
	}
}

func checkStrict(t *testing.T, path string, obj map[string]any) {
	t.Helper()
	if obj["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties is %v, want false", path, obj["additionalProperties"])
	}
	var props, required []string
	for k := range obj["properties"].(map[string]any) {
		props = append(props, k)
	}
	for _, r := range obj["required"].([]any) {
		required = append(required, r.(string))
	}
	slices.Sort(props)
	slices.Sort(required)
	if diff := cmp.Diff(props, required); diff != "" {
		t.Errorf("%s: required differs from properties (-properties +required):\n%s", path, diff)
	}
}

// TestSchemaMatchesTypes checks the schema's property names against the
// JSON names of Answer and ReportedFinding, and its enums against domain.
func TestSchemaMatchesTypes(t *testing.T) {
	full := `{"verdict":"FAIL","review":"r","findings":[{"id":"F1","severity":"nit","title":"t","file":"f","line":2,"status":"fixed"}]}`
	var a Answer
	if err := json.Unmarshal([]byte(full), &a); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(a)
	if string(back) != full {
		t.Errorf("Answer round trip:\n got %s\nwant %s", back, full)
	}
	for _, want := range []string{
		`"enum":["PASS","FAIL"]`,
		`"enum":["` + string(domain.Blocker) + `","` + string(domain.Major) + `","` + string(domain.Minor) + `","` + string(domain.Nit) + `"]`,
		`"enum":["` + string(Open) + `","` + string(Fixed) + `"]`,
		`"line":{"type":"integer"`,
	} {
		if !strings.Contains(SchemaJSON(), want) {
			t.Errorf("schema lacks %s", want)
		}
	}
}

func TestDecodeAnswer(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Answer
		wantErr string
	}{
		{
			name: "full answer",
			in:   `{"verdict":"FAIL","review":"# R","findings":[{"id":"","severity":"major","title":"t","file":"a.go","line":3,"status":"open"}]}`,
			want: Answer{Verdict: domain.Fail, Review: "# R", Findings: []ReportedFinding{
				{Severity: domain.Major, Title: "t", File: "a.go", Line: 3, Status: Open}}},
		},
		{
			name: "no findings: verdict alone",
			in:   `{"verdict":"PASS","review":"ok"}`,
			want: Answer{Verdict: domain.Pass, Review: "ok"},
		},
		{
			name: "null findings: verdict alone",
			in:   `{"verdict":"PASS","review":"ok","findings":null}`,
			want: Answer{Verdict: domain.Pass, Review: "ok"},
		},
		{
			name: "empty findings: tracked, none",
			in:   `{"verdict":"PASS","review":"ok","findings":[]}`,
			want: Answer{Verdict: domain.Pass, Review: "ok", Findings: []ReportedFinding{}},
		},
		{
			name: "lenient fields",
			in: `{"verdict":" pass ","extra":1,"findings":[
				{"id":3,"severity":"Critical","title":" two\n lines ","file":"./x.go","line":"12","status":"resolved","more":true},
				{"id":"f4","severity":"weird","title":"u","line":-1},
				"not an object"]}`,
			want: Answer{Verdict: domain.Pass, Findings: []ReportedFinding{
				{ID: "F3", Severity: domain.Blocker, Title: "two lines", File: "x.go", Line: 12, Status: Fixed},
				{ID: "F4", Severity: domain.Major, Title: "u", Status: Open}}},
		},
		{name: "missing verdict", in: `{"review":"r","findings":[]}`, wantErr: "reviewer answer: no verdict"},
		{name: "invalid verdict", in: `{"verdict":"MAYBE"}`, wantErr: `reviewer answer: invalid verdict "MAYBE" (want PASS or FAIL)`},
		{name: "not an object", in: `[1]`, wantErr: "reviewer answer: not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAnswer([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want prefix %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if (got.Findings == nil) != (tc.want.Findings == nil) {
				t.Errorf("Findings nil = %v, want %v", got.Findings == nil, tc.want.Findings == nil)
			}
		})
	}
}
