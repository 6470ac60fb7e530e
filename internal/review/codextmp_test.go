package review

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestCodexReviewRemovesDeadReviewsTempDirs plants what SIGKILLed codex
// reviews leave in the temp directory: the next codex review removes the
// directories of dead processes and keeps those in use, and its own goes
// away when it ends.
func TestCodexReviewRemovesDeadReviewsTempDirs(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" && runtime.GOOS != "freebsd" {
		t.Skip("no way to tell a dead process here")
	}
	// Before newFixture sets HOME: the child's TestMain builds the fake
	// reviewer, which with an empty HOME has no build cache (a minute).
	dead, live := deadPID(t), os.Getpid()
	f := newFixture(t, "PASS")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("TMP", tmp)
	t.Setenv("TEMP", tmp)
	old := time.Now().Add(-2 * oldCodexTmpAge)
	for _, name := range []string{
		fmt.Sprintf("taskie-codex-%d-111", dead),
		fmt.Sprintf("taskie-codex-%d-222", live),
		"taskie-codex-333", // the old naming, recent
		"taskie-codex-444", // the old naming, old
		"taskie-codex-notapid-555",
		"other-666",
	} {
		if err := os.MkdirAll(filepath.Join(tmp, name, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(tmp, name, "sub", "last-message.json"), "{}")
	}
	if err := os.Chtimes(filepath.Join(tmp, "taskie-codex-444"), old, old); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		// A symlink named like a dead review's directory is never followed.
		target := t.TempDir()
		writeFile(t, filepath.Join(target, "keep"), "x")
		if err := os.Symlink(target, filepath.Join(tmp, fmt.Sprintf("taskie-codex-%d-777", dead))); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := os.Stat(filepath.Join(target, "keep")); err != nil {
				t.Errorf("the symlink's target was touched: %v", err)
			}
		})
	}

	if _, err := mustNew(t, "codex").Review(context.Background(), f.request(1)); err != nil {
		t.Fatal(err)
	}
	// Its own directory was named after this process, so that a later
	// review can tell whether it is still in use.
	args := f.logs(t)[0].Args
	i := slices.Index(args, "--output-schema")
	if i < 0 || !strings.HasPrefix(filepath.Base(filepath.Dir(args[i+1])), fmt.Sprintf("taskie-codex-%d-", live)) {
		t.Errorf("codex argv %q: want the schema in a taskie-codex-%d-* directory", args, live)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{fmt.Sprintf("taskie-codex-%d-222", live), "taskie-codex-333", "taskie-codex-notapid-555", "other-666"}
	if runtime.GOOS != "windows" {
		want = append(want, fmt.Sprintf("taskie-codex-%d-777", dead))
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("temp directory after a codex review (-want +got):\n%s", diff)
	}
}
