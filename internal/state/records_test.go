package state

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// splitRecords reads taskie's own lifecycle form as json.Unmarshal does,
// and leaves every other form (nil) to it.
func TestSplitRecordsIsUnmarshal(t *testing.T) {
	tests := []struct {
		name, data string
		split      bool
	}{
		{"empty object", `{}`, true},
		{"records in order", `{"1":{"state":"pending","since":"x"},"2":{"state":"assigned","time":{"a":1},"s":"}{\"\\"},"10":{}}`, true},
		{"ids out of order", `{"2":{},"1":{}}`, false},
		{"same id twice", `{"1":{"a":1},"1":{"a":2}}`, false},
		{"ids equal as numbers", `{"1":{},"01":{}}`, false},
		{"spaces", `{"1": {}}`, false},
		{"space in a record", `{"1":{"a": 1}}`, false},
		{"escaped key", `{"\u0031":{}}`, false},
		{"record no object", `{"1":3}`, false},
		{"invalid", `{"1":{"a":tru}}`, false},
		{"trailing comma", `{"1":{},}`, false},
		{"null", `null`, false},
		{"array", `[{}]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitRecords([]byte(tt.data))
			if (got != nil) != tt.split {
				t.Fatalf("splitRecords(%s) = %v, want split %v", tt.data, got, tt.split)
			}
			var want map[string]json.RawMessage
			if json.Unmarshal([]byte(tt.data), &want) != nil {
				want = nil
			}
			if got == nil {
				return
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("splitRecords(%s) differs from json.Unmarshal (-want +got):\n%s", tt.data, d)
			}
		})
	}
}

// Merging into taskie's compact form writes what merging into any other
// form of the same records writes.
func TestMergeLifecycleOfEitherForm(t *testing.T) {
	compact := `{"1":{"state":"pending","time":{"a":1}},"2":{"state":"assigned"},"10":{"state":"done"}}`
	spaced := `{"10":{"state":"done"}, "1":{"state":"pending", "time":{"a":1}},"2":{"state":"assigned"}}`
	patches := []map[string]json.RawMessage{
		{"2": json.RawMessage(`{"state":"in_progress"}`)},
		{"2": json.RawMessage(`null`), "3": json.RawMessage(`{ "state" : "pending" }`)},
		{"1": json.RawMessage(`{"state":"x"}`), "10": json.RawMessage(`{}`)},
	}
	for _, p := range patches {
		fast, err := mergeLifecycle(LifecycleJSON(compact), p)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := mergeLifecycle(LifecycleJSON(spaced), p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(slow), string(fast)); d != "" {
			t.Errorf("merge of %v (-other form +compact form):\n%s", p, d)
		}
	}
}
