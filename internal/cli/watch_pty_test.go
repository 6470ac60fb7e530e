//go:build linux

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWatchOnTerminal runs the built binary's `taskie watch` on a
// pseudo-terminal: the first screen shows what needs you and the plans'
// rows; a change made with the CLI is redrawn within 2 s; q quits with
// exit 0, leaving the alternate screen and restoring the terminal mode.
func TestWatchOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "taskie")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/taskie").CombinedOutput(); err != nil {
		t.Fatalf("building taskie: %v\n%s", err, out)
	}
	repo := filepath.Join(dir, "repo")
	home := filepath.Join(dir, "home")
	for name, text := range map[string]string{
		".taskie/plans/work/plan.md":   "# Plan\n",
		".taskie/plans/work/tasks.md":  "| Id | Status | Title | Depends On |\n|----|--------|-------|----|\n| 1 | pending | first | |\n| 2 | pending | second | 1 |\n",
		".taskie/plans/work/task-1.md": "# Task 1\n",
		".taskie/plans/work/task-2.md": "# Task 2\n",
		".taskie/plans/work/state.json": `{"max_reviews": 8, "current_task": "1", "phase": "continue-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}
`,
		".taskie/plans/esc/plan.md": "# Plan\n",
		".taskie/plans/esc/state.json": `{"max_reviews": 8, "current_task": "1", "phase": "continue-task", "phase_iteration": 0, "next_phase": null, "review_model": "opus", "consecutive_clean": 0, "tdd": false}
`,
		".taskie/plans/esc/tasks.md":  "| Id | Status | Title |\n|----|--------|-------|\n| 1 | in-progress | stuck one |\n",
		".taskie/plans/esc/task-1.md": "# Task 1\n",
	} {
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm", "TASKIE_HOOK_SKIP="}
	cli := func(args ...string) {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir, c.Env = repo, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("taskie %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cli("task", "move", "2", "assigned", "--plan", "work")
	cli("task", "move", "1", "assigned", "--plan", "esc")
	cli("task", "escalate", "1", "--plan", "esc")
	cli("task", "escalate", "1", "--plan", "esc", "--actor", "cto")

	ptm, pts := openPTY(t, 40, 200)
	before, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "watch")
	cmd.Dir, cmd.Env = repo, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	screen := &ptyOutput{}
	go screen.copyFrom(ptm)

	// The first screen.
	screen.waitFor(t, 5*time.Second, 0, regexp.MustCompile(regexp.QuoteMeta(enterScreen)))
	screen.waitFor(t, 5*time.Second, 0, regexp.MustCompile(`needs you \(1\):`))
	screen.waitFor(t, 5*time.Second, 0, regexp.MustCompile(`\[esc task 1\] task 1 is escalated to a human`))
	screen.waitFor(t, 5*time.Second, 0, regexp.MustCompile(`plan work · [^\r\n]*0/2 done`))
	mark := screen.waitFor(t, 5*time.Second, 0, regexp.MustCompile(`\n\s+2\s+assigned\s+2\s+-`))

	// A change made with the CLI is redrawn within 2 s.
	cli("task", "escalate", "2", "--plan", "work", "--actor", "agent")
	changed := time.Now()
	screen.waitFor(t, 2*time.Second, mark, regexp.MustCompile(`\n\s+2\s+cto_intervention\s`))
	t.Logf("redrawn %s after the change", time.Since(changed).Round(time.Millisecond))

	// q quits: exit 0, the main screen and the cursor back, the terminal
	// mode as it was.
	if _, err := ptm.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("taskie watch: %v\nscreen:\n%q", err, screen.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("taskie watch did not quit on q\nscreen:\n%q", screen.String())
	}
	screen.waitFor(t, 2*time.Second, mark, regexp.MustCompile(regexp.QuoteMeta(leaveScreen)+`$`))
	after, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if before.Lflag != after.Lflag || before.Iflag != after.Iflag || before.Oflag != after.Oflag {
		t.Errorf("terminal mode not restored: lflag %#x → %#x, iflag %#x → %#x, oflag %#x → %#x",
			before.Lflag, after.Lflag, before.Iflag, after.Iflag, before.Oflag, after.Oflag)
	}

	// SIGTERM gives the terminal back too.
	from := len(screen.String())
	cmd = exec.Command(bin, "watch")
	cmd.Dir, cmd.Env = repo, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	screen.waitFor(t, 5*time.Second, from, regexp.MustCompile(`plan work · `))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("taskie watch on SIGTERM: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("taskie watch did not end on SIGTERM")
	}
	screen.waitFor(t, 2*time.Second, from, regexp.MustCompile(regexp.QuoteMeta(leaveScreen)+`$`))
	if after, err = unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS); err != nil {
		t.Fatal(err)
	}
	if before.Lflag != after.Lflag {
		t.Errorf("terminal mode not restored after SIGTERM: lflag %#x → %#x", before.Lflag, after.Lflag)
	}
}

// openPTY opens a pseudo-terminal of rows×cols: its master and its slave.
func openPTY(t *testing.T, rows, cols uint16) (*os.File, *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pseudo-terminal: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatal(err)
	}
	return ptm, pts
}

// ptyOutput collects what the program wrote to the terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *ptyOutput) copyFrom(ptm *os.File) {
	b := make([]byte, 4096)
	for {
		n, err := ptm.Read(b)
		o.mu.Lock()
		o.buf.Write(b[:n])
		o.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until re matches the output from offset from on, and
// returns the offset of the match's end.
func (o *ptyOutput) waitFor(t *testing.T, limit time.Duration, from int, re *regexp.Regexp) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := o.String()
		if loc := re.FindStringIndex(s[from:]); loc != nil {
			return from + loc[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the terminal within %s; it shows:\n%q", re, limit, s[from:])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
