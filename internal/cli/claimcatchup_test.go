//go:build unix

package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// claim --next reads the results before it waits for the coordination
// lock; a task reported complete and released while it waited (both are
// logged under that lock) must not be claimed again: under the lock the
// claim catches up on the results logged since.
func TestClaimNextSeesResultsLoggedWhileWaiting(t *testing.T) {
	for _, k := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME"} {
		t.Setenv(k, t.TempDir())
	}
	t.Setenv("TASKIE_DATABASE_URL", "")
	t.Setenv("TASKIE_AGENT", "")
	dir := writeTree(t, map[string]string{
		".taskie/plans/p/plan.md":  "# Plan\n",
		".taskie/plans/p/tasks.md": "| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | one |\n| 2 | pending | two |\n",
	})
	t.Chdir(dir)
	run := func(args ...string) (string, int) { // stdout, then stderr
		var out, errb bytes.Buffer
		code := Run(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		return strings.TrimSpace(out.String()) + "\n" + errb.String(), code
	}
	if out, code := run("claim", "1", "--as", "a"); code != 0 {
		t.Fatalf("claim 1: %s", out)
	}
	coord := filepath.Join(dir, ".taskie", "coord", "p")
	lock, err := os.Open(filepath.Join(coord, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		out, code := run("claim", "--next", "--as", "b")
		done <- result{out, code}
	}()
	waitBlocked(t, lock) // b has read the results and waits for the lock
	// Under the lock, as a's `task result` and `release` would: task 1's
	// result is complete, its claim gone.
	ev := `{"ts":"2026-05-01T12:00:00Z","plan":"p","task":"1","event":"TASK_RESULT","actor":"a","meta":{"status":"complete","commit":"abc1234"}}` + "\n"
	f, err := os.OpenFile(filepath.Join(coord, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(ev)
	f.Close()
	if err := os.WriteFile(filepath.Join(coord, "claims.json"), []byte(`{"plan": "p", "claims": [], "last_token": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	r := <-done
	if r.code != 0 || !strings.HasPrefix(r.out, "2\n") {
		t.Errorf("claim --next while task 1 was reported complete and released: exit %d, %q; want task 2", r.code, r.out)
	}
}

// waitBlocked returns once a flock on f is waited for, as /proc/locks
// shows: a fixed sleep let a slow machine's claim reach the lock only
// after the results were written, and the test passed without testing.
// Without /proc/locks it sleeps.
func waitBlocked(t *testing.T, f *os.File) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	ino := fmt.Sprintf(" %02x:%02x:%d ", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		locks, err := os.ReadFile("/proc/locks")
		if err != nil {
			time.Sleep(300 * time.Millisecond)
			return
		}
		for _, l := range strings.Split(string(locks), "\n") {
			if strings.Contains(l, "-> FLOCK") && strings.Contains(l, ino) {
				return
			}
		}
	}
	t.Fatal("no claim waited for the coordination lock")
}
