package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Whatever the coordination files' scanner takes, encoding/json reads the
// same; anything it is unsure of must be left to encoding/json. Run longer
// with go test ./internal/store -run '^$' -fuzz FuzzCoordDecodeAgreesWithJSON -fuzztime 30s
func FuzzCoordDecodeAgreesWithJSON(f *testing.F) {
	at := time.Date(2026, 11, 27, 20, 0, 0, 5, time.FixedZone("x", 3600))
	c := claimJSON{Task: "3", Agent: "a", Acquired: at, Expires: at, Heartbeat: at, Token: 4, Place: "vm:r:."}
	for _, v := range []any{
		claimsDoc{Plan: "p", Claims: []claimJSON{c, c}, LastToken: 9, Lost: []claimJSON{c}},
		worktreesDoc{Worktrees: []Worktree{{Task: 2, Path: "/w", Branch: "b", BaseSHA: "8e", LastCommit: "9f", Created: at, Adopted: true}},
			Checkouts: []Checkout{{Task: 5, Path: "/r", Head: "8e6a", Claimed: at}}},
		[]Held{{Task: 7, Agent: "a", Place: "p", Token: 3, At: at}},
	} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`null`, `[]`, `{}`,
		`{"plan":"p","claims":[{"task":"1","agent":"a","token":1,"place":"x"}],"claims":[{"agent":"b"}]}`,
		`{"plan":"p","plan":"q","last_token":99999999999999999999}`,
		`{"plan":"p\u0041","claims":null,"lost":[{"expires":"2026-01-02T03:04:05Z"}]}`,
		`{"worktrees":[{"task":"3","path":"/x","adopted":true,"task":"-0"}],"checkouts":[{"task":"01"}]}`,
		`[{"task":"7","at":"2026-01-02T03:04:05.123+01:00"},{"token":-1,"TOKEN":2}]`,
		"{\"plan\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	opts := cmp.Options{cmp.AllowUnexported(claimsDoc{}, worktreesDoc{}),
		cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location().String() == b.Location().String() })}
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data, decodeClaimsDoc, opts)
		agree(t, data, decodeWorktreesDoc, opts)
		agree(t, data, decodeHeld, opts)
	})
}

func agree[T any](t *testing.T, data []byte, dec func([]byte) (T, bool), opts cmp.Options) {
	t.Helper()
	got, ok := dec(data)
	if !ok {
		return
	}
	var want T
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%q: encoding/json refuses it (%v); the scanner takes it", data, err)
	}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Fatalf("%q: read as %T differently (-encoding/json +scanner):\n%s", data, want, diff)
	}
}
