package review

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"unsafe"

	"golang.org/x/sys/windows"
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

// runProcess runs the reviewer inside a kill-on-close Job object: the
// hook's handle to the job is its only one, so when the hook exits, however
// it dies, Windows kills every process in the job — the reviewer and the
// children it started after joining it. With no orphan left there is
// nothing for a second reviewer to join, so the review lock is not handed
// over (Windows cannot pass it as an extra descriptor anyway) and hold is
// unused. The job is best effort: if it cannot be made (a job that forbids
// nesting, say), the reviewer runs without it and an interrupted hook
// relies on the taskkill tree kill of setProcessGroup. A child started in
// the instant before the reviewer joins the job is outside it.
func runProcess(cmd *exec.Cmd, hold *os.File, _ func(pid int)) error {
	job, err := killOnCloseJob()
	if err != nil {
		return cmd.Run()
	}
	// Closing the handle kills what is left of the tree once the review
	// is over too: leftover tools of a finished reviewer die with it.
	defer windows.CloseHandle(job)
	if err := cmd.Start(); err != nil {
		return err
	}
	if p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid)); err == nil {
		_ = windows.AssignProcessToJobObject(job, p)
		windows.CloseHandle(p)
	}
	return cmd.Wait()
}

// killOnCloseJob creates an unnamed Job object that kills its processes
// when its last handle closes.
func killOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// processAlive reports whether a process with this pid still runs.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return !errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}

// ownedByUs: the temp directory on Windows is the user's own.
func ownedByUs(os.FileInfo) bool { return true }

// processStart, processRuns, killGroup, ownGroup: on Windows the reviewer
// dies with its hook (the Job object), so no lease is ever acted on.
func processStart(int) string { return "" }

func processRuns(pid int, _ string) bool { return processAlive(pid) }

func killGroup(int, string) error { return errors.New("not supported on Windows") }

func ownGroup() int { return 0 }
