package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Whatever the scanner takes, encoding/json reads the same: any input it
// is unsure of must be left to encoding/json. Run longer with
// go test ./internal/lifecycle -run '^$' -fuzz FuzzDecodeScanAgreesWithJSON -fuzztime 30s
func FuzzDecodeScanAgreesWithJSON(f *testing.F) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Add(Encode(map[domain.TaskID]Task{
		3: {ID: 3, State: Pending, Since: at, Created: at},
		7: {ID: 7, State: Assigned, Since: at, Created: at, Agent: "bob", Head: "8e6a", CTOAttempts: 1, EscalatedFrom: Pending, Warned: 2,
			Failures: map[State]int{Assigned: 2}, Entered: map[State]time.Duration{Pending: time.Minute}},
	}))
	rec := `"state":"pending","since":"2026-05-01T12:00:00Z","created":"2026-05-01T12:00:00Z"`
	for _, s := range []string{
		`{}`, ` { } `, `{"1":{}}`,
		`{"1":{` + rec + `}}`,
		`{"1":{` + rec + `},"1":{` + rec + `}}`,
		`{"01":{` + rec + `},"1":{` + rec + `}}`,
		`{"1":{` + rec + `,"state":"done"}}`,
		`{"1":{` + rec + `,"agent":"a\u0062","head":"é"}}`,
		`{"1":{` + rec + `,"time":{"pending":9007199254740993}}}`,
		`{"1":{` + rec + `,"time":{"pending":-0,"assigned":1e3}}}`,
		`{"1":{` + rec + `,"failures":{"assigned":99999999999999999999}}}`,
		`{"1":{` + rec + `,"cto_attempts":-1,"warned":"alert"}}`,
		`{"1":{` + rec + `,"Agent":"x"}}`,
		"{\"1\":{" + rec + ",\"agent\":\"\xff\"}}",
		`{"1":{"since":"2026-05-01T12:00:00+02:00","created":"2026-05-01T12:00:00.5Z"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeScan(data)
		if !ok {
			return
		}
		want, err := decodeJSON(data)
		if err != nil {
			t.Fatalf("%q: encoding/json refuses it (%v); the scanner takes it", data, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q: read differently (-encoding/json +scanner):\n%s", data, diff)
		}
	})
}
