package fleettest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuSnap is where the machine's CPU time stood at one moment: this test
// process's own (the proxies, the agent loops), PostgreSQL's (the server
// and every backend, the exited ones included), and the whole machine's.
type cpuSnap struct {
	at          time.Time
	self        time.Duration
	pg          time.Duration // -1: not known
	scan        time.Duration // this process's CPU for reading pg: not the harness's
	busy, total time.Duration // every core's, from /proc/stat
}

// snap takes a cpuSnap; postmaster is the server's process (0: unknown).
func snap(postmaster int) cpuSnap {
	s := cpuSnap{at: time.Now(), pg: -1}
	s.self = selfCPU()
	if postmaster > 0 {
		s.pg = pgCPU(postmaster)
		s.scan = selfCPU() - s.self
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			if i >= 8 { // guest time is counted in user already
				break
			}
			s.total += time.Duration(n) * clockTick
			if i != 3 && i != 4 { // idle, iowait
				s.busy += time.Duration(n) * clockTick
			}
		}
	}
	return s
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// statTimes reads a process's user+system time and that of its children
// it has waited for, from /proc/<pid>/stat.
func statTimes(pid int) (own, children time.Duration, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name is in parentheses and may hold spaces: the fields
	// after its closing one are numbered from 3 (state).
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0, 0, false
	}
	n := func(k int) time.Duration {
		v, _ := strconv.ParseInt(f[k-3], 10, 64)
		return time.Duration(v) * clockTick
	}
	ppid, _ = strconv.Atoi(f[4-3])
	return n(14) + n(15), n(16) + n(17), ppid, true
}

// pgCPU is the CPU time of the server process, of the backends it has
// reaped, and of the processes it runs now.
func pgCPU(postmaster int) time.Duration {
	own, reaped, _, ok := statTimes(postmaster)
	if !ok {
		return -1
	}
	total := own + reaped
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if o, _, pp, ok := statTimes(pid); ok && pp == postmaster {
			total += o
		}
	}
	return total
}

// postmasterPID finds the server's process: the parent of a backend.
func postmasterPID(ctx context.Context, dbURL string) int {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0
	}
	defer conn.Close(ctx)
	var backend int
	if conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend) != nil {
		return 0
	}
	if _, _, pp, ok := statTimes(backend); ok {
		if b, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pp)); err != nil || filepath.Base(b) == "postgres" {
			return pp
		}
	}
	return 0
}

// usage is what a phase cost between two snapshots.
type usage struct {
	wall        time.Duration
	self        time.Duration
	pg          time.Duration // -1: not known
	busy, total time.Duration
}

func between(a, b cpuSnap) usage {
	u := usage{wall: b.at.Sub(a.at), self: b.self - a.self - a.scan, busy: b.busy - a.busy, total: b.total - a.total, pg: -1}
	if a.pg >= 0 && b.pg >= 0 {
		u.pg = b.pg - a.pg
	}
	return u
}

// share is d as a percentage of the machine's CPU time in u.
func (u usage) share(d time.Duration) float64 {
	if u.total <= 0 {
		return 0
	}
	return 100 * float64(d) / float64(u.total)
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// ms prints a duration in milliseconds, one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
