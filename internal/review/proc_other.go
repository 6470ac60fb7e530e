//go:build !unix

package review

import "os/exec"

// setProcessGroup kills only the reviewer itself: there is no process group
// to signal here, and WaitDelay stops us waiting on leftover children.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Kill() }
}
