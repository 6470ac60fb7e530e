//go:build !unix && !windows

package review

import (
	"os"
	"os/exec"
)

// setProcessGroup leaves the default cancel, which kills the reviewer
// itself: this platform has no process groups.
func setProcessGroup(cmd *exec.Cmd) {}

// runProcess runs the reviewer; the review lock is not handed over here.
func runProcess(cmd *exec.Cmd, hold *os.File) error {
	return cmd.Run()
}
