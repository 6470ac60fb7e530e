//go:build unix && !linux

package review

import (
	"os"
	"os/exec"
)

// runProcess runs the reviewer holding the review lock (passLock). macOS
// and the BSDs here get no parent-death signal (Linux's Pdeathsig), so a
// reviewer whose hook was killed runs on to its end or to its own timeout;
// but it keeps the plan's review lock while it runs, so the next stop sees a
// review in progress instead of starting a second reviewer beside it.
func runProcess(cmd *exec.Cmd, hold *os.File) error {
	passLock(cmd, hold)
	return cmd.Run()
}
