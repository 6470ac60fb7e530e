package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestDidYouMeanCommand: a mistyped command suggests the command meant,
// ranked by distance and then by use (`stauts` is status, not start).
func TestDidYouMeanCommand(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"stauts", "status"},
		{"staus", "status"},
		{"stats", "status"},
		{"stat", "status"},
		{"statr", "start"},
		{"contineu", "continue"},
		{"hsitory", "history"},
		{"reviw", "review"},
		{"claime", "claim"},
		{"heartbaet", "heartbeat"},
		{"relase", "release"},
		{"confgi", "config"},
		{"doctr", "doctor"},
	} {
		t.Run(tc.typed, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run([]string{tc.typed}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			want := "did you mean `taskie " + tc.want + "`?"
			if code != ExitUsage || !strings.Contains(errb.String(), want) {
				t.Errorf("taskie %s: exit %d, stderr %q; want exit %d and %q", tc.typed, code, errb.String(), ExitUsage, want)
			}
		})
	}
	t.Run("plan subcommand", func(t *testing.T) {
		var errb bytes.Buffer
		Run([]string{"plan", "lsit"}, Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb})
		if !strings.Contains(errb.String(), "did you mean `taskie plan list`?") {
			t.Errorf("taskie plan lsit: stderr %q", errb.String())
		}
	})
}
