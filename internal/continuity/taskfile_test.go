package continuity

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ts0 = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

// crlf turns a test text into a CRLF file.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestParseRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"one line no newline", "# Task 1"},
		{"lf", "# Task 1\n\nText.\n\n## Acceptance Criteria\n- [ ] a\n"},
		{"crlf", crlf("# Task 1\n\nText.\n\n## Acceptance Criteria\n- [ ] a\n")},
		{"mixed endings", "a\r\nb\nc\r\n"},
		{"fence", "```md\n## Progress Log\n```\n"},
		{"trailing blanks", "x\n\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.in, string(Parse([]byte(tc.in)).Bytes())); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCriteria(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Criterion
	}{
		{
			name: "section",
			in:   "- [x] outside\n## Acceptance Criteria\n- [ ] one\n* [X] two\n  + [ ]  three \n- [y] not a box\n-[ ] nor this\n## Next\n- [ ] after",
			want: []Criterion{{N: 1, Text: "one"}, {N: 2, Done: true, Text: "two"}, {N: 3, Text: "three"}},
		},
		{
			name: "no section: every checkbox",
			in:   "# T\n- [ ] a\n### Subtask 1.1: x\n- [x] b\n",
			want: []Criterion{{N: 1, Text: "a"}, {N: 2, Done: true, Text: "b"}},
		},
		{
			name: "fenced boxes do not count",
			in:   "## Acceptance Criteria\n```\n- [ ] example\n```\n- [ ] real\n",
			want: []Criterion{{N: 1, Text: "real"}},
		},
		{
			name: "a subtask heading ends the section",
			in:   "## Acceptance Criteria\n- [ ] a\n### Subtask 1.1: x\n- [ ] sub\n",
			want: []Criterion{{N: 1, Text: "a"}},
		},
		{
			name: "a level-3 group stays in the section",
			in:   "## Acceptance Criteria\n### Functional\n- [ ] a\n### Tests\n- [x] b\n",
			want: []Criterion{{N: 1, Text: "a"}, {N: 2, Done: true, Text: "b"}},
		},
		{
			name: "empty section",
			in:   "- [ ] a\n## Acceptance Criteria\n\n## Other\n",
		},
		{
			name: "crlf",
			in:   crlf("## Acceptance Criteria\n- [ ] a\n- [x] b\n"),
			want: []Criterion{{N: 1, Text: "a"}, {N: 2, Done: true, Text: "b"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Parse([]byte(tc.in)).Criteria()
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Criterion{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Criteria (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetCriterion(t *testing.T) {
	const in = "Intro - [ ] not a box\n## Acceptance Criteria\n- [ ] one\n  * [X] two\n\n## Progress Log\n"
	for _, tc := range []struct {
		name    string
		in      string
		n       int
		done    bool
		want    string
		changed bool
		err     bool
	}{
		{name: "check", in: in, n: 1, done: true, changed: true,
			want: "Intro - [ ] not a box\n## Acceptance Criteria\n- [x] one\n  * [X] two\n\n## Progress Log\n"},
		{name: "uncheck", in: in, n: 2, changed: true,
			want: "Intro - [ ] not a box\n## Acceptance Criteria\n- [ ] one\n  * [ ] two\n\n## Progress Log\n"},
		{name: "already checked", in: in, n: 2, done: true, want: in},
		{name: "crlf", in: crlf(in), n: 1, done: true, changed: true,
			want: crlf("Intro - [ ] not a box\n## Acceptance Criteria\n- [x] one\n  * [X] two\n\n## Progress Log\n")},
		{name: "zero", in: in, n: 0, err: true, want: in},
		{name: "too big", in: in, n: 3, err: true, want: in},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(tc.in))
			_, changed, err := f.SetCriterion(tc.n, tc.done)
			var re *RangeError
			if tc.err != errors.As(err, &re) {
				t.Fatalf("err = %v, want a RangeError: %v", err, tc.err)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.want, string(f.Bytes())); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRangeErrorLists(t *testing.T) {
	f := Parse([]byte("## Acceptance Criteria\n- [ ] a\n- [x] b\n"))
	_, _, err := f.SetCriterion(7, true)
	var re *RangeError
	if !errors.As(err, &re) || len(re.Criteria) != 2 {
		t.Fatalf("err = %#v", err)
	}
	want := "  1. [ ] a\n  2. [x] b\n"
	if diff := cmp.Diff(want, FormatCriteria(re.Criteria)); diff != "" {
		t.Errorf("FormatCriteria (-want +got):\n%s", diff)
	}
	if got := err.Error(); !strings.Contains(got, "criterion 7 does not exist") || !strings.Contains(got, "(1-2)") {
		t.Errorf("Error() = %q", got)
	}
}

func TestAddSession(t *testing.T) {
	entry := Entry{Did: "parser", Issues: "", Next: "errors"}
	const s1 = "### Session 1 — 2025-06-01T10:00:00Z\n- **Did**: parser\n- **Issues**: none\n- **Next**: errors\n"
	for _, tc := range []struct {
		name, in, want string
		e              Entry
		n              int
	}{
		{
			name: "no managed section",
			in:   "# Task 1\n\nDo it.\n",
			want: "# Task 1\n\nDo it.\n\n## Progress Log\n\n" + s1,
			n:    1,
		},
		{
			name: "no trailing newline",
			in:   "# Task 1",
			want: "# Task 1\n\n## Progress Log\n\n" + s1,
			n:    1,
		},
		{
			name: "empty file",
			in:   "",
			want: "## Progress Log\n\n" + s1,
			n:    1,
		},
		{
			name: "after the last entry, before the next section",
			in:   "# T\n\n## Progress Log\n\n### Session 4 — x\n- **Did**: a\n\n\n## Chain Output\nkeep\n",
			want: "# T\n\n## Progress Log\n\n### Session 4 — x\n- **Did**: a\n\n" +
				strings.Replace(s1, "Session 1", "Session 5", 1) + "\n\n## Chain Output\nkeep\n",
			n: 5,
		},
		{
			name: "entries without numbers are counted",
			in:   "## Progress Log\n### 2024-05-01\n- Did: a\n### 2024-05-02\n- Did: b\n",
			want: "## Progress Log\n### 2024-05-01\n- Did: a\n### 2024-05-02\n- Did: b\n\n" +
				strings.Replace(s1, "Session 1", "Session 3", 1),
			n: 3,
		},
		{
			name: "numbered after the highest entry, heading with a colon",
			in:   "## progress log:\n### Session 9\n- **Did**: a\n### Session 2\n- **Did**: b\n",
			want: "## progress log:\n### Session 9\n- **Did**: a\n### Session 2\n- **Did**: b\n\n" +
				strings.Replace(s1, "Session 1", "Session 10", 1),
			n: 10,
		},
		{
			name: "crlf",
			in:   crlf("# T\n\n## Progress Log\n"),
			want: crlf("# T\n\n## Progress Log\n\n" + s1),
			n:    1,
		},
		{
			name: "multi-line values stay in their item",
			in:   "# T\n",
			e:    Entry{Did: "a\r\nb\n\n  c", Issues: "x", Next: "y"},
			want: "# T\n\n## Progress Log\n\n### Session 1 — 2025-06-01T10:00:00Z\n- **Did**: a\n  b\n\n    c\n- **Issues**: x\n- **Next**: y\n",
			n:    1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := entry
			if tc.e != (Entry{}) {
				e = tc.e
			}
			f := Parse([]byte(tc.in))
			n, err := f.AddSession(ts0, e)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.n {
				t.Errorf("n = %d, want %d", n, tc.n)
			}
			if diff := cmp.Diff(tc.want, string(f.Bytes())); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddSessionRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Entry
	}{
		{"no did", Entry{Did: "  ", Next: "x"}},
		{"unclosed fence", Entry{Did: "see\n```go\ncode"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const in = "# T\n"
			f := Parse([]byte(in))
			if _, err := f.AddSession(ts0, tc.e); err == nil {
				t.Fatal("no error")
			}
			if got := string(f.Bytes()); got != in {
				t.Errorf("file changed: %q", got)
			}
		})
	}
}

func TestSessions(t *testing.T) {
	in := "## Progress Log\nintro text\n\n" +
		"### Session 2 — 2025-01-01T00:00:00Z\n- **Did**: a\n  more\n\n  after blank\n- **Issues:** b\n- Next: c\n\n" +
		"### 2025-01-02\n* did: d\nfree text\n#### detail\n\n" +
		"### Sessions 1–9 archived\nSessions moved.\n\n" +
		"### Something\nJust prose.\n" +
		"## Chain Output\n### Summary\nx\n"
	want := []Session{
		{N: 2, Heading: "Session 2 — 2025-01-01T00:00:00Z", TS: "2025-01-01T00:00:00Z", Entry: Entry{Did: "a\nmore\n\nafter blank", Issues: "b", Next: "c"}},
		{N: 3, Heading: "2025-01-02", Entry: Entry{Did: "d"}},
		{N: 9, From: 1, Archived: true, Heading: "Sessions 1–9 archived", Text: "Sessions moved."},
		{N: 10, Heading: "Something", Text: "Just prose."},
	}
	got := Parse([]byte(in)).Sessions()
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Session{})); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}
}

// TestSessionFieldsRoundTrip: what AddSession writes, Sessions reads back.
func TestSessionFieldsRoundTrip(t *testing.T) {
	e := Entry{Did: "line one\nline two\n\n    indented code", Issues: "none", Next: "x: y **bold**"}
	f := Parse([]byte(crlf("# T\n")))
	if _, err := f.AddSession(ts0, e); err != nil {
		t.Fatal(err)
	}
	ss := f.Sessions()
	if len(ss) != 1 {
		t.Fatalf("%d sessions", len(ss))
	}
	if diff := cmp.Diff(e, ss[0].Entry); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	if ss[0].TS != "2025-06-01T10:00:00Z" {
		t.Errorf("TS = %q", ss[0].TS)
	}
}

func TestArchive(t *testing.T) {
	var b strings.Builder
	b.WriteString("# T\n\nKeep me.\n\n## Progress Log\nPreamble.\n\n")
	for i := 1; i <= 8; i++ {
		b.WriteString("### Session " + strconv.Itoa(i) + " — ts\n- **Did**: d" + strconv.Itoa(i) + "\n\n")
	}
	b.WriteString("## Chain Output\n\n### Summary\nS\n")
	f := Parse([]byte(b.String()))
	a, ok := f.Archive(5, ".taskie/archive/p/task-1.md")
	if !ok {
		t.Fatal("nothing archived")
	}
	wantMoved := "### Session 1 — ts\n- **Did**: d1\n\n### Session 2 — ts\n- **Did**: d2\n\n### Session 3 — ts\n- **Did**: d3\n\n"
	if diff := cmp.Diff(wantMoved, string(a.Text)); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	if a.From != 1 || a.To != 3 || a.Count != 3 {
		t.Errorf("archived = %d–%d (%d)", a.From, a.To, a.Count)
	}
	want := "# T\n\nKeep me.\n\n## Progress Log\nPreamble.\n\n" +
		"### Sessions 1–3 archived\n" +
		"Sessions 1–3 were archived to `.taskie/archive/p/task-1.md` when this file reached 75 KB; read it only if the history below is not enough. The last 5 sessions follow.\n\n" +
		"### Session 4 — ts\n- **Did**: d4\n\n### Session 5 — ts\n- **Did**: d5\n\n### Session 6 — ts\n- **Did**: d6\n\n" +
		"### Session 7 — ts\n- **Did**: d7\n\n### Session 8 — ts\n- **Did**: d8\n\n" +
		"## Chain Output\n\n### Summary\nS\n"
	if diff := cmp.Diff(want, string(f.Bytes())); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}

	// A second archive replaces the summary and keeps counting from 1.
	for range 3 {
		if _, err := f.AddSession(ts0, Entry{Did: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	a, ok = f.Archive(5, "A")
	if !ok || a.From != 1 || a.To != 6 || a.Count != 3 {
		t.Fatalf("second archive = %+v, %v", a, ok)
	}
	if strings.Contains(string(a.Text), "archived") {
		t.Errorf("the old summary was archived:\n%s", a.Text)
	}
	ss := f.Sessions()
	if len(ss) != 6 || !ss[0].Archived || ss[0].From != 1 || ss[0].N != 6 || ss[1].N != 7 || ss[5].N != 11 {
		t.Errorf("sessions after the second archive: %+v", ss)
	}
	if n, _ := f.AddSession(ts0, Entry{Did: "next"}); n != 12 {
		t.Errorf("next session = %d, want 12", n)
	}

	// Nothing to move.
	if _, ok := Parse([]byte("## Progress Log\n### Session 1\n")).Archive(5, "A"); ok {
		t.Error("archived with one session")
	}
}

func TestParseChainInput(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     ChainOutput
		err      bool
	}{
		{name: "plain text is the summary", in: "\nBuilt the parser.\nSee a.go.\n\n", want: ChainOutput{Summary: "Built the parser.\nSee a.go."}},
		{name: "both parts", in: "### Summary\nS1\n\n### For Downstream Tasks\nD1\n", want: ChainOutput{Summary: "S1", Downstream: "D1"}},
		{name: "section heading and other levels", in: "## Chain Output\n## Summary\nS\n#### Notes for downstream tasks\nD\n", want: ChainOutput{Summary: "S", Downstream: "D"}},
		{name: "text before the headings", in: "lead\n### For Downstream Tasks\nD\n### Summary\nS\n", want: ChainOutput{Summary: "lead\nS", Downstream: "D"}},
		{name: "crlf", in: crlf("### Summary\nS\n"), want: ChainOutput{Summary: "S"}},
		{name: "deeper headings and fenced level-2 headings are kept", in: "S\n#### API\n```md\n## not a heading\n```\n", want: ChainOutput{Summary: "S\n#### API\n```md\n## not a heading\n```"}},
		{name: "empty", in: " \n\n", err: true},
		{name: "only headings", in: "### Summary\n### For Downstream Tasks\n", err: true},
		{name: "level-2 heading", in: "S\n## Design\nx\n", err: true},
		{name: "subtask heading", in: "S\n### Subtask 1.1: x\n", err: true},
		{name: "unclosed fence", in: "S\n```\ncode\n", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChainInput([]byte(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error: %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseChainInput (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ParseChainInput([]byte("")); !errors.Is(err, ErrEmptyOutput) {
		t.Errorf("empty input: %v", err)
	}
}

func TestSetChainOutput(t *testing.T) {
	out := ChainOutput{Summary: "New.", Downstream: "Use X."}
	const block = "## Chain Output\n\n### Summary\nNew.\n\n### For Downstream Tasks\nUse X.\n"
	for _, tc := range []struct {
		name, in, want string
		c              ChainOutput
	}{
		{name: "added at the end", in: "# T\n\nText.\n", want: "# T\n\nText.\n\n" + block},
		{name: "replaced, the rest kept", in: "# T\n\n## Chain Output\nold\n### Summary\nold\n\n\n## Progress Log\nkept\n",
			want: "# T\n\n" + block + "\n\n## Progress Log\nkept\n"},
		{name: "crlf", in: crlf("# T\n\n## Chain Output\n\n### Summary\nold\n"), want: crlf("# T\n\n" + block)},
		{name: "summary only", in: "# T\n", c: ChainOutput{Summary: "S"}, want: "# T\n\n## Chain Output\n\n### Summary\nS\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := out
			if tc.c != (ChainOutput{}) {
				c = tc.c
			}
			f := Parse([]byte(tc.in))
			if err := f.SetChainOutput(c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(f.Bytes())); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			got, ok := Parse(f.Bytes()).ChainOutput()
			if diff := cmp.Diff(c, got); !ok || diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEditsKeepUnrelatedText runs every edit on one file and checks that
// the text outside the managed sections is unchanged.
func TestEditsKeepUnrelatedText(t *testing.T) {
	const head = "# Task 3: Odd file\r\n\r\nTrailing spaces   \r\n\ttab line\r\n```\r\n## Progress Log (in a fence)\r\n- [ ] fenced\r\n```\r\n\r\n### Subtask 3.1: a\r\n- **Status**: done\r\n\r\n"
	const crit = "## Acceptance Criteria\r\n- [ ] one\r\n- [ ] two\r\n\r\n"
	const tail = "## Notes\r\nLast line without newline"
	f := Parse([]byte(head + crit + tail))
	if _, _, err := f.SetCriterion(2, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddSession(ts0, Entry{Did: "d"}); err != nil {
		t.Fatal(err)
	}
	if err := f.SetChainOutput(ChainOutput{Summary: "s"}); err != nil {
		t.Fatal(err)
	}
	got := string(f.Bytes())
	want := head + "## Acceptance Criteria\r\n- [ ] one\r\n- [x] two\r\n\r\n" + tail + "\r\n\r\n" +
		"## Progress Log\r\n\r\n### Session 1 — 2025-06-01T10:00:00Z\r\n- **Did**: d\r\n- **Issues**: none\r\n- **Next**: none\r\n\r\n" +
		"## Chain Output\r\n\r\n### Summary\r\ns\r\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

func TestDescription(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"before the first heading", "# Task 1: X\n\nFirst.\n\n\n\nSecond.  \n## Acceptance Criteria\n- [ ] a\n", "First.\n\nSecond."},
		{"stops at a subtask", "Text\n### Subtask 1.1: a\nmore\n", "Text"},
		{"level-4 headings and fences stay", "Text\n#### Detail\n```\n## x\n```\n## Next\n", "Text\n#### Detail\n```\n## x\n```"},
		{"description section", "# T\n\n## Description\n\nThe goal.\n\n## Acceptance Criteria\n", "The goal."},
		{"nothing", "# T\n## Acceptance Criteria\n- [ ] a\n", ""},
		{"crlf", crlf("# T\n\nA\n\nB\n## X\n"), "A\n\nB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Parse([]byte(tc.in)).Description()); diff != "" {
				t.Errorf("Description (-want +got):\n%s", diff)
			}
		})
	}
}
