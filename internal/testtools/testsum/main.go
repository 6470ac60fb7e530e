// Command testsum turns `go test -json` into what a person running
// `make test` wants: one line per package as it finishes, the output of
// every failing test, and at the end the totals and the name and reason
// of every skipped test, so a skipped real-client or database test is
// never silent.
//
//	go test -json ./... | go run ./internal/testtools/testsum
//	go run ./internal/testtools/testsum FIFO...
//
// With files (the named pipes that the parts of `make test` running at
// once write to), it reads them all at once, each line whole: several
// `go test -json` writing to one pipe could cut into each other's lines.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

type key struct{ pkg, test string }

type summary struct {
	out                  io.Writer
	output               map[key][]string
	passed, failed, skip int
	skipped              []string
	failedPkgs           []string
}

func main() {
	s := &summary{out: os.Stdout, output: map[key][]string{}}
	ok := false
	if len(os.Args) > 1 {
		ok = s.readFiles(os.Args[1:])
	} else {
		ok = s.read(os.Stdin)
	}
	if !ok {
		os.Exit(1)
	}
}

// readFiles reads every stream at once and reports; it returns false when
// anything failed or a stream could not be read.
func (s *summary) readFiles(paths []string) bool {
	lines := make(chan []byte)
	var wg sync.WaitGroup
	var mu sync.Mutex
	broken := false
	for _, p := range paths {
		wg.Go(func() {
			f, err := os.Open(p)
			if err == nil {
				defer f.Close()
				sc := newScanner(f)
				for sc.Scan() {
					lines <- bytes.Clone(sc.Bytes())
				}
				err = sc.Err()
			}
			if err != nil {
				mu.Lock()
				broken = true
				mu.Unlock()
				lines <- []byte("testsum: " + err.Error())
			}
		})
	}
	go func() { wg.Wait(); close(lines) }()
	for l := range lines {
		s.line(l)
	}
	ok := s.report()
	mu.Lock()
	defer mu.Unlock()
	return ok && !broken
}

func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	return sc
}

// read consumes the stream and reports; it returns false when anything failed.
func (s *summary) read(r io.Reader) bool {
	sc := newScanner(r)
	for sc.Scan() {
		s.line(sc.Bytes())
	}
	return s.report()
}

// line takes one line of `go test -json`.
func (s *summary) line(line []byte) {
	var e event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
		fmt.Fprintln(s.out, string(line)) // not test2json: a build error, say
		return
	}
	s.add(e)
}

func (s *summary) add(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "output", "build-output":
		s.output[k] = append(s.output[k], e.Output)
	case "build-fail":
		s.failedPkgs = append(s.failedPkgs, e.ImportPath)
		fmt.Fprintf(s.out, "FAIL    %s [build failed]\n", e.ImportPath)
	case "pass":
		if e.Test != "" {
			s.passed++
			s.figures(s.output[k])
		} else {
			fmt.Fprintf(s.out, "ok      %s\t%.1fs\n", e.Package, e.Elapsed)
		}
		delete(s.output, k)
	case "skip":
		if e.Test == "" {
			fmt.Fprintf(s.out, "?       %s\t[no test files]\n", e.Package)
			break
		}
		s.skip++
		s.skipped = append(s.skipped, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, skipReason(s.output[k])))
		delete(s.output, k)
	case "fail":
		if e.Test != "" {
			s.failed++
			fmt.Fprintf(s.out, "--- FAIL: %s %s\n%s", short(e.Package), e.Test, strings.Join(s.output[k], ""))
		} else {
			s.failedPkgs = append(s.failedPkgs, e.Package)
			fmt.Fprintf(s.out, "FAIL    %s\t%.1fs\n%s", e.Package, e.Elapsed, strings.Join(s.output[k], ""))
		}
		delete(s.output, k)
	}
}

// figurePrefix starts a line a test prints as a figure of its own: the
// fleet test's measurements, shown by make test even when it passes.
const figurePrefix = "figure: "

// figures prints the figure lines of a test that passed (a failing test's
// are in its output already).
func (s *summary) figures(lines []string) {
	for _, l := range lines {
		if strings.HasPrefix(l, figurePrefix) {
			fmt.Fprint(s.out, l)
		}
	}
}

// skipReason is the message t.Skip printed: the output line after the
// "--- SKIP" header, without the file:line prefix.
func skipReason(lines []string) string {
	var reason string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		if _, after, ok := strings.Cut(l, ".go:"); ok {
			if _, msg, ok := strings.Cut(after, ": "); ok {
				l = msg
			}
		}
		reason = l
	}
	if reason == "" {
		return "(no reason given)"
	}
	return reason
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/taskie-dev/taskie/")
}

func (s *summary) report() bool {
	if len(s.skipped) > 0 {
		sort.Strings(s.skipped)
		fmt.Fprintf(s.out, "\nskipped tests (%d):\n", len(s.skipped))
		for _, l := range s.skipped {
			fmt.Fprintf(s.out, "  SKIP %s\n", l)
		}
	}
	if len(s.failedPkgs) > 0 {
		fmt.Fprintf(s.out, "\nfailed packages: %s\n", strings.Join(s.failedPkgs, ", "))
	}
	fmt.Fprintf(s.out, "\n%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skip)
	return s.failed == 0 && len(s.failedPkgs) == 0
}
