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

// processAlive cannot tell here: every process counts as alive, so no
// temp directory is taken for a dead review's.
func processAlive(pid int) bool { return true }

// ownedByUs cannot tell here; the temp directory is the user's own.
func ownedByUs(os.FileInfo) bool { return true }
