//go:build unix && !linux

package review

import (
	"os"
	"os/exec"
	"syscall"
)

// runProcess runs the reviewer holding the review lock (passLock). macOS
// and the BSDs here get no parent-death signal (Linux's Pdeathsig), so a
// reviewer whose hook was killed runs on to its end or to its own timeout;
// but it keeps the plan's review lock while it runs, so the next stop sees a
// review in progress instead of starting a second reviewer beside it.
func runProcess(cmd *exec.Cmd, hold *os.File, started func(pid int)) error {
	passLock(cmd, hold)
	if err := cmd.Start(); err != nil {
		return err
	}
	started(cmd.Process.Pid)
	return cmd.Wait()
}

// processStart is unknown here (no /proc): pids are compared alone.
func processStart(int) string { return "" }

// processRuns reports whether a process with this pid exists.
func processRuns(pid int, _ string) bool { return processAlive(pid) }

// killGroup sends SIGKILL to the process group pgid. Without /proc the
// group cannot be checked further: a group lives as long as one member
// does, and its id is not reused meanwhile.
func killGroup(pgid int, _ string) error {
	return syscall.Kill(-pgid, syscall.SIGKILL)
}
