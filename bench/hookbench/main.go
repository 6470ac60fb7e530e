// Command hookbench times the built taskie binary end to end (process start
// included) on the fixtures of docs/performance.md and prints the figures, with each
// command's peak memory piped and on a terminal (a pty made by script(1)).
// The start-up rows run three programs in turn: taskie, a bare Go program
// that reads stdin (the targets' reference) and bench/depsfloor, the same
// program linking every package taskie imports from outside its module
// (the floor of one binary that links them: what taskie costs above it is
// its own).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/benchfix"
)

func main() {
	taskie := flag.String("taskie", "bin/taskie", "taskie binary")
	runs := flag.Int("runs", 200, "runs per scenario")
	floor := flag.String("floor", "./bench/depsfloor", "the package of the linked-dependencies floor (built here)")
	reads := flag.Bool("reads", false, "only the plan reads on 1,000 and 10,000 tasks")
	fixtures := flag.String("fixtures", "", "with -reads: write the 1,000- and 10,000-task plans under this directory and exit")
	before := flag.String("before", "", "with -reads: another taskie binary, timed in turn with -taskie on each row")
	startup := flag.Bool("startup", false, "only --version and the hook rows, against the bare program and the floor")
	flag.Parse()
	err := error(nil)
	if *reads {
		err = readsOnly(*taskie, *before, *runs, *fixtures)
	} else {
		err = run(*taskie, *floor, *runs, *startup)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookbench:", err)
		os.Exit(1)
	}
}

type scenario struct {
	name   string
	target time.Duration // an absolute target; 0 when the target is a ratio
	ratio  float64       // the target as a ratio to the reference, measured pair by pair
	memKB  int64         // the peak memory target
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
	faults      int64 // minor page faults, median
	// With references run in turn (A B C A B C ...): each one's median and
	// page faults, and the median of the per-run ratios, which a drift of
	// the machine's speed during the run does not move. The first is the
	// bare binary the targets name, the second the floor.
	refs []refResult
}

type refResult struct {
	median time.Duration
	faults int64
	ratio  float64
}

// memTarget is the memory target of every command: 50 MB; hookMem that of
// the hook and --version, which every agent stop pays.
const (
	memTarget = 50 << 10 // KiB
	hookMem   = 15 << 10
)

