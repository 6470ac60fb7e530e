//go:build unix

package review

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// TestEndOrphan ends a review's process group only when its hook is gone
// and its deadline passed, and only the group recorded.
func TestEndOrphan(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name      string
		lease     func(group int) *Lease // nil: no lease in the file
		wantEnded bool
		wantWhy   string
	}{
		{name: "no lease", lease: func(int) *Lease { return nil }, wantWhy: "no lease"},
		{name: "before the deadline", lease: func(g int) *Lease {
			l := orphanLease(t, g, now)
			l.Deadline = now.Add(time.Minute)
			return &l
		}, wantWhy: "within its deadline"},
		{name: "its hook still runs", lease: func(g int) *Lease {
			l := orphanLease(t, g, now)
			l.HookPID, l.HookStart = os.Getpid(), processStart(os.Getpid())
			return &l
		}, wantWhy: "still runs"},
		{name: "a group that is not the review's (it started before)", lease: func(g int) *Lease {
			if processStart(g) == "" {
				t.Skip("no process start times here")
			}
			l := orphanLease(t, g, now)
			l.GroupStart = "99999999999"
			return &l
		}, wantWhy: "not ended"},
		{name: "hook gone, deadline passed", lease: func(g int) *Lease {
			l := orphanLease(t, g, now)
			return &l
		}, wantEnded: true, wantWhy: "ended process group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := fsafe.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			group := startGroup(t)
			if l := tc.lease(group.Process.Pid); l != nil {
				if err := WriteLease(root, ".review.lock", *l); err != nil {
					t.Fatal(err)
				}
			}
			r := EndOrphan(root, ".review.lock", now)
			if r.Ended != tc.wantEnded || !strings.Contains(r.Why, tc.wantWhy) {
				t.Errorf("EndOrphan = ended %v (%s); want ended %v, %q", r.Ended, r.Why, tc.wantEnded, tc.wantWhy)
			}
			done := make(chan error, 1)
			go func() { done <- group.Wait() }()
			select {
			case <-done:
				if !tc.wantEnded {
					t.Errorf("the group was killed")
				}
			case <-time.After(500 * time.Millisecond):
				if tc.wantEnded {
					t.Errorf("the group still runs")
				}
			}
		})
	}
}

// orphanLease is the lease of the review group g started a minute ago by
// a hook that has exited, its deadline passed.
func orphanLease(t *testing.T, g int, now time.Time) Lease {
	return Lease{HookPID: deadPID(t), PGID: g, GroupStart: processStart(g), Started: now.Add(-time.Minute), Deadline: now.Add(-time.Second)}
}

// startGroup starts `sleep 60` as the leader of its own process group.
func startGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd
}

// TestLeaseRoundTrip reads back what WriteLease wrote, in place (the lock
// is on the file's inode), and nothing after ClearLease.
func TestLeaseRoundTrip(t *testing.T) {
	root, err := fsafe.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	l, ok, err := root.TryLock(".review.lock")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	defer l.Unlock()
	want := Lease{HookPID: 10, PGID: 20, Started: time.Unix(100, 0).UTC(), Deadline: time.Unix(200, 0).UTC()}
	if err := WriteLease(root, ".review.lock", want); err != nil {
		t.Fatal(err)
	}
	got, ok := ReadLease(root, ".review.lock")
	if !ok || got != want {
		t.Errorf("ReadLease = %+v, %v; want %+v", got, ok, want)
	}
	if !root.Probe(".review.lock") {
		t.Errorf("the lock was lost by writing the lease")
	}
	if err := ClearLease(root, ".review.lock"); err != nil {
		t.Fatal(err)
	}
	if _, ok := ReadLease(root, ".review.lock"); ok {
		t.Errorf("a lease is read after ClearLease")
	}
}
