package fleettest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// namespaces makes n network namespaces, each joined to the host by a veth
// pair on a /30 of 10.213.0.0/16 that the test assigns itself (host side
// .1, namespace side .2), and removes them when t ends, failed or not.
// It needs Linux and root; the error says why it could not.
func namespaces(t *testing.T, n int) ([]machine, error) {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("not root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("no ip command (iproute2)")
	}
	// Names and subnets of this run only: a /30 per machine, numbered from
	// the test's pid so that two runs at once do not meet.
	base := os.Getpid() % 60
	var ms []machine
	for i := range n {
		m := machine{
			name:   fmt.Sprintf("machine-%d", i+1),
			ns:     fmt.Sprintf("taskie-fleet-%d-%d", os.Getpid(), i+1),
			hostIP: fmt.Sprintf("10.213.%d.1", base*4+i),
			nsIP:   fmt.Sprintf("10.213.%d.2", base*4+i),
		}
		host := fmt.Sprintf("tkf%d-%d", os.Getpid()%100000, i+1)
		peer := fmt.Sprintf("tkp%d-%d", os.Getpid()%100000, i+1)
		if err := ip("netns", "add", m.ns); err != nil {
			return nil, err
		}
		t.Cleanup(func() {
			ip("link", "del", host) // gone already when the namespace took its peer with it
			if err := ip("netns", "del", m.ns); err != nil {
				t.Errorf("removing network namespace %s: %v", m.ns, err)
			}
		})
		for _, args := range [][]string{
			{"link", "add", host, "type", "veth", "peer", "name", peer},
			{"link", "set", peer, "netns", m.ns},
			{"addr", "add", m.hostIP + "/30", "dev", host},
			{"link", "set", host, "up"},
			{"-n", m.ns, "addr", "add", m.nsIP + "/30", "dev", peer},
			{"-n", m.ns, "link", "set", peer, "up"},
			{"-n", m.ns, "link", "set", "lo", "up"},
		} {
			if err := ip(args...); err != nil {
				return nil, err
			}
		}
		ms = append(ms, m)
	}
	return ms, nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// enter moves the calling goroutine, for the rest of its life, onto a
// thread of its own in network namespace ns: every process it starts is
// born there. The thread is never given back (the runtime ends it with
// the goroutine), so no other goroutine ever runs in the namespace.
func enter(ns string) error {
	if ns == "" {
		return nil
	}
	runtime.LockOSThread()
	f, err := os.Open("/run/netns/" + ns)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("joining network namespace %s: %w", ns, err)
	}
	return nil
}