func run(taskie, floorPkg string, runs int, startupOnly bool) error {
	tmp, err := os.MkdirTemp("", "taskie-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tiny, small, big, empty, many := filepath.Join(tmp, "p20"), filepath.Join(tmp, "p100"), filepath.Join(tmp, "p1000"), filepath.Join(tmp, "none"), filepath.Join(tmp, "p50")
	bare, err := buildBare(tmp)
	if err != nil {
		return err
	}
	floor, err := buildFloor(tmp, floorPkg)
	if err != nil {
		return err
	}
	for _, b := range []*string{&taskie, &bare, &floor} {
		if *b, err = installed(tmp, *b); err != nil {
			return err
		}
	}
	transcript, err := benchfix.Plans(many, 50, 5<<20)
	if err != nil {
		return err
	}
	if _, err := benchfix.Plan(tiny, 20, 40); err != nil {
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
	fmt.Printf("load average %s; each start-up row runs taskie, the bare binary and the floor in turn (%d rounds), ratios round by round, medians\n", loadavg(), runs)
	ref, err := measure(scenario{name: "reference", bin: bare, dir: empty, stdin: in(empty)}, runs)
	if err != nil {
		return err
	}
	fmt.Printf("%-52s median %7.2f ms  p95 %7.2f ms  peak %5.1f MB piped, %s tty, %d page faults  (a Go program that reads stdin and exits)\n",
		"reference: bare Go binary", ms(ref.median), ms(ref.p95), mb(ref.maxRSSKB), ttyMB(ref.ttyKB), ref.faults)
	fl, err := measurePair(scenario{bin: floor, dir: empty, stdin: in(empty)}, runs, scenario{bin: bare, dir: empty, stdin: in(empty)})
	if err != nil {
		return fmt.Errorf("the floor: %w", err)
	}
	fmt.Printf("%-52s median %7.2f ms  p95 %7.2f ms  peak %5.1f MB piped, %s tty, %d page faults  bare %.2f ms, %d faults: %.2fx  (the same program linking every package taskie imports: the floor of one taskie binary)\n",
		"reference: linked dependencies only", ms(fl.median), ms(fl.p95), mb(fl.maxRSSKB), ttyMB(fl.ttyKB), fl.faults, ms(fl.refs[0].median), fl.refs[0].faults, fl.refs[0].ratio)
	bareSc, floorSc := scenario{bin: bare}, scenario{bin: floor}
	for _, sc := range []scenario{
		{name: "taskie --version", ratio: 1.5, memKB: hookMem, args: []string{"--version"}, dir: empty},
		{name: "hook stop, no review due, 20-task plan", ratio: 1.5, memKB: hookMem, args: []string{"hook", "stop"}, dir: tiny, stdin: in(tiny)},
		{name: "hook stop, no review due, 100-task plan", ratio: 1.5, memKB: hookMem, args: []string{"hook", "stop"}, dir: small, stdin: in(small)},
		{name: "hook stop, outside a taskie project", ratio: 1.2, memKB: hookMem, args: []string{"hook", "stop"}, dir: empty, stdin: in(empty)},
		{name: "hook stop, 50 plans + 5 MB transcript", ratio: 2, memKB: hookMem, args: []string{"hook", "stop"}, dir: many, stdin: inTranscript},
	} {
		sc.bin = taskie
		var r result
		if sc.ratio > 0 {
			bareSc.dir, bareSc.stdin = sc.dir, sc.stdin
			floorSc.dir, floorSc.stdin = sc.dir, sc.stdin
			r, err = measurePair(sc, runs, bareSc, floorSc)
		} else {
			r, err = measure(sc, runs)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		over := r.maxRSSKB > sc.memKB || r.ttyKB > sc.memKB
		if sc.ratio > 0 {
			b, f := r.refs[0], r.refs[1]
			over = over || b.ratio > sc.ratio
			fmt.Printf("%-52s median %7.2f ms  p95 %7.2f ms  peak %5.1f MB piped, %s tty, %d page faults  bare %.2f ms, %d faults: %.2fx  (target <= %.1fx, < %d MB) %s;  floor %.2f ms, %d faults: %.2fx\n", sc.name,
				ms(r.median), ms(r.p95), mb(r.maxRSSKB), ttyMB(r.ttyKB), r.faults, ms(b.median), b.faults, b.ratio, sc.ratio, sc.memKB>>10, verdict(over), ms(f.median), f.faults, f.ratio)
			continue
		}
		over = over || r.median > sc.target
		fmt.Printf("%-52s median %7.2f ms  p95 %7.2f ms  peak %5.1f MB piped, %s tty  (target < %v, < %d MB; %+.2f ms over the reference) %s\n", sc.name,
			ms(r.median), ms(r.p95), mb(r.maxRSSKB), ttyMB(r.ttyKB), sc.target, sc.memKB>>10, ms(r.median)-ms(ref.median), verdict(over))
	}
	if startupOnly {
		fmt.Printf("load average %s\n", loadavg())
		return nil
	}
	if err := scaleRows(taskie, tmp, big, runs, ref.median); err != nil {
		return err
	}
	fmt.Printf("load average %s\n", loadavg())
	return contextSize(taskie, tmp)
}

// scaleRows times the plan reads on 1,000 and 10,000 tasks (with 5 review
// files per task): each under its target at 10,000, and growing at most
// linearly (10,000 tasks at most 10x the time of 1,000).
func scaleRows(taskie, tmp, big string, runs int, ref time.Duration) error {
	huge := filepath.Join(tmp, "p10000")
	if _, err := benchfix.Plan(huge, 10000, 50000); err != nil {
		return err
	}
	runs = max(runs/4, 20)
	fmt.Printf("plan reads, 1,000 and 10,000 tasks with 5 review files each (%d runs; growth: the 10,000-task time over the 1,000-task one, target <= 10x)\n", runs)
	for _, c := range []struct {
		args   []string
		target time.Duration
	}{
		{[]string{"status", "--json"}, 50 * time.Millisecond},
		{[]string{"ready"}, 50 * time.Millisecond},
		{[]string{"continue"}, 50 * time.Millisecond},
		{[]string{"groups"}, 100 * time.Millisecond},
		{[]string{"validate", "big"}, 100 * time.Millisecond},
	} {
		small, err := measure(scenario{bin: taskie, args: c.args, dir: big}, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Join(c.args, " "), err)
		}
		large, err := measure(scenario{bin: taskie, args: c.args, dir: huge}, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Join(c.args, " "), err)
		}
		growth := float64(large.median) / float64(small.median)
		over := large.median > c.target || growth > 10
		fmt.Printf("%-52s median %7.2f ms  p95 %7.2f ms  peak %5.1f MB  (target < %v)  1,000 tasks %.2f ms: growth %.1fx (target <= 10x)  reference %.2f ms %s\n",
			strings.Join(c.args, " ")+", 10,000 tasks", ms(large.median), ms(large.p95), mb(large.maxRSSKB), c.target,
			ms(small.median), growth, ms(ref), verdict(over))
	}
	return nil
}

func verdict(over bool) string {
	if over {
		return "OVER TARGET"
	}
	return "ok"
}

// loadavg is the first three fields of /proc/loadavg ("n/a" elsewhere): the
// machine may be shared, and a ratio is only as good as the minute it was
// taken in.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
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

// buildBare builds the reference: a Go program that reads its stdin and
// exits, the least any hook costs.
func buildBare(tmp string) (string, error) {
	dir := filepath.Join(tmp, "bare")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := "package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() { _, _ = io.Copy(io.Discard, os.Stdin) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module bare\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bare")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the reference: %v: %s", err, out)
	}
	return bin, nil
}

