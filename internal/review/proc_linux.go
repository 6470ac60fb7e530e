package review

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// runProcess runs the reviewer so that it never outlives the hook: it holds
// the review lock (passLock), and its leader gets SIGKILL when the hook dies
// (Pdeathsig); the leader's own children are left to the lock, which they
// keep while they live, so no second reviewer joins them.
//
// Pdeathsig fires when the OS thread that forked the child exits, not the
// process: the Go runtime ends a thread when a goroutine locked to it
// returns without unlocking, and any goroutine may run on the thread that
// forked. So the goroutine that starts the reviewer locks itself to its
// thread until Wait returns: no other goroutine can run on, and so end, the
// thread while the reviewer lives.
func runProcess(cmd *exec.Cmd, hold *os.File) error {
	passLock(cmd, hold)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}
