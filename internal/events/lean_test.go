package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLean(t *testing.T) {
	line := `{"ts":"2026-03-01T09:00:00Z","plan":"p","task":"3","event":"FAILURE","from":"quality_review","to":"quality_review",` +
		`"actor":"hook","reason":"tests \"red\"\nagain \u00e9","meta":{"failures":2,"nested":{"a":[1,"}"]}},"set":{"lifecycle":{"3":{"state":"x"}}},"sha":"ab"}`
	var l Lean
	if err := ParseLean([]byte(line), &l); err != nil {
		t.Fatal(err)
	}
	want := Lean{Raw: []byte(line), TS: "2026-03-01T09:00:00Z", Plan: "p", Task: "3", Event: "FAILURE", From: "quality_review",
		To: "quality_review", Actor: "hook", Reason: "tests \"red\"\nagain é", Meta: []byte(`{"failures":2,"nested":{"a":[1,"}"]}}`)}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("ParseLean (-want +got):\n%s", diff)
	}
	if n, ok := MetaNumber(l.Meta, "failures"); !ok || n != 2 {
		t.Errorf("MetaNumber = %v, %v", n, ok)
	}
	if v, ok := MetaValue(l.Meta, "nested"); !ok || string(v) != `{"a":[1,"}"]}` {
		t.Errorf("MetaValue = %s, %v", v, ok)
	}
	if _, ok := MetaValue(l.Meta, "a"); ok {
		t.Error("MetaValue looked into a nested object")
	}
}

func TestParseLeanLoose(t *testing.T) {
	var l Lean
	if err := ParseLean([]byte(` { "task" : 3 , "event":"X", "plan":null, "meta":[1] } `), &l); err != nil {
		t.Fatal(err)
	}
	if l.Task != "3" || l.Event != "X" || l.Plan != "" || l.Meta != nil {
		t.Errorf("got %+v", l)
	}
}

func TestParseLeanErrors(t *testing.T) {
	for _, bad := range []string{
		`{"ts":"2026`, `{"ts":"x",`, `{"ts":"x"`, `{"a":{"b":[1,2}}`, `{"a":tru}`, `{"a":1}}`, `{"a":1} x`,
		`[1]`, `null`, `{"a" 1}`, `{a:1}`, `{"a":}`, `{"a":"\"}`, `{"a":1,}`,
	} {
		var l Lean
		if err := ParseLean([]byte(bad), &l); err == nil {
			t.Errorf("ParseLean(%s) succeeded", bad)
		}
	}
}

