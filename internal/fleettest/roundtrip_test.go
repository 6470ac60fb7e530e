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

// TestRoundTripsProbe logs what each claim command sends across the link.
func TestRoundTripsProbe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux")
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
	ms := []machine{{name: "machine-1", hostIP: "127.0.0.1", dbURL: u.String()}}
	f := newFleet(t, 5, ms)
	f.setUp()
	m := f.ms[0]
	w.take()
	env := f.taskie(m)
	do := func(args ...string) run {
		r := f.exec(context.Background(), nil, m.clone, env, taskieBin, args...)
		n := w.take()
		t.Logf("%s: exit %d in %v: %d conns, %d startup RT, %d query RT", strings.Join(args, " "), r.code, r.end.Sub(r.start).Round(time.Millisecond), n.conns, n.startup, n.queries)
		for _, q := range n.perQuery {
			var short []string
			for _, s := range q {
				s = strings.Join(strings.Fields(s), " ")
				if len(s) > 90 {
					s = s[:90]
				}
				short = append(short, s)
			}
			t.Logf("    %s", strings.Join(short, " | "))
		}
		if r.code != 0 {
			t.Logf("  stderr: %s", r.stderr)
		}
		return r
	}
	r := do("claim", "--next", "--as", "a1")
	tok := regexp.MustCompile(`fencing token (\d+)`).FindStringSubmatch(r.stderr)
	task := strings.TrimSpace(r.stdout)
	token := "0"
	if tok != nil {
		token = tok[1]
	}
	do("claim", "--next", "--as", "a2")
	do("heartbeat", task, "--as", "a1", "--token", token)
	do("task", "result", task, "--status", "complete", "--commit", m.work, "--as", "a1", "--token", token)
	do("release", task, "--as", "a1", "--token", token)
	do("claim", "--next", "--as", "a1")
}
