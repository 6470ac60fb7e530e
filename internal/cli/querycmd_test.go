package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/lifecycle"
)

// TestPrintQueryTTY: on a terminal query's columns are aligned under a
// header.
func TestPrintQueryTTY(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	a, _, _ := lifecycle.New(3, lifecycle.ActorAgent, at)
	b, _, _ := lifecycle.New(12, lifecycle.ActorAgent, at)
	b, _, _ = lifecycle.Move(b, lifecycle.Assigned, lifecycle.ActorAgent, "", at.Add(time.Minute))
	var out bytes.Buffer
	printQuery(&Streams{Out: &out, TTY: true}, []lifecycle.Task{a, b}, at.Add(time.Hour), lifecycle.DefaultTimeouts(), nil, false)
	want := "TASK  STATE     SINCE                 IN STATE  TIMEOUT  LEVEL     FAILURES\n" +
		"3     pending   2026-03-01T09:00:00Z  1h        1h       alert     -\n" +
		"12    assigned  2026-03-01T09:01:00Z  59m       15m      escalate  -\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