// FuzzParseLean checks the lean parser against encoding/json: a line that
// decodes as an event decodes leanly to the same text fields, and no
// proper prefix of such a line (a torn write) parses.
func FuzzParseLean(f *testing.F) {
	for _, s := range []string{
		`{"ts":"2026-03-01T09:00:00Z","plan":"p","task":"3","event":"PHASE_CHANGE","from":"a","to":"b","meta":{"x":[1,{"y":"]"}]}}`,
		`{"event":"E","reason":"\\\"quoted\\\" \u2028 \t"}`,
		`{"set":{"a":"}"},"event":"X"}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		var e struct {
			TS, Plan, Task, Event, From, To, Actor, Reason string
			Meta                                           json.RawMessage
		}
		var probe map[string]json.RawMessage
		if json.Unmarshal(line, &probe) != nil || json.Unmarshal(line, &e) != nil || !caseExact(probe) {
			return
		}
		var l Lean
		if err := ParseLean(line, &l); err != nil {
			t.Fatalf("ParseLean(%s): %v", line, err)
		}
		got := []string{l.TS, l.Plan, l.Task, l.Event, l.From, l.To, l.Actor, l.Reason}
		want := []string{e.TS, e.Plan, e.Task, e.Event, e.From, e.To, e.Actor, e.Reason}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("ParseLean(%s) (-json +lean):\n%s", line, diff)
		}
		for i := 1; i < len(line); i++ {
			if len(bytes.TrimSpace(line[:i])) == len(line) {
				continue
			}
			if bytes.Equal(bytes.TrimSpace(line[:i]), line) {
				continue
			}
			if ParseLean(line[:i], &l) == nil {
				t.Fatalf("torn prefix %q parses", line[:i])
			}
		}
	})
}

// caseExact reports whether every key the lean parser reads is spelled
// as it expects (encoding/json matches keys case-insensitively) and holds
// a string or null, and whether no key repeats with another case.
func caseExact(m map[string]json.RawMessage) bool {
	seen := map[string]bool{}
	for k, v := range m {
		low := strings.ToLower(k)
		if seen[low] {
			return false
		}
		seen[low] = true
		switch low {
		case "ts", "plan", "task", "event", "from", "to", "actor", "reason":
			if k != low || (len(v) > 0 && v[0] != '"' && string(v) != "null") {
				return false
			}
		}
	}
	return true
}

// sampleLog is n events of a few tasks, the last line torn when torn.
func sampleLog(n int, torn bool) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		task := ""
		if rng.IntN(4) > 0 {
			task = fmt.Sprintf(`"task":"%d",`, rng.IntN(12)+1)
		}
		fmt.Fprintf(&b, `{"ts":"2026-03-01T09:%02d:%02dZ","plan":"p",%s"event":"E%d","reason":"line %d","meta":{"i":%d}}`+"\n",
			i/60%60, i%60, task, rng.IntN(3), i, i)
		if i%7 == 0 {
			b.WriteString("\n")
		}
	}
	if torn {
		b.WriteString(`{"ts":"2026-03-01T10:00:00Z","plan":"p","task":"3","event":"TO`)
	}
	return b.Bytes()
}

type seen struct {
	lines []int
	task  []string
	warns int
}

func scan(t *testing.T, data []byte, f Filter) seen {
	t.Helper()
	var s seen
	err := ScanLean(bytes.NewReader(data), "events.jsonl", f, func(l *Lean) error {
		s.lines = append(s.lines, l.Line)
		s.task = append(s.task, l.Task)
		return nil
	}, func(string) { s.warns++ })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestScanLeanFilter: the byte pre-filter keeps exactly what decoding
// every line and comparing would keep, hand-written lines included.
func TestScanLeanFilter(t *testing.T) {
	data := append(sampleLog(500, false), []byte(`{"task": "3", "event":"SPACED"}`+"\n"+`{"task":3,"event":"NUMBER"}`+"\n"+
		`{"event":"META","meta":{"task":"3"}}`+"\n")...)
	all := scan(t, data, Filter{})
	var want []int
	for i, task := range all.task {
		if task == "3" {
			want = append(want, all.lines[i])
		}
	}
	got := scan(t, data, Filter{Task: "3"})
	if diff := cmp.Diff(want, got.lines); diff != "" {
		t.Errorf("task filter (-want +got):\n%s", diff)
	}
	if len(got.lines) < 30 {
		t.Errorf("only %d events of task 3", len(got.lines))
	}
	kinds := scan(t, data, Filter{Kinds: []string{"SPACED", "NUMBER"}})
	if len(kinds.lines) != 2 {
		t.Errorf("kind filter kept %v", kinds.lines)
	}
}

// TestScanLeanTail: the last n events, read backwards in small chunks,
// are the last n of a forward scan; a torn last line is a warning.
func TestScanLeanTail(t *testing.T) {
	old := tailChunk
	t.Cleanup(func() { tailChunk = old })
	data := sampleLog(300, true)
	fwd := scan(t, data, Filter{})
	if fwd.warns != 1 {
		t.Fatalf("forward scan: %d warnings", fwd.warns)
	}
	for _, chunk := range []int{7, 64, 100, 1 << 20} {
		tailChunk = chunk
		for _, n := range []int{1, 2, 50, 300, 1000} {
			var got []string
			warns := 0
			err := ScanLeanTail(bytes.NewReader(data), int64(len(data)), "events.jsonl", n, Filter{}, func(l *Lean) error {
				got = append(got, l.Reason)
				return nil
			}, func(string) { warns++ })
			if err != nil {
				t.Fatal(err)
			}
			want := []string{}
			for i := max(0, 300-n) + 1; i <= 300; i++ {
				want = append(want, fmt.Sprintf("line %d", i))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("chunk %d, n %d (-want +got):\n%s", chunk, n, diff)
			}
			if warns != 1 {
				t.Errorf("chunk %d, n %d: %d warnings, want the torn line's", chunk, n, warns)
			}
		}
	}
}

// TestScanLeanMatchesScanReader: on the fuzz corpus' kind of input, the
// lean scan reads the lines encoding/json reads and warns on the others.
func TestScanLeanMatchesScanReader(t *testing.T) {
	data := sampleLog(200, true)
	var full []string
	if err := ScanReader(bytes.NewReader(data), "x", func(e Event) { full = append(full, e.Reason) }, func(string) {}); err != nil {
		t.Fatal(err)
	}
	var lean []string
	err := ScanLean(bytes.NewReader(data), "x", Filter{}, func(l *Lean) error { lean = append(lean, l.Reason); return nil }, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, lean); diff != "" {
		t.Errorf("(-full +lean):\n%s", diff)
	}
}