// buildFloor builds bench/depsfloor (pkg, relative to the module's root,
// where bench/run runs this) the way taskie is built.
func buildFloor(tmp, pkg string) (string, error) {
	bin := filepath.Join(tmp, "depsfloor")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the floor %s: %v: %s", pkg, err, out)
	}
	return bin, nil
}

// installed copies bin into tmp and returns the copy: every program is
// timed as an install or a download leaves it. A binary the linker has
// just written is still in the page cache as the linker wrote it, and on
// Linux starts measurably slower than the same file copied (about 20 %
// more CPU for taskie --version on the 2-core machine of
// docs/performance.md), which would inflate each row by its binary's size.
func installed(tmp, bin string) (string, error) {
	src, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(tmp, "installed-"+filepath.Base(bin)+"-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(dst.Name(), 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("copying %s: %w", bin, err)
	}
	return dst.Name(), nil
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// once runs sc's command once and returns its wall time, peak memory and
// minor page faults.
func once(sc scenario) (time.Duration, int64, int64, error) {
	cmd := exec.Command(sc.bin, sc.args...)
	cmd.Dir = sc.dir
	cmd.Stdin = bytes.NewReader(sc.stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%v: %s", err, out.String())
	}
	return d, maxRSS(cmd.ProcessState), minFaults(cmd.ProcessState), nil
}

func measure(sc scenario, runs int) (result, error) {
	ds := make([]time.Duration, 0, runs)
	fs := make([]int64, 0, runs)
	var peak int64
	for range runs {
		d, rss, flt, err := once(sc)
		if err != nil {
			return result{}, err
		}
		ds = append(ds, d)
		fs = append(fs, flt)
		peak = max(peak, rss)
	}
	return summary(sc, ds, fs, peak), nil
}

// measurePair runs sc and each reference in turn and takes sc's ratio to
// each reference run by run.
func measurePair(sc scenario, runs int, refs ...scenario) (result, error) {
	ds, fs := make([]time.Duration, 0, runs), make([]int64, 0, runs)
	rs, rfs, ratios := make([][]time.Duration, len(refs)), make([][]int64, len(refs)), make([][]float64, len(refs))
	var peak int64
	for range runs {
		d, rss, flt, err := once(sc)
		if err != nil {
			return result{}, err
		}
		ds, fs = append(ds, d), append(fs, flt)
		peak = max(peak, rss)
		for i, ref := range refs {
			rd, _, rflt, err := once(ref)
			if err != nil {
				return result{}, fmt.Errorf("reference %s: %w", filepath.Base(ref.bin), err)
			}
			rs[i], rfs[i] = append(rs[i], rd), append(rfs[i], rflt)
			ratios[i] = append(ratios[i], float64(d)/float64(rd))
		}
	}
	r := summary(sc, ds, fs, peak)
	for i := range refs {
		slices.Sort(rs[i])
		slices.Sort(rfs[i])
		slices.Sort(ratios[i])
		r.refs = append(r.refs, refResult{median: rs[i][runs/2], faults: rfs[i][runs/2], ratio: ratios[i][runs/2]})
	}
	return r, nil
}

func summary(sc scenario, ds []time.Duration, fs []int64, peak int64) result {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	slices.Sort(fs)
	if kb, ok := timePeak(sc.bin, sc); ok {
		peak = kb
	}
	return result{median: ds[len(ds)/2], p95: ds[len(ds)*95/100], maxRSSKB: peak, ttyKB: ttyPeak(sc.bin, sc), faults: fs[len(fs)/2]}
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
