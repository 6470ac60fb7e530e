package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
)

// The hand-written codec of the coordination files writes what
// json.MarshalIndent writes, byte for byte, and reads what encoding/json
// reads; what its scanner does not take goes to encoding/json.
func TestCoordCodecMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "a", "agent-07", "vm:repo-15d960:.", `qu"ote`, `back\slash`, "<&>", "tab\there", "é ü 漢字", "\u2028", "nl\n", "\x7f", "bad\xffutf8"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	times := []time.Time{{}, time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC),
		time.Date(2026, 5, 1, 12, 0, 0, 500, time.FixedZone("x", 3600)), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}
	tm := func() time.Time { return times[rng.IntN(len(times))] }
	for i := range 300 {
		var claims, lost []claimJSON
		if i%7 != 0 {
			claims = []claimJSON{}
		}
		for range rng.IntN(4) {
			claims = append(claims, claimJSON{Task: str(), Agent: str(), Acquired: tm(), Expires: tm(), Heartbeat: tm(), Token: rng.Int64N(3) - 1, Place: str()})
		}
		for range rng.IntN(2) {
			lost = append(lost, claimJSON{Task: fmt.Sprint(rng.IntN(9)), Agent: str(), Expires: tm(), Token: rng.Int64N(5)})
		}
		cd := claimsDoc{Plan: str(), Claims: claims, LastToken: rng.Int64N(3), Lost: lost}
		var ws []Worktree
		if i%5 != 0 {
			ws = []Worktree{}
		}
		for range rng.IntN(3) {
			ws = append(ws, Worktree{Task: domain.TaskID(rng.IntN(3)), Path: str(), Branch: str(), BaseSHA: str(), LastCommit: str(), Created: tm(), Adopted: rng.IntN(2) == 0})
		}
		var ks []Checkout
		for range rng.IntN(3) {
			ks = append(ks, Checkout{Task: domain.TaskID(rng.IntN(30)), Path: str(), Head: str(), Claimed: tm()})
		}
		wd := worktreesDoc{Worktrees: ws, Checkouts: ks}
		var hs []Held
		if i%6 != 0 {
			hs = []Held{}
		}
		for range rng.IntN(3) {
			hs = append(hs, Held{Task: domain.TaskID(rng.IntN(30)), Agent: str(), Place: str(), Token: rng.Int64N(9), At: tm()})
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, k := range ks {
				want, werr := json.Marshal(k)
				got, gerr := encodeCheckoutLine(k)
				if werr != nil || gerr != nil || string(got) != string(want)+"\n" {
					t.Fatalf("checkout line: %s (%v), want %s (%v)", got, gerr, want, werr)
				}
			}
			check(t, cd, encodeClaimsDoc, func(b []byte) (claimsDoc, bool) { return decodeClaimsDoc(b) })
			check(t, wd, encodeWorktreesDoc, func(b []byte) (worktreesDoc, bool) { return decodeWorktreesDoc(b) })
			check(t, hs, encodeHeld, func(b []byte) ([]Held, bool) { return decodeHeld(b) })
		})
	}
}

// check encodes v both ways and compares, then decodes the bytes both
// ways: where the scanner takes them it must read what encoding/json reads.
func check[T any](t *testing.T, v T, enc func(T) ([]byte, error), dec func([]byte) (T, bool)) {
	t.Helper()
	want, werr := json.MarshalIndent(v, "", "  ")
	got, gerr := enc(v)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("errors: encoding/json %v, codec %v", werr, gerr)
	}
	if werr != nil {
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Fatalf("written differently (-encoding/json +codec):\n%s", diff)
	}
	var std T
	if err := json.Unmarshal(want, &std); err != nil {
		t.Fatal(err)
	}
	if mine, ok := dec(want); ok {
		if diff := cmp.Diff(std, mine, cmp.AllowUnexported(claimsDoc{}, worktreesDoc{}), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location().String() == b.Location().String() })); diff != "" {
			t.Fatalf("read differently (-encoding/json +codec):\n%s", diff)
		}
	}
}

