package planchoice

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchTranscript writes a 5 MB transcript in Claude Code's JSON lines, the
// word "plan" everywhere and a few real plan mentions scattered, and returns
// its path and the 50 plans of the repository.
func benchTranscript(b *testing.B) (string, []Candidate) {
	b.Helper()
	plans := make([]Candidate, 50)
	for i := range plans {
		plans[i] = Candidate{ID: fmt.Sprintf("plan-%02d", i), Pending: i%10 == 3,
			Owner: fmt.Sprintf("session-%d", i%7), OwnerLastDecision: DecisionAllow,
			OwnerLastDecisionAt: now.Add(-time.Hour), Mtime: now.Add(-time.Duration(i) * time.Minute)}
	}
	path := filepath.Join(b.TempDir(), "transcript.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	size := 0
	for i := 0; size < 5<<20; i++ {
		n, _ := fmt.Fprintf(w, `{"parentUuid":"%08x-0000-4000-8000-000000000000","isSidechain":false,"userType":"external","cwd":"/home/u/repo","sessionId":"6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f","version":"2.1.197","type":"assistant","message":{"id":"msg_%08x","type":"message","role":"assistant","model":"claude-opus-4","content":[{"type":"text","text":"%s"}]},"uuid":"%08x-1111-4000-8000-000000000000","timestamp":"2026-03-14T15:09:26.000Z"}`+"\n",
			i, i, benchText(i), i)
		size += n
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path, plans
}

func benchText(i int) string {
	switch {
	case i%997 == 0:
		return fmt.Sprintf(`Running taskie status --plan plan-%02d to see the plan's state.`, i%50)
	case i%491 == 0:
		return fmt.Sprintf(`Editing /home/u/repo/.taskie/plans/plan-%02d/task-3.md as the plan says.`, i%50)
	}
	return `The plan is clear: I will follow the plan, update the plans in the plan file, and explain the plan new ideas to the planner.`
}

// BenchmarkChooseTranscript is docs/performance.md's "5 MB transcript and 50 plans":
// read the tail, find the mentions in one pass, choose.
func BenchmarkChooseTranscript(b *testing.B) {
	path, plans := benchTranscript(b)
	known := make(map[string]bool, len(plans))
	for _, p := range plans {
		known[p.ID] = true
	}
	isKnown := func(id string) bool { return known[id] }
	var c Choice
	b.ReportAllocs()
	for b.Loop() {
		tail, err := ReadTail(path, 0)
		if err != nil {
			b.Fatal(err)
		}
		c = Choose(Input{SessionID: "new-session", Plans: plans, Mentioned: AgentMentions(tail, []byte("Done with the plan."), isKnown), Now: now})
	}
	if c.Reason != Mentioned {
		b.Fatalf("chose %+v, want a mentioned plan", c)
	}
}

// BenchmarkOldPerPlanSearch is the approach this package replaces, for
// reference: bytes.LastIndex per plan × 4 patterns over the same tail.
func BenchmarkOldPerPlanSearch(b *testing.B) {
	path, plans := benchTranscript(b)
	tail, err := ReadTail(path, 0)
	if err != nil {
		b.Fatal(err)
	}
	known := make(map[string]bool, len(plans))
	for _, p := range plans {
		known[p.ID] = true
	}
	want := Mentions(tail, func(id string) bool { return known[id] })
	var got string
	for b.Loop() {
		got = oldLastMentioned(tail, plans)
	}
	if got != want[len(want)-1] {
		b.Fatalf("old approach found %q, Mentions %q", got, want[len(want)-1])
	}
}

func oldLastMentioned(tail []byte, plans []Candidate) string {
	best, bestAt := "", -1
	for _, c := range plans {
		for _, pat := range []string{"plans/" + c.ID + "/", "--plan " + c.ID, "--plan=" + c.ID, "plan new " + c.ID} {
			if at := oldLastWhole(tail, []byte(pat)); at > bestAt {
				best, bestAt = c.ID, at
			}
		}
	}
	return best
}

func oldLastWhole(b, pat []byte) int {
	for end := len(b); ; {
		at := bytes.LastIndex(b[:end], pat)
		if at < 0 {
			return -1
		}
		if next := at + len(pat); pat[len(pat)-1] == '/' || next >= len(b) || !isIDByte(b[next]) {
			return at
		}
		end = at + len(pat) - 1
	}
}
