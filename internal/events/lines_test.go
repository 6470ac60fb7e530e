package events

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanLines(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name, in string
		max      int
		lines    []string // "n:text"
		tooLong  []int
	}{
		{"plain", "a\nbb\n", 10, []string{"1:a", "2:bb"}, nil},
		{"no final newline", "a\nbb", 10, []string{"1:a", "2:bb"}, nil},
		{"empty lines kept", "a\n\nb\n", 10, []string{"1:a", "2:", "3:b"}, nil},
		{"at the limit", "0123456789\n", 10, []string{"1:0123456789"}, nil},
		{"over the limit, in the middle", "a\n" + long + "\nb\n", 10, []string{"1:a", "3:b"}, []int{2}},
		{"over the limit, last and torn", "a\n" + long, 10, []string{"1:a"}, []int{2}},
		{"longer than the read buffer", "a\n" + strings.Repeat("y", 200<<10) + "\nb\n", 300 << 10,
			[]string{"1:a", "2:" + strings.Repeat("y", 200<<10), "3:b"}, nil},
		{"longer than the read buffer and the limit", "a\n" + strings.Repeat("y", 200<<10) + "\nb\n", 100 << 10,
			[]string{"1:a", "3:b"}, []int{2}},
		{"empty input", "", 10, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			var tooLong []int
			err := ScanLines(strings.NewReader(tc.in), tc.max, func(n int, line []byte) error {
				lines = append(lines, strconv.Itoa(n)+":"+string(line))
				return nil
			}, func(n int) { tooLong = append(tooLong, n) })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tooLong, tooLong); diff != "" {
				t.Errorf("too long (-want +got):\n%s", diff)
			}
		})
	}
}

// One event line over 16 MiB is skipped with a warning naming the file and
// its line; the events after it are read (it once ended every scan with
// "bufio.Scanner: token too long", naming no file).
func TestScanSkipsAHugeLine(t *testing.T) {
	huge := `{"event":"NOTE","reason":"` + strings.Repeat("x", MaxLine) + `"}`
	log := `{"event":"A","task":"1"}` + "\n" + huge + "\n" + `{"event":"B","task":"1"}` + "\n"
	wantWarn := []string{"plan/events.jsonl:2: skipped an event line longer than 16 MiB (not read)"}

	var kinds, warns []string
	err := ScanReader(bytes.NewReader([]byte(log)), "plan/events.jsonl", func(e Event) { kinds = append(kinds, e.Event) },
		func(w string) { warns = append(warns, w) })
	if err != nil {
		t.Fatalf("ScanReader: %v", err)
	}
	if diff := cmp.Diff([]string{"A", "B"}, kinds); diff != "" {
		t.Errorf("ScanReader events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantWarn, warns); diff != "" {
		t.Errorf("ScanReader warnings (-want +got):\n%s", diff)
	}

	kinds, warns = nil, nil
	err = ScanLean(bytes.NewReader([]byte(log)), "plan/events.jsonl", Filter{Task: "1"}, func(l *Lean) error {
		kinds = append(kinds, l.Event)
		return nil
	}, func(w string) { warns = append(warns, w) })
	if err != nil {
		t.Fatalf("ScanLean: %v", err)
	}
	if diff := cmp.Diff([]string{"A", "B"}, kinds); diff != "" {
		t.Errorf("ScanLean events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantWarn, warns); diff != "" {
		t.Errorf("ScanLean warnings (-want +got):\n%s", diff)
	}
}
