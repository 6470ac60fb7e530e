// Package crashtest kills taskie commands with SIGKILL at random moments
// and checks that the plan store never leaves a torn, mixed or unreplayable
// plan behind (docs/architecture.md#the-plan-store).
package crashtest

import (
	"bytes"
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
	if runtime.GOOS == "windows" {
		os.Exit(m.Run()) // the tests skip themselves
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "taskie-crashtest-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "crashtest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "crashtest: finding the module root: %v\n", err)
		return 1
	}
	bin := filepath.Join(dir, "taskie")
	build := exec.Command(goTool(), "build", "-o", bin, "./cmd/taskie")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "crashtest: go build ./cmd/taskie: %v\n%s", err, out)
		return 1
	}
	taskieBin = bin
	return m.Run()
}

// moduleRoot is the directory of the go.mod this package belongs to.
func moduleRoot() (string, error) {
	out, err := exec.Command(goTool(), "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(bytes.TrimSpace(out)))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside a module")
	}
	return filepath.Dir(mod), nil
}

// goTool is the go command; go test puts its own toolchain's bin first in
// PATH.
func goTool() string { return "go" }
