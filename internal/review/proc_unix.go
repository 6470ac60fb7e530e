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
