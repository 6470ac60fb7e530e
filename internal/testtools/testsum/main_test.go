package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"run","Package":"p/a","Test":"TestSkip"}`,
		`{"Action":"output","Package":"p/a","Test":"TestSkip","Output":"=== RUN   TestSkip\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestSkip","Output":"    x_test.go:12: claude is not on PATH (install it with e2e/install-claude.sh)\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}`,
		`{"Action":"skip","Package":"p/a","Test":"TestSkip"}`,
		`{"Action":"pass","Package":"p/a","Elapsed":1.5}`,
		`{"Action":"output","Package":"p/b","Test":"TestBad","Output":"    b_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"p/b","Test":"TestBad"}`,
		`{"Action":"fail","Package":"p/b","Elapsed":0.2}`,
		`# some build error`,
	}, "\n")
	var out bytes.Buffer
	s := &summary{out: &out, output: map[key][]string{}}
	if s.read(strings.NewReader(in)) {
		t.Error("read = true, want false: a test failed")
	}
	for _, want := range []string{
		"ok      p/a\t1.5s",
		"--- FAIL: p/b TestBad\n    b_test.go:3: boom",
		"FAIL    p/b",
		"SKIP p/a TestSkip: claude is not on PATH (install it with e2e/install-claude.sh)",
		"# some build error",
		"1 passed, 1 failed, 1 skipped",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestSummaryShowsFigures: a passing test's output is dropped, but for
// the lines it printed as figures (the fleet test's measurements).
func TestSummaryShowsFigures(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p/f","Test":"TestFleet"}`,
		`{"Action":"output","Package":"p/f","Test":"TestFleet","Output":"    f_test.go:9: a log line\n"}`,
		`{"Action":"output","Package":"p/f","Test":"TestFleet","Output":"figure: fleet 38 claims/s\n"}`,
		`{"Action":"pass","Package":"p/f","Test":"TestFleet"}`,
		`{"Action":"pass","Package":"p/f","Elapsed":30}`,
	}, "\n")
	var out bytes.Buffer
	s := &summary{out: &out, output: map[key][]string{}}
	if !s.read(strings.NewReader(in)) {
		t.Errorf("read = false, want true:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "figure: fleet 38 claims/s\n") {
		t.Errorf("output lacks the figure:\n%s", out.String())
	}
	if strings.Contains(out.String(), "a log line") {
		t.Errorf("output shows a passing test's log:\n%s", out.String())
	}
}

// TestSummaryOfSeveralStreams: the parts of make test write to pipes of
// their own; every stream is counted, and one that cannot be read fails
// the summary.
func TestSummaryOfSeveralStreams(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(`{"Action":"pass","Package":"p/a","Test":"TestA"}`+"\n"+`{"Action":"pass","Package":"p/a","Elapsed":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(`{"Action":"pass","Package":"p/b","Test":"TestB"}`+"\n"+`{"Action":"pass","Package":"p/b","Elapsed":2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &summary{out: &out, output: map[key][]string{}}
	if !s.readFiles([]string{a, b}) {
		t.Errorf("readFiles = false, want true:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "2 passed, 0 failed, 0 skipped") {
		t.Errorf("output lacks both streams' tests:\n%s", out.String())
	}
	out.Reset()
	s = &summary{out: &out, output: map[key][]string{}}
	if s.readFiles([]string{a, filepath.Join(dir, "missing")}) {
		t.Errorf("readFiles with a missing stream = true, want false:\n%s", out.String())
	}
}
