package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// installHint is how to get the real client the tests need.
const installHint = "install it with `bash e2e/install-claude.sh`"

// skipped lists the real-client tests that skipped, and why, so that
// TestMain can say so even without -v: a suite that silently skips every
// real-client test looks green and proves nothing.
var skipped struct {
	sync.Mutex
	tests []skip
}

type skip struct{ test, reason string }

// skipTest skips t and records it for TestMain's report.
func skipTest(t *testing.T, reason string) {
	t.Helper()
	skipped.Lock()
	skipped.tests = append(skipped.tests, skip{t.Name(), reason})
	skipped.Unlock()
	t.Skip(reason)
}

func TestMain(m *testing.M) {
	code := m.Run()
	cleanupShared()
	reportSkips()
	os.Exit(code)
}

// reportSkips prints one line per distinct reason on stderr (shown by
// `go test` with or without -v), and appends one line per skipped test to
// the file named by TASKIE_SKIPLOG, if set (the Makefile collects it).
func reportSkips() {
	skipped.Lock()
	defer skipped.Unlock()
	if len(skipped.tests) == 0 {
		return
	}
	var reasons []string
	byReason := map[string][]string{}
	for _, s := range skipped.tests {
		if byReason[s.reason] == nil {
			reasons = append(reasons, s.reason)
		}
		byReason[s.reason] = append(byReason[s.reason], s.test)
	}
	for _, r := range reasons {
		fmt.Fprintf(os.Stderr, "e2e: SKIPPED %d real-client test(s) (%s): %s\n", len(byReason[r]), strings.Join(byReason[r], ", "), r)
	}
	path := os.Getenv("TASKIE_SKIPLOG")
	if path == "" {
		return
	}
	var b strings.Builder
	for _, s := range skipped.tests {
		fmt.Fprintf(&b, "e2e %s: %s\n", s.test, s.reason)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.WriteString(b.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: writing TASKIE_SKIPLOG %s: %v\n", path, err)
	}
}

// build is the taskie binary the tests share, built once per test binary.
var build struct {
	once sync.Once
	dir  string
	err  error
}

// buildTaskie builds the taskie binary into a directory of its own (once
// for all tests), which goes first on PATH so the plugin's `taskie hook …`
// commands find it.
func buildTaskie(t *testing.T, root string) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "taskie-e2e-bin-")
		if build.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(build.dir, "taskie"), "./cmd/taskie")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/taskie: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.dir
}

func cleanupShared() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}
