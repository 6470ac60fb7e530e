package ledger

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
)

var allowLedger = cmp.AllowUnexported(Ledger{}, review{}, ref{})

// fold folds events into l.
func fold(l Ledger, events ...Event) Ledger {
	for _, e := range events {
		l = Fold(l, e)
	}
	return l
}

func opened(id string, it int, sev domain.Severity, title, file string, line int) Event {
	return Event{Kind: KindOpened, ID: id, Iteration: it, Severity: sev, Title: title, File: file, Line: line, Actor: ActorReviewer}
}

func reviewed(it int, v domain.Verdict) Event {
	return Event{Kind: KindReviewed, Iteration: it, Verdict: v, Actor: ActorReviewer}
}

func rf(id string, sev domain.Severity, title, file string, line int, st Status) ReportedFinding {
	return ReportedFinding{ID: id, Severity: sev, Title: title, File: file, Line: line, Status: st}
}

// base is a ledger after one review (F1 blocker, F2 major, F3 minor) and a
// post-review that fixed F1 and declined F3.
func base() Ledger { return replay(baseEvents()) }

func baseEvents() []Event {
	return []Event{
		opened("F1", 1, domain.Blocker, "nil map write", "a.go", 10),
		opened("F2", 1, domain.Major, "error ignored", "b.go", 20),
		opened("F3", 1, domain.Minor, "typo", "c.go", 0),
		reviewed(1, domain.Fail),
		{Kind: KindFixed, ID: "F1", Iteration: 1, Note: "map made", Actor: ActorPostReview},
		{Kind: KindDeclined, ID: "F3", Iteration: 1, Note: "generated file", Actor: ActorPostReview},
	}
}

