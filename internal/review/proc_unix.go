//go:build unix

package review

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup puts the reviewer in its own process group and makes the
// context kill the whole group: killing only the leader leaves its tools
// (shells, test runs) orphaned and holding our pipes.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}

// passLock hands the review lock to the reviewer as file descriptor 3. A
// flock belongs to the open file description, which the child shares, so
// the lock stays held while the reviewer or any child that inherited the
// descriptor lives, even after the hook is gone.
func passLock(cmd *exec.Cmd, hold *os.File) {
	if hold != nil {
		cmd.ExtraFiles = []*os.File{hold}
	}
}

// processAlive reports whether a process with this pid exists (EPERM: it
// does, as another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownedByUs reports whether fi belongs to this process's user.
func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// ownGroup is this process's group, never to be killed.
func ownGroup() int { return syscall.Getpgrp() }
