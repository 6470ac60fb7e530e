package cli

import (
	"bytes"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRepositoryStoreGetsNoPassword: a repository's .taskie/config.json
// names a database on a host the user never named; with PGPASSWORD in the
// user's environment a routine `claim --next` must not connect to it (a
// PostgreSQL client sends the password there) until the user trusts the
// file. It warns, naming `taskie trust`, and works on the file store.
func TestRepositoryStoreGetsNoPassword(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		name := "untrusted"
		if trusted {
			name = "trusted" // the listener does see a client: the test can tell
		}
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Skip(err)
			}
			defer ln.Close()
			var conns atomic.Int64
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					conns.Add(1)
					c.Close()
				}
			}()
			for _, k := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME"} {
				t.Setenv(k, t.TempDir())
			}
			t.Setenv("TASKIE_DATABASE_URL", "")
			t.Setenv("PGPASSWORD", "hunter2")
			dir := writeTree(t, map[string]string{
				".taskie/plans/p/plan.md":  "# Plan\n",
				".taskie/plans/p/tasks.md": "| Id | Status | Title |\n|----|--------|-------|\n| 1 | pending | t |\n",
				".taskie/config.json": `{"store": "postgres://victim@` + ln.Addr().String() +
					`/db?sslmode=disable&connect_timeout=2", "project": "x"}`,
			})
			t.Chdir(dir)
			if trusted {
				if code := Run([]string{"trust"}, Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}); code != 0 {
					t.Fatalf("taskie trust: exit %d", code)
				}
			}
			var out bytes.Buffer
			code, stderr := withStderr(t, func() int {
				return Run([]string{"claim", "--next", "--as", "a"}, Streams{In: strings.NewReader(""), Out: &out, Err: os.Stderr})
			})
			time.Sleep(50 * time.Millisecond) // let the accept loop count
			if trusted {
				if conns.Load() == 0 {
					t.Fatalf("trusted store: nothing connected to the listener (exit %d, stderr %q): the test cannot see a connection", code, stderr)
				}
				return
			}
			if n := conns.Load(); n != 0 {
				t.Errorf("%d connection(s) to the host only the repository named", n)
			}
			if code != 0 || strings.TrimSpace(out.String()) != "1" {
				t.Errorf("claim --next: exit %d, stdout %q, stderr %q; want task 1 claimed on the file store", code, out.String(), stderr)
			}
			if !strings.Contains(stderr, "store") || !strings.Contains(stderr, "`taskie trust`") {
				t.Errorf("stderr %q: want a warning naming the store and `taskie trust`", stderr)
			}
		})
	}
}

// withStderr runs f with os.Stderr sent to a file, and returns f's result
// and what it wrote there.
func withStderr(t *testing.T, f func() int) (int, string) {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	old := os.Stderr
	os.Stderr = tmp
	code := f()
	os.Stderr = old
	data, _ := os.ReadFile(tmp.Name())
	return code, string(data)
}
