// Command hookbench times the built taskie binary end to end (process start
// included) on the fixtures of SPEC §16 and prints the figures.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
}

func run(taskie string, runs int) error {
	tmp, err := os.MkdirTemp("", "taskie-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	small, big, empty := filepath.Join(tmp, "p100"), filepath.Join(tmp, "p1000"), filepath.Join(tmp, "none")
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
	for _, sc := range []scenario{
		{"hook stop, no review due, 100-task plan", 10 * time.Millisecond, []string{"hook", "stop"}, small, in(small)},
		{"hook stop, no .taskie", 5 * time.Millisecond, []string{"hook", "stop"}, empty, in(empty)},
		{"validate, 1,000 tasks + 5,000 review files", 100 * time.Millisecond, []string{"validate", "big"}, big, nil},
		{"status --json, 1,000 tasks", 100 * time.Millisecond, []string{"status", "--json"}, big, nil},
	} {
		ds, err := measure(taskie, sc, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		verdict := "ok"
		if ds[len(ds)/2] > sc.target {
			verdict = "OVER TARGET"
		}
		fmt.Printf("%-45s median %7.2f ms  p95 %7.2f ms  (target < %v) %s\n", sc.name,
			ms(ds[len(ds)/2]), ms(ds[len(ds)*95/100]), sc.target, verdict)
	}
	return nil
}

func measure(taskie string, sc scenario, runs int) ([]time.Duration, error) {
	ds := make([]time.Duration, 0, runs)
	for range runs {
		cmd := exec.Command(taskie, sc.args...)
		cmd.Dir = sc.dir
		cmd.Stdin = bytes.NewReader(sc.stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		ds = append(ds, time.Since(start))
		if err != nil {
			return nil, fmt.Errorf("%v: %s", err, out.String())
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
