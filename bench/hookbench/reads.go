package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/benchfix"
)

// readsOnly runs only the plan-read rows (1,000 and 10,000 tasks) with
// their bare-binary reference, for working on those reads without the
// start-up rows. With keep set, it writes the two fixtures there (keep/p1000
// and keep/p10000) and leaves them for a profiler instead of timing them.
//
// With before set (another taskie binary), each row runs the two binaries
// in turn (A B A B ...) on the same fixture and prints both medians and
// their CPU times: a before/after comparison taken in one run, which a
// shared machine's load moves alike.
func readsOnly(taskie, before string, runs int, keep string) error {
	if keep != "" {
		if _, err := benchfix.Plan(filepath.Join(keep, "p1000"), 1000, 5000); err != nil {
			return err
		}
		_, err := benchfix.Plan(filepath.Join(keep, "p10000"), 10000, 50000)
		return err
	}
	// The commands run in the plans' directories: the binaries by absolute path.
	for _, b := range []*string{&taskie, &before} {
		if *b != "" {
			abs, err := filepath.Abs(*b)
			if err != nil {
				return err
			}
			*b = abs
		}
	}
	tmp, err := os.MkdirTemp("", "taskie-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bare, err := buildBare(tmp)
	if err != nil {
		return err
	}
	empty, big := filepath.Join(tmp, "none"), filepath.Join(tmp, "p1000")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	if _, err := benchfix.Plan(big, 1000, 5000); err != nil {
		return err
	}
	fmt.Printf("load average %s\n", loadavg())
	ref, err := measure(scenario{name: "reference", bin: bare, dir: empty}, runs)
	if err != nil {
		return err
	}
	if before != "" {
		if err := beforeAfterRows(taskie, before, tmp, big, max(runs/4, 20)); err != nil {
			return err
		}
	} else if err := scaleRows(taskie, tmp, big, runs, ref.median); err != nil {
		return err
	}
	fmt.Printf("load average %s\n", loadavg())
	return nil
}

// beforeAfterRows times the plan reads of two binaries in turn on the
// 1,000- and 10,000-task plans: medians of wall and CPU time (user +
// system) per binary, and the growth from 1,000 to 10,000 tasks.
func beforeAfterRows(after, before, tmp, big string, runs int) error {
	huge := filepath.Join(tmp, "p10000")
	if _, err := benchfix.Plan(huge, 10000, 50000); err != nil {
		return err
	}
	fmt.Printf("plan reads, before (%s) and after (%s) in turn, %d pairs per row; wall / CPU medians, ms\n", before, after, runs)
	fmt.Printf("%-16s %-31s %-31s %s\n", "", "1,000 tasks: before -> after", "10,000 tasks: before -> after", "growth after (target <= 10x)")
	for _, args := range [][]string{{"status", "--json"}, {"ready"}, {"continue"}, {"groups"}, {"validate", "big"}} {
		var med [2][2][2]float64 // size, binary (0 before, 1 after), wall/cpu
		for si, dir := range []string{big, huge} {
			var wall, cpu [2][]float64
			for range runs {
				for bi, bin := range []string{before, after} {
					w, c, err := onceCPU(bin, args, dir)
					if err != nil {
						return fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
					}
					wall[bi], cpu[bi] = append(wall[bi], w), append(cpu[bi], c)
				}
			}
			for bi := range 2 {
				med[si][bi] = [2]float64{median(wall[bi]), median(cpu[bi])}
			}
		}
		fmt.Printf("%-16s %6.1f / %5.1f -> %5.1f / %5.1f   %6.1f / %5.1f -> %5.1f / %5.1f   %.1fx\n", strings.Join(args, " "),
			med[0][0][0], med[0][0][1], med[0][1][0], med[0][1][1], med[1][0][0], med[1][0][1], med[1][1][0], med[1][1][1], med[1][1][0]/med[0][1][0])
	}
	return nil
}

// onceCPU runs bin once in dir: its wall and CPU time (user + system), ms.
func onceCPU(bin string, args []string, dir string) (float64, float64, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	w := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	ps := cmd.ProcessState
	return float64(w.Microseconds()) / 1000, float64((ps.UserTime() + ps.SystemTime()).Microseconds()) / 1000, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
