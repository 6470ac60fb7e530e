package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Decode reads what Encode writes without reflection, and reads it as
// encoding/json does; anything else goes to encoding/json.
func TestDecodeScanMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	states := append(States(), "hand-made")
	strs := []string{"", "alice", "vm:repo:.", "é", `q"uote`, "<&>", "abc123"}
	at := []time.Time{time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i := range 300 {
		tasks := map[domain.TaskID]Task{}
		for range rng.IntN(5) {
			id := domain.TaskID(1 + rng.IntN(300))
			tk := Task{ID: id, State: states[rng.IntN(len(states))], Since: at[rng.IntN(2)], Created: at[rng.IntN(2)],
				Failures: map[State]int{}, Entered: map[State]time.Duration{}, Agent: strs[rng.IntN(len(strs))], Head: strs[rng.IntN(len(strs))]}
			for range rng.IntN(3) {
				tk.Failures[states[rng.IntN(len(states))]] = rng.IntN(4)
				tk.Entered[states[rng.IntN(len(states))]] = time.Duration(rng.IntN(9999)) * time.Second
			}
			if rng.IntN(3) == 0 {
				tk.CTOAttempts, tk.EscalatedFrom, tk.Warned = rng.IntN(3), states[rng.IntN(len(states))], Level(1+rng.IntN(3))
			}
			tasks[id] = tk
		}
		data := Encode(tasks)
		if data == nil {
			data = []byte("{}")
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			want, werr := decodeJSON(data)
			got, ok := decodeScan(data)
			if !ok {
				return // left to encoding/json (escapes)
			}
			if werr != nil {
				t.Fatalf("encoding/json refuses %s (%v); the scanner takes it", data, werr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s: read differently (-encoding/json +scanner):\n%s", data, diff)
			}
		})
	}
}

// Records the scanner does not take are read by encoding/json, errors
// included.
func TestDecodeScanLeavesOddRecords(t *testing.T) {
	rec := `"state":"pending","since":"2026-05-01T12:00:00Z","created":"2026-05-01T12:00:00Z"`
	for _, in := range []string{
		`{"1":{` + rec + `,"failures":{"assigned":1.5}}}`,
		`{"1":{` + rec + `,"time":{"assigned":1e3}}}`,
		`{"1":{` + rec + `,"State":"x"}}`,
		`{"1":{` + rec + `,"other":1}}`,
		`{"1":{` + rec + `},"1":{` + rec + `}}`,
		`{"1":{` + rec + `,"agent":"a\u0062"}}`,
		`{"1":{` + rec + `,"warned":"ok"}}`,
		`{"1":{"state":"pending","since":"yesterday","created":"2026-05-01T12:00:00Z"}}`,
		`{"x":{` + rec + `}}`,
		`{"1":{` + rec + `,"failures":null}}`,
		`{"1":{` + rec + `}} trailing`,
	} {
		if _, ok := decodeScan([]byte(in)); ok {
			t.Errorf("%s: taken by the scanner", in)
		}
	}
	if got, ok := decodeScan([]byte(`{"7":{` + rec + `,"failures":{"assigned":2},"time":{"pending":60},"agent":"bob"}}`)); !ok ||
		got[7].Failures[Assigned] != 2 || got[7].Entered[Pending] != time.Minute || got[7].Agent != "bob" {
		t.Errorf("a record as Encode writes it: %v %+v", ok, got[7])
	}
}
