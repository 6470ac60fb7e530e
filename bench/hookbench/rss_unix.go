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
