package lifecycle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// BenchmarkDecode reads the records of a 200-task plan, first as a new
// object, then as the object read just before (a command's second look).
func BenchmarkDecode(b *testing.B) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tasks := map[domain.TaskID]Task{}
	for i := 1; i <= 200; i++ {
		tasks[domain.TaskID(i)] = Task{ID: domain.TaskID(i), State: InProgress, Since: at, Created: at,
			Failures: map[State]int{}, Entered: map[State]time.Duration{Pending: 0, Assigned: time.Minute}}
	}
	data := Encode(tasks)
	for _, again := range []bool{false, true} {
		b.Run(fmt.Sprintf("again=%v", again), func(b *testing.B) {
			for b.Loop() {
				if !again {
					decoded = decodeMemo{}
				}
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A second Decode of the same object is a copy: what a caller changes in
// its records never shows in another's.
func TestDecodeAgainIsACopy(t *testing.T) {
	data := []byte(`{"1":{"state":"in_progress","since":"2026-03-01T09:40:00Z","created":"2026-03-01T09:00:00Z","failures":{"testing":1},"time":{"pending":0}}}`)
	if _, err := Decode(data); err != nil {
		t.Fatal(err)
	}
	first, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	r := first[1]
	r.Failures[Testing] = 9
	r.Entered[Pending] = time.Hour
	r.State = Testing
	first[1] = r
	first[2] = Task{ID: 2}
	data[2] = '1' // the caller's bytes, changed after
	second, err := Decode([]byte(`{"1":{"state":"in_progress","since":"2026-03-01T09:40:00Z","created":"2026-03-01T09:00:00Z","failures":{"testing":1},"time":{"pending":0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := second[1]
	if len(second) != 1 || got.State != InProgress || got.Failures[Testing] != 1 || got.Entered[Pending] != 0 {
		t.Errorf("second decode = %+v, want the records as written", second)
	}
}

// quote writes what json.Marshal writes, for plain and escaped strings.
func TestQuoteIsMarshal(t *testing.T) {
	for _, s := range []string{"", "in_progress", "2026-03-01T09:40:00Z", "agent 7", `a"b`, `a\b`, "<x>&", "tab\there", "é", "\x7f", "\u2028", string([]byte{0xff})} {
		var b bytes.Buffer
		quote(&b, s)
		want, _ := json.Marshal(s)
		if b.String() != string(want) {
			t.Errorf("quote(%q) = %s, want %s", s, b.String(), want)
		}
	}
}
