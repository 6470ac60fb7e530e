package hook

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/benchfix"
)

func benchStop(b *testing.B, cwd string) {
	in := []byte(fmt.Sprintf(`{"session_id":"bench","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop"}`, cwd))
	env := Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" },
		InputDeadline: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		env.Stdin = bytes.NewReader(in)
		if code := Stop(env); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkStopNoReviewDue is docs/performance.md's hot path: a stop on a 100-task
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

// benchStopTranscript is a whole Stop as Claude Code sends it — with
// transcript_path — in a project of 50 plans awaiting the hook and a 5 MB
// transcript, where plan choice picks one plan (edit writes its state), which
// is then loaded, validated and decided on (its next action is not a review,
// so no reviewer runs): every stop's work but the review.
func benchStopTranscript(b *testing.B, edit func(root, transcript string) error) {
	root := b.TempDir()
	transcript, err := benchfix.Plans(root, 50, 5<<20)
	if err != nil {
		b.Fatal(err)
	}
	if err := edit(root, transcript); err != nil {
		b.Fatal(err)
	}
	in := []byte(fmt.Sprintf(`{"session_id":"bench","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop","transcript_path":%q}`, root, transcript))
	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }, InputDeadline: time.Second}
	check := func() {
		out.Reset()
		env.Stdin = bytes.NewReader(in)
		if code := Stop(env); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	check()
	if !strings.Contains(out.String(), "create-tasks") {
		b.Fatalf("the stop did not act on the chosen plan: %q", out.String())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		check()
	}
}

// chosenState: the plan review passed; create-tasks is next.
const chosenState = `{"max_reviews": 8, "current_task": null, "phase": "post-plan-review", "phase_iteration": 2, "next_phase": "create-tasks", "review_model": "opus", "consecutive_clean": 2, "tdd": false%s}` + "\n"

// BenchmarkStopTranscriptOwnedPlan: the session owns one of the 50 plans.
func BenchmarkStopTranscriptOwnedPlan(b *testing.B) {
	benchStopTranscript(b, func(root, _ string) error {
		return os.WriteFile(filepath.Join(root, ".taskie", "plans", "p7", "state.json"), []byte(fmt.Sprintf(chosenState, `, "session_id": "bench"`)), 0o644)
	})
}

// BenchmarkStopTranscriptNamedPlan: the session owns no plan; the
// transcript's tail names one (the agent ran `taskie status --plan p13`),
// which decides among the 50 plans awaiting the hook.
func BenchmarkStopTranscriptNamedPlan(b *testing.B) {
	benchStopTranscript(b, func(root, transcript string) error {
		if err := os.WriteFile(filepath.Join(root, ".taskie", "plans", "p13", "state.json"), []byte(fmt.Sprintf(chosenState, "")), 0o644); err != nil {
			return err
		}
		f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(bash("taskie status --plan p13") + "\n" +
			`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"The plan review passed; I will create the tasks of the plan next."}]}}` + "\n")
		return err
	})
}

// BenchmarkStopTranscriptNoneChosen is bench/run's row: 50 plans await the
// hook, the session owns none and its transcript names none, so the stop
// drives none and says so, in its reply and in the log of every plan.
func BenchmarkStopTranscriptNoneChosen(b *testing.B) {
	root := b.TempDir()
	transcript, err := benchfix.Plans(root, 50, 5<<20)
	if err != nil {
		b.Fatal(err)
	}
	in := []byte(fmt.Sprintf(`{"session_id":"bench","cwd":%q,"stop_hook_active":false,"hook_event_name":"Stop","transcript_path":%q}`, root, transcript))
	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }, InputDeadline: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		env.Stdin = bytes.NewReader(in)
		if code := Stop(env); code != 0 || !strings.Contains(out.String(), "none was driven") {
			b.Fatalf("exit %d: %q", code, out.String())
		}
	}
}
