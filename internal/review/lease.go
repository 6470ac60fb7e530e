package review

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// Lease is what the hook holding a plan's review lock records in the lock
// file once its reviewer runs: who started the review, the reviewer's
// process group and when the review must be over. A later stop (or
// `taskie continue`) that finds the lock still held after the hook died
// and the deadline passed ends the group: nothing else enforces the
// reviewer timeout once its hook is gone.
type Lease struct {
	HookPID int `json:"hook_pid"`
	// HookStart and GroupStart tell a process from a later one that got
	// its pid (its start time where the system tells it, "" elsewhere).
	HookStart  string    `json:"hook_start,omitempty"`
	PGID       int       `json:"pgid"`
	GroupStart string    `json:"pgid_start,omitempty"`
	Started    time.Time `json:"started"`
	Deadline   time.Time `json:"deadline"`
}

// leaseLimit bounds the lease read back from a lock file.
const leaseLimit = 4 << 10

// newLease is the lease of a reviewer just started as pid (its process
// group's leader) by this process.
func newLease(pid int, started time.Time, timeout time.Duration) Lease {
	return Lease{HookPID: os.Getpid(), HookStart: processStart(os.Getpid()), PGID: pid, GroupStart: processStart(pid),
		Started: started, Deadline: started.Add(timeout)}
}

// WriteLease writes l into the lock file rel in place: the lock is on the
// file's inode, which a rename would replace. The holder of the lock calls
// it; a reader that finds half a lease ignores it.
func WriteLease(root *fsafe.Root, rel string, l Lease) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return rewriteLock(root, rel, append(b, '\n'))
}

// ClearLease empties the lock file rel: the holder of the lock calls it
// first, so that no lease of an earlier review (or one committed to the
// repository) is taken for its own.
func ClearLease(root *fsafe.Root, rel string) error {
	return rewriteLock(root, rel, nil)
}

func rewriteLock(root *fsafe.Root, rel string, data []byte) error {
	if runtime.GOOS == "windows" {
		// The reviewer dies with its hook there (a Job object), and a
		// locked range cannot be written through another handle.
		return nil
	}
	f, err := root.OpenAppend(rel)
	if err != nil {
		return err
	}
	err = f.Truncate(0)
	if err == nil && len(data) > 0 {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadLease reads the lease in the lock file rel; ok is false when there
// is none (an empty, torn or foreign file).
func ReadLease(root *fsafe.Root, rel string) (l Lease, ok bool) {
	b, err := root.ReadFileLimit(rel, leaseLimit)
	if err != nil || json.Unmarshal(b, &l) != nil || l.PGID <= 1 || l.HookPID <= 0 || l.Deadline.IsZero() {
		return Lease{}, false
	}
	return l, true
}

// HookRuns reports whether the hook that recorded the lease still runs.
func (l Lease) HookRuns() bool { return processRuns(l.HookPID, l.HookStart) }

// Reaped says what EndOrphan did.
type Reaped struct {
	Lease Lease
	// Ended is true when the review's process group was killed.
	Ended bool
	// Why says why it was, or why not.
	Why string
}

// EndOrphan ends the review whose lease is in the lock file rel when the
// lock is held (the caller could not take it), the hook that started the
// review is gone and the lease's deadline passed: it kills the reviewer's
// whole process group, checking first that the group is still the one
// recorded. Before the deadline, or while the hook lives, the review is
// left to run. The caller then waits for the lock.
func EndOrphan(root *fsafe.Root, rel string, now time.Time) Reaped {
	l, ok := ReadLease(root, rel)
	switch {
	case !ok:
		return Reaped{Why: "no lease recorded in " + rel}
	case now.Before(l.Deadline):
		return Reaped{Lease: l, Why: "within its deadline " + l.Deadline.UTC().Format(time.RFC3339)}
	case processRuns(l.HookPID, l.HookStart):
		return Reaped{Lease: l, Why: fmt.Sprintf("its hook (pid %d) still runs", l.HookPID)}
	case l.PGID == os.Getpid() || l.PGID == ownGroup():
		return Reaped{Lease: l, Why: "the recorded group is this process's own"}
	}
	if err := killGroup(l.PGID, l.GroupStart); err != nil {
		return Reaped{Lease: l, Why: fmt.Sprintf("process group %d not ended: %v", l.PGID, err)}
	}
	return Reaped{Lease: l, Ended: true, Why: fmt.Sprintf("ended process group %d of a review started %s whose hook (pid %d) is gone, past its deadline %s",
		l.PGID, l.Started.UTC().Format(time.RFC3339), l.HookPID, l.Deadline.UTC().Format(time.RFC3339))}
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name (which may hold spaces and parentheses): fields[0] is the state.
func statFields(stat []byte) []string {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
