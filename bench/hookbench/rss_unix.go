//go:build unix

package main

import (
	"os"
	"syscall"
)

// maxRSS is a finished process's peak resident memory in KiB (Linux
// reports KiB; macOS bytes, converted).
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return rssKB(ru.Maxrss)
}

// minFaults is a finished process's minor page faults: what paging in a
// larger binary costs at start.
func minFaults(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return int64(ru.Minflt)
}
