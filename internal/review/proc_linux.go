package review

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
)

// runProcess runs the reviewer so that it never outlives the hook: it holds
// the review lock (passLock), and its leader gets SIGKILL when the hook dies
// (Pdeathsig); the leader's own children are left to the lock, which they
// keep while they live, so no second reviewer joins them, and to the
// lease (started, once the leader runs), by which a later stop ends them
// after the deadline.
//
// Pdeathsig fires when the OS thread that forked the child exits, not the
// process: the Go runtime ends a thread when a goroutine locked to it
// returns without unlocking, and any goroutine may run on the thread that
// forked. So the goroutine that starts the reviewer locks itself to its
// thread until Wait returns: no other goroutine can run on, and so end, the
// thread while the reviewer lives.
func runProcess(cmd *exec.Cmd, hold *os.File, started func(pid int)) error {
	passLock(cmd, hold)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return err
	}
	started(cmd.Process.Pid)
	return cmd.Wait()
}

// processStart is pid's start time in clock ticks since boot, from
// /proc: with the pid it names one process, never a later one that got
// the same pid. "" when it cannot be read.
func processStart(pid int) string {
	f := procStat(pid)
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// procStat returns the fields of /proc/<pid>/stat after the command name;
// nil when the process is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	return statFields(b)
}

// processRuns reports whether pid runs and is the process that started
// at start ("" = any): a zombie has ended.
func processRuns(pid int, start string) bool {
	f := procStat(pid)
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	return start == "" || f[19] == start
}

// killGroup sends SIGKILL to the process group pgid after checking, in
// /proc, that it is the group recorded: its leader, if it still runs,
// started at start, and every member started no earlier (a group's
// members are started by its leader or by other members).
func killGroup(pgid int, start string) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	want, _ := strconv.ParseUint(start, 10, 64)
	members := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := procStat(pid)
		if len(f) < 20 || f[2] != strconv.Itoa(pgid) || f[0] == "Z" || f[0] == "X" {
			continue
		}
		began, _ := strconv.ParseUint(f[19], 10, 64)
		switch {
		case start == "":
		case pid == pgid && f[19] != start:
			return fmt.Errorf("its leader pid %d is another process now", pid)
		case began < want:
			return fmt.Errorf("process %d in it started before the review: not the review's group", pid)
		}
		members++
	}
	if members == 0 {
		return errors.New("no process of it runs any more")
	}
	return syscall.Kill(-pgid, syscall.SIGKILL)
}
