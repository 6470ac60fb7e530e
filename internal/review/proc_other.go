//go:build !unix

package review

import (
	"os/exec"
	"strconv"
)

// setProcessGroup kills the reviewer's whole process tree: on Windows
// `claude` is an npm .cmd shim, so killing the process we started (cmd.exe)
// would leave node running and writing the review file. taskkill /T walks
// the tree; if it is unavailable, the process itself is killed.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		tk := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
		if tk.Run() == nil {
			return nil
		}
		return cmd.Process.Kill()
	}
}
