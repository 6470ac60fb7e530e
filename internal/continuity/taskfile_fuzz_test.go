package continuity_test

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/continuity"
)

// FuzzTaskFile feeds arbitrary task-{T}.md content to the task file parser:
// it never fails, keeps every byte, reads the same sessions and criteria
// from what it writes, and checking a criterion changes only that box.
// Seeds: f.Add below and testdata/fuzz/FuzzTaskFile.
func FuzzTaskFile(f *testing.F) {
	for _, s := range []string{
		"# Task 1: Parser\n\nParse the input.\n\n## Acceptance Criteria\n- [ ] parses\n- [x] tested\n\n## Progress Log\n\n### Session 1 — 2025-06-01T10:00:00Z\n- **Did**: wrote it\n- **Issues**: none\n- **Next**: tests\n",
		"## Progress Log\r\n### Sessions 1–4 archived\r\nSessions 1–4 were archived.\r\n### Session 5\r\n- Did: more\r\n  continued\r\n",
		"## Acceptance Criteria\n```\n- [ ] in a fence\n## Progress Log\n",
		"- [X] no section\n* [ ] star\n+ [y] not a box\n### Subtask 1.1: x\n",
		"## Chain Output\n### Summary\nDone.\n### For Downstream Tasks\nUse X.\n",
		"### Session\n### Session 99999999999999999999\n### sessions - archived\n",
		"# Task 2\n\n```go\nfunc unclosed() {\n",
		"## Progress Log\n\n### Session 1\n- **Did**: a\n~~~~\nstill open\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tf := continuity.Parse(data)
		if out := tf.Bytes(); !bytes.Equal(out, data) {
			t.Fatalf("Bytes changed the file:\nin:  %q\nout: %q", data, out)
		}
		if tf.Len() != len(data) {
			t.Fatalf("Len = %d, file has %d bytes", tf.Len(), len(data))
		}
		sessions, criteria := tf.Sessions(), tf.Criteria()
		for i, c := range criteria {
			if c.N != i+1 {
				t.Fatalf("criterion %d numbered %d", i+1, c.N)
			}
		}
		_ = tf.Title()
		_ = tf.Description()
		_, _ = tf.ChainOutput()

		again := continuity.Parse(tf.Bytes())
		if s2 := again.Sessions(); !reflect.DeepEqual(sessions, s2) {
			t.Fatalf("sessions differ after a round trip:\nfirst: %+v\nagain: %+v", sessions, s2)
		}
		if c2 := again.Criteria(); !reflect.DeepEqual(criteria, c2) {
			t.Fatalf("criteria differ after a round trip:\nfirst: %+v\nagain: %+v", criteria, c2)
		}

		// A session added is read back as the next session, whatever the
		// file ends with (an unclosed code block included).
		added := continuity.Parse(data)
		if n, err := added.AddSession(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), continuity.Entry{Did: "fuzzed"}); err == nil {
			ss := continuity.Parse(added.Bytes()).Sessions()
			if len(ss) != len(sessions)+1 || !slices.ContainsFunc(ss, func(s continuity.Session) bool { return s.N == n }) {
				t.Fatalf("AddSession = %d: sessions %+v, then %+v in %q", n, sessions, ss, added.Bytes())
			}
		}

		// Toggling the first criterion changes its box only; toggling it
		// back restores the file.
		if len(criteria) == 0 {
			return
		}
		c := criteria[0]
		got, changed, err := again.SetCriterion(1, !c.Done)
		if err != nil || !changed || got.Done == c.Done {
			t.Fatalf("SetCriterion(1, %v) = %+v, %v, %v", !c.Done, got, changed, err)
		}
		edited := again.Bytes()
		if len(edited) != len(data) {
			t.Fatalf("checking a box changed the file size: %d to %d", len(data), len(edited))
		}
		re := continuity.Parse(edited)
		want := append([]continuity.Criterion(nil), criteria...)
		want[0].Done = !c.Done
		if got := re.Criteria(); !reflect.DeepEqual(want, got) {
			t.Fatalf("criteria after SetCriterion(1):\nwant: %+v\ngot:  %+v", want, got)
		}
		if got := re.Sessions(); !reflect.DeepEqual(sessions, got) {
			t.Fatalf("SetCriterion changed the sessions:\nbefore: %+v\nafter:  %+v", sessions, got)
		}
		if _, _, err := re.SetCriterion(1, c.Done); err != nil {
			t.Fatal(err)
		}
		if !restored(data, re.Bytes()) {
			t.Fatalf("toggling a box twice did not restore the file:\nin:  %q\nout: %q", data, re.Bytes())
		}
		if _, _, err := re.SetCriterion(len(criteria)+1, true); err == nil {
			t.Fatalf("SetCriterion(%d) of %d criteria did not fail", len(criteria)+1, len(criteria))
		}
	})
}

// restored reports whether out is in, but for an "[X]" that may have been
// rewritten as "[x]".
func restored(in, out []byte) bool {
	if len(in) != len(out) {
		return false
	}
	diffs := 0
	for i := range in {
		if in[i] != out[i] {
			if in[i] != 'X' || out[i] != 'x' {
				return false
			}
			diffs++
		}
	}
	return diffs <= 1
}
