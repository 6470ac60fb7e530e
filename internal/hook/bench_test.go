package hook

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/benchfix"
)

func benchStop(b *testing.B, cwd string) {
	in := []byte(fmt.Sprintf(`{"session_id":"bench","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop"}`, cwd))
	env := Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" },
		Now: time.Now, InputDeadline: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		env.Stdin = bytes.NewReader(in)
		if code := Stop(env); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkStopNoReviewDue is SPEC §16's hot path: a stop on a 100-task
// plan with nothing to review (validation included).
func BenchmarkStopNoReviewDue(b *testing.B) {
	root := b.TempDir()
	if _, err := benchfix.Plan(root, 100, 200); err != nil {
		b.Fatal(err)
	}
	benchStop(b, root)
}

// BenchmarkStopNoTaskie is a stop in a project that does not use taskie.
func BenchmarkStopNoTaskie(b *testing.B) {
	benchStop(b, b.TempDir())
}