// The scanner takes what taskie writes: a whole file checked against
// encoding/json's reading, nulls included, as a claim reads it.
func TestCoordCodecTakesWhatTaskieWrites(t *testing.T) {
	for _, in := range []string{
		`{"plan": "p", "claims": null}`,
		`{"plan": "p", "claims": [], "lost": null}`,
		"{\n  \"worktrees\": null,\n  \"checkouts\": [\n    {\n      \"task\": \"1\",\n      \"path\": \"/r\",\n      \"head\": \"8e6a\",\n      \"claimed\": \"2026-11-27T20:45:25Z\"\n    }\n  ]\n}",
		`{"worktrees": [], "checkouts": null}`,
		`null`,
	} {
		var ok bool
		switch {
		case strings.Contains(in, "plan"):
			var want claimsDoc
			json.Unmarshal([]byte(in), &want)
			var got claimsDoc
			got, ok = decodeClaimsDoc([]byte(in))
			if diff := cmp.Diff(want, got); ok && diff != "" {
				t.Errorf("%s: (-encoding/json +codec)\n%s", in, diff)
			}
		case in == "null":
			_, ok = decodeHeld([]byte(in))
		default:
			var want worktreesDoc
			json.Unmarshal([]byte(in), &want)
			var got worktreesDoc
			got, ok = decodeWorktreesDoc([]byte(in))
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(worktreesDoc{})); ok && diff != "" {
				t.Errorf("%s: (-encoding/json +codec)\n%s", in, diff)
			}
		}
		if !ok {
			t.Errorf("%s: left to encoding/json", in)
		}
	}
}

// Files the scanner does not take are left to encoding/json: hand edits
// with other keys, escapes, nulls, numbers written otherwise.
func TestCoordCodecLeavesOddFilesToEncodingJSON(t *testing.T) {
	for _, in := range []string{
		``,
		`{"plan": "p", "Claims": []}`,
		`{"plan": "p\u0041", "claims": []}`,
		`{"plan": "p", "claims": [], "last_token": 1.0}`,
		`{"plan": "p", "claims": [], "last_token": 01}`,
		`{"plan": "p", "claims": [], "extra": 1}`,
		`{"plan": "p", "claims": [{"task": "1", "agent": "a", "expires": "yesterday"}]}`,
		`{"plan": "p", "claims": []} x`,
	} {
		if _, ok := decodeClaimsDoc([]byte(in)); ok {
			t.Errorf("%q: taken by the scanner", in)
		}
	}
	for _, in := range []string{`{"worktrees": [{"task": "+3", "path": "/x"}]}`, `{"worktrees": [{"task": 3}]}`, `{"worktrees": [], "checkouts": [{"task": "1", "head": null}]}`} {
		if _, ok := decodeWorktreesDoc([]byte(in)); ok {
			t.Errorf("%q: taken by the scanner", in)
		}
	}
}

// A scan of one kind of event reads to the end of the last whole line: a
// line still being written is left for the scan from the offset returned,
// which reads it whole once written. A log shorter than that offset was
// replaced.
func TestScanEventsOfFromOffset(t *testing.T) {
	c, err := OpenFileCoordAt(t.TempDir(), ".taskie/coord", false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := PlanKey{Plan: "p"}
	rel, _ := c.rel(key, CoordLogName)
	line := func(task, kind string) string {
		return `{"ts":"2026-05-01T12:00:00Z","plan":"p","task":"` + task + `","event":"` + kind + `","actor":"a"}` + "\n"
	}
	whole := line("1", EventTaskResult) + line("2", EventClaim) + line("3", EventTaskResult)
	cut := len(whole) - 20
	if err := c.root.MkdirAll(".taskie/coord/p", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.root.WriteFile(rel, []byte(whole[:cut]), false); err != nil {
		t.Fatal(err)
	}
	var got []string
	scan := func(from int64) int64 {
		t.Helper()
		end, err := c.ScanEventsOf(context.Background(), key, EventTaskResult, from, func(e events.Event) { got = append(got, e.Task) })
		if err != nil {
			t.Fatal(err)
		}
		return end
	}
	end := scan(0)
	if want := int64(len(line("1", EventTaskResult)) + len(line("2", EventClaim))); end != want || !slices.Equal(got, []string{"1"}) {
		t.Fatalf("first scan: end %d (want %d), read %v", end, want, got)
	}
	if err := c.root.WriteFile(rel, []byte(whole), false); err != nil {
		t.Fatal(err)
	}
	if end = scan(end); end != int64(len(whole)) || !slices.Equal(got, []string{"1", "3"}) {
		t.Fatalf("second scan: end %d, read %v", end, got)
	}
	if err := c.root.WriteFile(rel, []byte(line("1", EventTaskResult)), false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ScanEventsOf(context.Background(), key, EventTaskResult, end, func(events.Event) {}); !errors.Is(err, ErrLogShrank) {
		t.Fatalf("a shorter log: %v, want ErrLogShrank", err)
	}
}
