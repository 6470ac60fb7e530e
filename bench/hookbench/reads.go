package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/taskie-dev/taskie/internal/benchfix"
)

// readsOnly runs only the plan-read rows (1,000 and 10,000 tasks) with
// their bare-binary reference, for working on those reads without the
// start-up rows. With keep set, it writes the two fixtures there (keep/p1000
// and keep/p10000) and leaves them for a profiler instead of timing them.
func readsOnly(taskie string, runs int, keep string) error {
	if keep != "" {
		if _, err := benchfix.Plan(filepath.Join(keep, "p1000"), 1000, 5000); err != nil {
			return err
		}
		_, err := benchfix.Plan(filepath.Join(keep, "p10000"), 10000, 50000)
		return err
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
	if err := scaleRows(taskie, tmp, big, runs, ref.median); err != nil {
		return err
	}
	fmt.Printf("load average %s\n", loadavg())
	return nil
}
