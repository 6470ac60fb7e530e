package fleettest

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store/postgres/pgtest"
)

// TestClaimRoundTrips counts what each claim command sends across the
// fleet test's 50 ms RTT link (docs/fleet.md, "One round trip"): one
// connection, its start-up, and one round trip of statements for each
// write of an agent's loop — a claim, its fencing token, its event and
// its lifecycle move in one statement; a result with its lifecycle move
// (and, failed, the release of its claim); a forced write with its
// override.
func TestClaimRoundTrips(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fleet tests start PostgreSQL on Linux only")
	}
	srv := pgtest.StartFor(t)
	dbURL, err := srv.NewDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := &wire{}
	addr := latencyProxy(t, "127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", srv.Port()), oneWay, w)
	u, _ := url.Parse(dbURL)
	u.Host = addr
	f := newFleet(t, 5, []machine{{name: "machine-1", hostIP: "127.0.0.1", dbURL: u.String()}})
	f.setUp()
	m := f.ms[0]
	w.take()
	// do runs a command and checks its round trips: want is the number of
	// statement round trips (-1: only logged).
	do := func(want int, args ...string) run {
		t.Helper()
		r := f.exec(context.Background(), nil, m.clone, f.taskie(m), taskieBin, args...)
		n := w.take()
		t.Logf("%s: exit %d in %v (cpu %v): %d connections, %d round trips to connect, %d of statements",
			strings.Join(args, " "), r.code, r.end.Sub(r.start).Round(time.Millisecond), r.cpu.Round(time.Millisecond), n.conns, n.startup, n.queries)
		if r.code != 0 {
			t.Fatalf("%s: %s", strings.Join(args, " "), r)
		}
		notifies := 0
		for _, q := range n.perQuery {
			for _, st := range q {
				notifies += strings.Count(st, "pg_notify(")
			}
		}
		if want >= 0 && (n.conns != 1 || n.queries != want || notifies != 1) {
			for _, q := range n.perQuery {
				t.Logf("  round trip: %s", short(q))
			}
			t.Errorf("%s: %d connections, %d round trips of statements, %d notifications; want 1, %d and 1", strings.Join(args, " "), n.conns, n.queries, notifies, want)
		}
		return r
	}
	r := do(1, "claim", "--next", "--as", "a1")
	task := strings.TrimSpace(r.stdout)
	token := "0"
	if mt := regexp.MustCompile(`fencing token (\d+)`).FindStringSubmatch(r.stderr); mt != nil {
		token = mt[1]
	}
	do(1, "claim", "--next", "--as", "a2")
	do(1, "heartbeat", task, "--as", "a1", "--token", token)
	do(1, "task", "result", task, "--status", "complete", "--commit", m.work, "--as", "a1", "--token", token)
	do(1, "release", task, "--as", "a1", "--token", token)
	do(1, "claim", "--next", "--as", "a1")
	// The rest of an agent's loop: a named claim, a failed result, a result
	// with no name (the runner's own identity holds the claim) and one
	// forced over another agent's live claim.
	do(1, "claim", "4", "--as", "a3")
	do(2, "task", "result", "4", "--status", "failed", "--as", "a3") // the record it counts the failure on, then the write
	do(1, "claim", "5")
	do(1, "task", "result", "5", "--status", "complete", "--commit", m.work)
	do(1, "task", "result", "2", "--status", "complete", "--commit", m.work, "--as", "lead", "--force")
	do(-1, "task", "move", "3", "planning", "--as", "a1")
	do(-1, "task", "move", "3", "validated", "--as", "lead", "--force")
}

// short is a round trip's statements on one line, each cut.
func short(q []string) string {
	var out []string
	for _, s := range q {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}
