//go:build !unix && !windows

package review

import (
	"errors"
	"os"
	"os/exec"
)

// setProcessGroup leaves the default cancel, which kills the reviewer
// itself: this platform has no process groups.
func setProcessGroup(cmd *exec.Cmd) {}

// runProcess runs the reviewer; the review lock is not handed over here.
func runProcess(cmd *exec.Cmd, hold *os.File, _ func(pid int)) error {
	return cmd.Run()
}

// processAlive cannot tell here: every process counts as alive, so no
// temp directory is taken for a dead review's.
func processAlive(pid int) bool { return true }

// ownedByUs cannot tell here; the temp directory is the user's own.
func ownedByUs(os.FileInfo) bool { return true }

// processStart, processRuns, killGroup, ownGroup: without process groups
// no lease is acted on.
func processStart(int) string { return "" }

func processRuns(int, string) bool { return true }

func killGroup(int, string) error { return errors.New("not supported on this system") }

func ownGroup() int { return 0 }