func TestRecord(t *testing.T) {
	tests := []struct {
		name     string
		findings []ReportedFinding
		want     []Event
	}{
		{
			name: "no findings: no events",
		},
		{
			name:     "empty findings: the review alone",
			findings: []ReportedFinding{},
			want:     []Event{reviewed(2, domain.Fail)},
		},
		{
			name: "new findings get the next ids",
			findings: []ReportedFinding{
				rf("", domain.Major, "race", "d.go", 5, Open),
				rf("", "", "second", "", 0, ""),
			},
			want: []Event{
				opened("F4", 2, domain.Major, "race", "d.go", 5),
				opened("F5", 2, domain.Major, "second", "", 0),
				reviewed(2, domain.Fail),
			},
		},
		{
			name:     "unknown id is new, noted",
			findings: []ReportedFinding{rf("F9", domain.Nit, "x", "", 0, Open)},
			want: []Event{
				{Kind: KindOpened, ID: "F4", Iteration: 2, Severity: domain.Nit, Title: "x",
					Note: `reviewer's id "F9" is unknown; recorded as new`, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "fixed closes, confirms, and is ignored when confirmed",
			findings: []ReportedFinding{
				rf("F2", domain.Major, "", "", 0, Fixed),
				rf("F1", domain.Blocker, "", "", 0, Fixed),
			},
			want: []Event{
				{Kind: KindFixed, ID: "F2", Iteration: 2, Actor: ActorReviewer},
				{Kind: KindFixed, ID: "F1", Iteration: 2, Note: "map made", Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "open reopens fixed and declined; open on open changes nothing",
			findings: []ReportedFinding{
				rf("f1", domain.Major, "", "", 0, Open),
				rf("3", domain.Minor, "", "", 0, Open),
				rf("F2", domain.Major, "", "", 0, Open),
			},
			want: []Event{
				{Kind: KindReopened, ID: "F1", Iteration: 2, Severity: domain.Major, Actor: ActorReviewer},
				{Kind: KindReopened, ID: "F3", Iteration: 2, Severity: domain.Minor, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "a finding on record re-found without its id is that finding",
			findings: []ReportedFinding{
				rf("", domain.Blocker, "Nil  map write", "./a.go", 11, Open),
			},
			want: []Event{
				{Kind: KindReopened, ID: "F1", Iteration: 2, Severity: domain.Blocker, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "a new finding already fixed, and a second report, are ignored",
			findings: []ReportedFinding{
				rf("", domain.Major, "gone", "", 0, Fixed),
				rf("F2", domain.Major, "", "", 0, Fixed),
				rf("F2", domain.Major, "", "", 0, Open),
				rf("", domain.Minor, "dup", "e.go", 1, Open),
				rf("", domain.Minor, "dup", "e.go", 2, Open),
			},
			want: []Event{
				{Kind: KindFixed, ID: "F2", Iteration: 2, Actor: ActorReviewer},
				opened("F4", 2, domain.Minor, "dup", "e.go", 1),
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "untitled new findings are not matched to each other",
			findings: []ReportedFinding{
				rf("", domain.Major, "", "", 0, Open),
				rf("", domain.Major, " ", "", 0, Open),
			},
			want: []Event{
				opened("F4", 2, domain.Major, "", "", 0),
				opened("F5", 2, domain.Major, "", "", 0),
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "an open finding reported at another severity: raised, lowered, recorded once",
			findings: []ReportedFinding{
				rf("F2", domain.Blocker, "", "", 0, Open),
				rf("F2", domain.Nit, "", "", 0, Open),
			},
			want: []Event{
				{Kind: KindSeverity, ID: "F2", Iteration: 2, Severity: domain.Blocker, From: domain.Major, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "a severity change found by title and file",
			findings: []ReportedFinding{
				rf("", domain.Minor, "Error ignored", "b.go", 21, Open),
			},
			want: []Event{
				{Kind: KindSeverity, ID: "F2", Iteration: 2, Severity: domain.Minor, From: domain.Major, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name: "no severity, or one we do not know, keeps the recorded one",
			findings: []ReportedFinding{
				rf("F2", "", "", "", 0, Open),
				rf("F1", "urgent", "", "", 0, Open),
			},
			want: []Event{
				{Kind: KindReopened, ID: "F1", Iteration: 2, Severity: domain.Blocker, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name:     "a severity on a fixed report changes nothing",
			findings: []ReportedFinding{rf("F2", domain.Nit, "", "", 0, Fixed)},
			want: []Event{
				{Kind: KindFixed, ID: "F2", Iteration: 2, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
		{
			name:     "fixed on a declined finding closes it",
			findings: []ReportedFinding{rf("F3", domain.Minor, "", "", 0, Fixed)},
			want: []Event{
				{Kind: KindFixed, ID: "F3", Iteration: 2, Actor: ActorReviewer},
				reviewed(2, domain.Fail),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := base()
			before := base()
			got := Record(l, 2, Answer{Verdict: domain.Fail, Findings: tc.findings})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, l, allowLedger); diff != "" {
				t.Errorf("Record changed its ledger:\n%s", diff)
			}
		})
	}
}

func TestFoldState(t *testing.T) {
	l := base()
	want := []Finding{
		{ID: "F1", Severity: domain.Blocker, Title: "nil map write", File: "a.go", Line: 10, Status: Fixed, Opened: 1, Note: "map made", By: ActorPostReview},
		{ID: "F2", Severity: domain.Major, Title: "error ignored", File: "b.go", Line: 20, Status: Open, Opened: 1, By: ActorReviewer},
		{ID: "F3", Severity: domain.Minor, Title: "typo", File: "c.go", Status: Declined, Opened: 1, Note: "generated file", By: ActorPostReview},
	}
	if diff := cmp.Diff(want, l.Findings()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if l.Iteration() != 1 {
		t.Errorf("Iteration = %d, want 1", l.Iteration())
	}
	l = Fold(l, Event{Kind: KindReopened, ID: "F1", Iteration: 2, Severity: "", Actor: ActorReviewer})
	if f, _ := l.Find("1"); f.Status != Open || f.Reopened != 1 || f.Severity != domain.Blocker {
		t.Errorf("reopened F1 = %+v", f)
	}
	l = Fold(l, Resume(l, "go on"))
	if f, _ := l.Find("F1"); f.Reopened != 0 {
		t.Errorf("after resume F1.Reopened = %d, want 0", f.Reopened)
	}
}

// TestFoldIgnores checks that events that do not apply change nothing.
func TestFoldIgnores(t *testing.T) {
	l := base()
	for _, e := range []Event{
		{Kind: KindFixed, ID: "F9"},
		{Kind: "FINDING_FROBBED", ID: "F1"},
		opened("F1", 2, domain.Nit, "again", "", 0),
		opened("", 2, domain.Nit, "no id", "", 0),
	} {
		if diff := cmp.Diff(l, Fold(l, e), allowLedger); diff != "" {
			t.Errorf("%+v changed the ledger:\n%s", e, diff)
		}
	}
}

// TestFoldPure folds two different events onto one ledger: neither sees
// the other, and the ledger itself is unchanged.
func TestFoldPure(t *testing.T) {
	l := base()
	copyOf := base()
	a := Fold(l, opened("F4", 2, domain.Nit, "a", "", 0))
	b := Fold(l, opened("F4", 2, domain.Major, "b", "", 0))
	a = Fold(a, reviewed(2, domain.Pass))
	b = Fold(b, Event{Kind: KindFixed, ID: "F2", Actor: ActorReviewer})
	if fa, _ := a.Find("F4"); fa.Title != "a" {
		t.Errorf("a's F4 = %+v", fa)
	}
	if fb, _ := b.Find("F4"); fb.Title != "b" {
		t.Errorf("b's F4 = %+v", fb)
	}
	if f, _ := a.Find("F2"); f.Status != Open {
		t.Errorf("a sees b's fix of F2")
	}
	if diff := cmp.Diff(copyOf, l, allowLedger); diff != "" {
		t.Errorf("Fold changed its argument:\n%s", diff)
	}
}

// TestReplay drives a cycle through Record, Fix, Decline and Resume, keeping
// the ledger by folding as it goes, and checks that replaying the events
// rebuilds it exactly.
func TestReplay(t *testing.T) {
	var l Ledger
	var log []Event
	add := func(evs ...Event) {
		for _, e := range evs {
			l = Fold(l, e)
			log = append(log, e)
		}
	}
	must := func(e Event, err error) Event {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	add(Record(l, 1, Answer{Verdict: domain.Fail, Findings: []ReportedFinding{
		rf("", domain.Blocker, "a", "a.go", 1, Open), rf("", domain.Minor, "b", "", 0, Open)}})...)
	add(must(Fix(l, "F1", "done")), must(Decline(l, "F2", "not ours")))
	add(Record(l, 2, Answer{Verdict: domain.Fail, Findings: []ReportedFinding{
		rf("F1", domain.Blocker, "a", "a.go", 1, Open), rf("", domain.Major, "c", "c.go", 3, Open)}})...)
	add(must(Fix(l, "F1", "really")), must(Fix(l, "F3", "")))
	add(Record(l, 3, Answer{Verdict: domain.Pass})...) // verdict alone: no events
	add(Record(l, 4, Answer{Verdict: domain.Pass, Findings: []ReportedFinding{
		rf("F1", domain.Blocker, "", "", 0, Fixed), rf("F3", domain.Major, "", "", 0, Fixed), rf("F9", domain.Nit, "d", "", 0, Open)}})...)
	add(Resume(l, "human: fine"))
	add(Record(l, 5, Answer{Verdict: domain.Pass, Findings: []ReportedFinding{}})...)

	if diff := cmp.Diff(l, replay(log), allowLedger); diff != "" {
		t.Errorf("replay differs from the ledger (-kept +replayed):\n%s", diff)
	}
	if got, want := TrendString(l), "2 → 2 → 1 → 1"; got != want {
		t.Errorf("trend = %q, want %q", got, want)
	}
	if l.Iteration() != 5 {
		t.Errorf("Iteration = %d, want 5", l.Iteration())
	}
}

func TestFixDecline(t *testing.T) {
	l := base()
	tests := []struct {
		name    string
		do      func() (Event, error)
		want    Event
		wantErr string
		is      error
	}{
		{
			name: "fix by any id form",
			do:   func() (Event, error) { return Fix(l, " f2 ", "checked\nthe error") },
			want: Event{Kind: KindFixed, ID: "F2", Iteration: 1, Note: "checked the error", Actor: ActorPostReview},
		},
		{
			name: "fix a declined finding",
			do:   func() (Event, error) { return Fix(l, "3", "") },
			want: Event{Kind: KindFixed, ID: "F3", Iteration: 1, Actor: ActorPostReview},
		},
		{
			name: "decline, and decline again with a new reason",
			do:   func() (Event, error) { return Decline(l, "F3", "out of scope") },
			want: Event{Kind: KindDeclined, ID: "F3", Iteration: 1, Note: "out of scope", Actor: ActorPostReview},
		},
		{
			name:    "unknown id lists the known ones",
			do:      func() (Event, error) { return Fix(l, "F7", "") },
			wantErr: `finding "F7": not in this review cycle's ledger (known: F1, F2, F3)`,
			is:      ErrUnknownFinding,
		},
		{
			name:    "unknown id in an empty ledger",
			do:      func() (Event, error) { return Decline(Ledger{}, "F1", "x") },
			wantErr: `finding "F1": not in this review cycle's ledger (it has no findings)`,
			is:      ErrUnknownFinding,
		},
		{
			name:    "declining needs a reason",
			do:      func() (Event, error) { return Decline(l, "F2", "  \n ") },
			wantErr: "finding F2: declining needs a reason (--why)",
			is:      ErrNoReason,
		},
		{
			name:    "fixing twice",
			do:      func() (Event, error) { return Fix(l, "F1", "") },
			wantErr: "finding F1: already fixed",
			is:      ErrAlreadyFixed,
		},
		{
			name:    "declining a fixed finding",
			do:      func() (Event, error) { return Decline(l, "F1", "meh") },
			wantErr: "finding F1: already fixed; nothing to decline",
			is:      ErrAlreadyFixed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.do()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, tc.is) {
					t.Fatalf("error = %v, want %q (%v)", err, tc.wantErr, tc.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// replay folds events, in order, into an empty ledger, as ledgerlog does
// with a plan's log.
func replay(events []Event) Ledger {
	var l Ledger
	for _, e := range events {
		l = Fold(l, e)
	}
	return l
}
