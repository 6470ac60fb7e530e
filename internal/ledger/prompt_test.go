package ledger

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

// promptLedger: F1 fixed by the post-review, F2 open, F3 declined, F4 fixed
// and confirmed by a reviewer.
func promptLedger() Ledger {
	l := fold(base(),
		opened("F4", 1, domain.Nit, "long line", "", 0),
		Event{Kind: KindFixed, ID: "F4", Iteration: 2, Actor: ActorReviewer},
	)
	return l
}

func TestForReviewer(t *testing.T) {
	want := "## Findings on record\n\n" +
		"Earlier reviews of this cycle reported these findings. Re-check each one and report it in " +
		"`findings` with its id and status `fixed` or `open`, and the severity you judge it has now " +
		"(a changed severity is recorded), besides looking afresh; a new finding " +
		"has id \"\". Do not report a finding on record again as new.\n" +
		"\nOpen:\n" +
		"- F2 (major) b.go:20 — error ignored\n" +
		"\nMarked fixed by the author, to verify:\n" +
		"- F1 (blocker) a.go:10 — nil map write. Fix: map made\n" +
		"\nDeclined by the author (report one `open` only if the reason does not hold):\n" +
		"- F3 (minor) c.go — typo. Why: generated file\n"
	if diff := cmp.Diff(want, ForReviewer(promptLedger())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := ForReviewer(Ledger{}); got != "" {
		t.Errorf("empty ledger: %q", got)
	}
	settled := fold(Ledger{}, opened("F1", 1, domain.Major, "x", "", 0), Event{Kind: KindFixed, ID: "F1", Actor: ActorReviewer})
	if got := ForReviewer(settled); got != "" {
		t.Errorf("only confirmed fixes: %q", got)
	}
}

func TestTable(t *testing.T) {
	all := [][]string{
		{"F1", "blocker", "fixed?", "1", "a.go:10", "nil map write", "map made"},
		{"F2", "major", "open", "1", "b.go:20", "error ignored", ""},
		{"F3", "minor", "declined", "1", "c.go", "typo", "generated file"},
		{"F4", "nit", "fixed", "1", "", "long line", ""},
	}
	if diff := cmp.Diff(all, Table(promptLedger(), false)); diff != "" {
		t.Errorf("all (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all[1:2], Table(promptLedger(), true)); diff != "" {
		t.Errorf("open (-want +got):\n%s", diff)
	}
	if n := len(Header()); n != len(all[0]) {
		t.Errorf("Header has %d columns, rows %d", n, len(all[0]))
	}
}

func TestDescribe(t *testing.T) {
	l := Fold(promptLedger(), Event{Kind: KindReopened, ID: "F1", Iteration: 2, Actor: ActorReviewer})
	want := "- F1 (blocker) a.go:10 — nil map write (reported open again 1×)\n" +
		"- F2 (major) b.go:20 — error ignored\n"
	if diff := cmp.Diff(want, Describe(l, []string{"F1", "F9", "F2"})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
