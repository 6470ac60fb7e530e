//go:build unix

package main

import (
	"os"
	"syscall"
)

// pageFaults is the page faults of an ended process.
func pageFaults(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Minflt + ru.Majflt)
	}
	return 0
}
