// Command hookbench times the built taskie binary end to end (process start
// included) on the fixtures of SPEC §16 and prints the figures, with each
// command's peak memory piped and on a terminal (a pty made by script(1)).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/benchfix"
)

func main() {
	taskie := flag.String("taskie", "bin/taskie", "taskie binary")
	runs := flag.Int("runs", 200, "runs per scenario")
	flag.Parse()
	if err := run(*taskie, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "hookbench:", err)
		os.Exit(1)
	}
}

type scenario struct {
	name   string
	target time.Duration
	args   []string
	dir    string
	stdin  []byte
	bin    string // another binary than taskie (the reference)
}

// result is one scenario's figures.
type result struct {
	median, p95 time.Duration
	maxRSSKB    int64 // piped
	ttyKB       int64 // stdout on a terminal; -1 when script(1) is missing
}

// memTarget is the memory target of every command: 50 MB.
const memTarget = 50 << 10 // KiB

func run(taskie string, runs int) error {
	tmp, err := os.MkdirTemp("", "taskie-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	small, big, empty, many := filepath.Join(tmp, "p100"), filepath.Join(tmp, "p1000"), filepath.Join(tmp, "none"), filepath.Join(tmp, "p50")
	noop, err := buildNoop(tmp)
	if err != nil {
		return err
	}
	transcript, err := benchfix.Plans(many, 50, 5<<20)
	if err != nil {
		return err
	}
	if _, err := benchfix.Plan(small, 100, 200); err != nil {
		return err
	}
	if _, err := benchfix.Plan(big, 1000, 5000); err != nil {
		return err
	}
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	in := func(cwd string) []byte {
		return []byte(fmt.Sprintf(`{"session_id":"bench","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop"}`, cwd))
	}
	inTranscript := []byte(fmt.Sprintf(`{"session_id":"bench","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop","transcript_path":%q}`, many, transcript))
	ref, err := measure(taskie, scenario{name: "reference", bin: noop, dir: empty}, runs)
	if err != nil {
		return err
	}
	fmt.Printf("%-52s median %7.2f ms  p95 %7.2f ms  peak %5.1f MB piped, %s tty  (a Go process that only starts and exits)\n",
		"reference: start and exit", ms(ref.median), ms(ref.p95), mb(ref.maxRSSKB), ttyMB(ref.ttyKB))
	for _, sc := range []scenario{
		{name: "hook stop, no review due, 100-task plan", target: 10 * time.Millisecond, args: []string{"hook", "stop"}, dir: small, stdin: in(small)},
		{name: "hook stop, no .taskie", target: 5 * time.Millisecond, args: []string{"hook", "stop"}, dir: empty, stdin: in(empty)},
		{name: "hook stop, 50 plans + 5 MB transcript", target: 10 * time.Millisecond, args: []string{"hook", "stop"}, dir: many, stdin: inTranscript},
		{name: "validate, 1,000 tasks + 5,000 review files", target: 100 * time.Millisecond, args: []string{"validate", "big"}, dir: big},
		{name: "status --json, 1,000 tasks", target: 100 * time.Millisecond, args: []string{"status", "--json"}, dir: big},
	} {
		r, err := measure(taskie, sc, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		verdict := "ok"
		if r.median > sc.target || r.maxRSSKB > memTarget || r.ttyKB > memTarget {
			verdict = "OVER TARGET"
		}
		fmt.Printf("%-52s median %7.2f ms  p95 %7.2f ms  peak %5.1f MB piped, %s tty  (target < %v, < 50 MB; %+.2f ms over the reference) %s\n", sc.name,
			ms(r.median), ms(r.p95), mb(r.maxRSSKB), ttyMB(r.ttyKB), sc.target, ms(r.median)-ms(ref.median), verdict)
	}
	return contextSize(taskie, tmp)
}

// contextSize prints the size of `taskie context` for a typical task: two
// dependencies with chain outputs and a few progress entries.
func contextSize(taskie, tmp string) error {
	dir := filepath.Join(tmp, "ctx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	run := func(stdin string, args ...string) ([]byte, error) {
		cmd := exec.Command(taskie, args...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("taskie %s: %v", strings.Join(args, " "), err)
		}
		return out, nil
	}
	if _, err := run("", "plan", "new", "ctx"); err != nil {
		return err
	}
	pd := filepath.Join(dir, ".taskie", "plans", "ctx")
	tasks := "| Id | Status | Title | Depends on |\n|----|--------|-------|------------|\n| 1 | done | Parse the config | |\n| 2 | done | Load the plan | |\n| 3 | pending | Wire the command | 1, 2 |\n"
	if err := os.WriteFile(filepath.Join(pd, "tasks.md"), []byte(tasks), 0o644); err != nil {
		return err
	}
	for i := 1; i <= 3; i++ {
		body := fmt.Sprintf("# Task %d\n\nImplement step %d of the command: read the input, validate it, and write the result atomically.\n\n## Acceptance Criteria\n- [ ] input is validated\n- [ ] output is written atomically\n- [ ] errors name the file\n", i, i)
		if err := os.WriteFile(filepath.Join(pd, fmt.Sprintf("task-%d.md", i)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, t := range []string{"1", "2"} {
		if _, err := run("Summary: task "+t+" done; exposes Load(path) (*Plan, error).\n", "task", "output", t); err != nil {
			return err
		}
	}
	for i := range 6 {
		if _, err := run("", "task", "note", "3", "--did", fmt.Sprintf("session %d: wrote part of the command and its tests", i+1), "--issues", "none", "--next", "finish the wiring"); err != nil {
			return err
		}
	}
	out, err := run("", "context", "3")
	if err != nil {
		return err
	}
	sc := scenario{args: []string{"context", "3"}, dir: dir}
	piped, _ := timePeak(taskie, sc)
	tty := ttyPeak(taskie, sc)
	verdict := "ok"
	if len(out) >= 2048 || piped > memTarget || tty > memTarget {
		verdict = "OVER TARGET"
	}
	fmt.Printf("%-52s %d bytes  peak %5.1f MB piped, %s tty  (target < 2 KB, < 50 MB) %s\n", "context, task with 2 dependencies and 6 sessions",
		len(out), mb(piped), ttyMB(tty), verdict)
	return nil
}

// buildNoop builds the reference: a Go program that starts and exits.
func buildNoop(tmp string) (string, error) {
	dir := filepath.Join(tmp, "noop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module noop\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "noop")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the reference: %v: %s", err, out)
	}
	return bin, nil
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

func measure(taskie string, sc scenario, runs int) (result, error) {
	ds := make([]time.Duration, 0, runs)
	var peak int64
	bin := taskie
	if sc.bin != "" {
		bin = sc.bin
	}
	for range runs {
		cmd := exec.Command(bin, sc.args...)
		cmd.Dir = sc.dir
		cmd.Stdin = bytes.NewReader(sc.stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		ds = append(ds, time.Since(start))
		if err != nil {
			return result{}, fmt.Errorf("%v: %s", err, out.String())
		}
		peak = max(peak, maxRSS(cmd.ProcessState))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if kb, ok := timePeak(bin, sc); ok {
		peak = kb
	}
	return result{median: ds[len(ds)/2], p95: ds[len(ds)*95/100], maxRSSKB: peak, ttyKB: ttyPeak(bin, sc)}, nil
}

// timePeak measures peak memory with GNU time when it is installed: a
// child of this (large) process reports this process's memory as its own
// peak, since it starts as a copy of it; GNU time itself is small.
func timePeak(bin string, sc scenario) (int64, bool) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0, false
	}
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", bin}, sc.args...)...)
	cmd.Dir = sc.dir
	cmd.Stdin = bytes.NewReader(sc.stdin)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if cmd.Run() != nil {
		return 0, false
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	var kb int64
	if _, err := fmt.Sscan(lines[len(lines)-1], &kb); err != nil {
		return 0, false
	}
	return kb, true
}

// ttyPeak measures peak memory with stdout on a terminal: GNU time around
// script(1), which runs the command on a pty (stdin still the scenario's,
// from a file). GNU time reports the larger of script and its child. -1
// when either tool is missing or the run fails.
func ttyPeak(bin string, sc scenario) int64 {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return -1
	}
	script, err := exec.LookPath("script")
	if err != nil {
		return -1
	}
	in, err := os.CreateTemp("", "hookbench-stdin-*")
	if err != nil {
		return -1
	}
	defer os.Remove(in.Name())
	_, werr := in.Write(sc.stdin)
	if err := in.Close(); err != nil || werr != nil {
		return -1
	}
	line := shQuote(bin)
	for _, a := range sc.args {
		line += " " + shQuote(a)
	}
	line += " <" + shQuote(in.Name())
	cmd := exec.Command("/usr/bin/time", "-f", "%M", script, "-qec", line, "/dev/null")
	cmd.Dir = sc.dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if cmd.Run() != nil {
		return -1
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	var kb int64
	if _, err := fmt.Sscan(lines[len(lines)-1], &kb); err != nil {
		return -1
	}
	return kb
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ttyMB formats a terminal peak; "n/a" when it could not be measured.
func ttyMB(kb int64) string {
	if kb < 0 {
		return "  n/a"
	}
	return fmt.Sprintf("%5.1f MB", mb(kb))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
