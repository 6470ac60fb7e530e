// Package fleettest plays a fleet of three machines against one
// PostgreSQL: three clones of one repository, each in a network namespace
// of its own where the kernel allows it, each reaching the database only
// through a latency proxy, with ten taskie agent processes each draining
// one plan while holders are killed and the server restarts (docs/fleet.md,
// "How we prove it").
package fleettest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// taskieBin is the taskie binary built by TestMain.
var taskieBin string

func TestMain(m *testing.M) {
	if runtime.GOOS != "linux" {
		os.Exit(m.Run()) // the tests skip themselves
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "taskie-fleettest-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleettest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	out, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		fmt.Fprintf(os.Stderr, "fleettest: finding the module root: %v\n", err)
		return 1
	}
	bin := filepath.Join(dir, "taskie")
	build := exec.Command("go", "build", "-o", bin, "./cmd/taskie")
	build.Dir = filepath.Dir(mod)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "fleettest: go build ./cmd/taskie: %v\n%s", err, out)
		return 1
	}
	taskieBin = bin
	return m.Run()
}
