package gitwt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// MainCheckout finds the main checkout from a linked worktree (from the
// files alone), says "not linked" in the main checkout and outside git,
// and refuses a bare repository's worktree and one whose repository is gone.
func TestMainCheckout(t *testing.T) {
	main, linked := repo(t)
	base := filepath.Dir(main)
	sub := filepath.Join(linked, "deep")
	os.MkdirAll(sub, 0o755)
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)

	bare := filepath.Join(base, "app.git")
	git(t, base, "clone", "-q", "--bare", main, bare)
	bareWT := filepath.Join(base, "bare-wt")
	git(t, bare, "worktree", "add", "-q", bareWT, "main")

	// a worktree whose main checkout moved away: its .git file points nowhere
	moved := filepath.Join(base, "moved-main")
	movedWT := filepath.Join(base, "moved-wt")
	copyMain := filepath.Join(base, "main2")
	git(t, base, "clone", "-q", main, copyMain)
	git(t, copyMain, "worktree", "add", "-q", "-b", "x", movedWT)
	if err := os.Rename(copyMain, moved); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		dir    string
		want   Checkout
		noMain bool
	}{
		{"main checkout", main, Checkout{}, false},
		{"outside git", outside, Checkout{}, false},
		{"linked", linked, Checkout{Linked: true, Worktree: linked, Main: main, Common: filepath.Join(main, ".git")}, false},
		{"below linked", sub, Checkout{Linked: true, Worktree: linked, Main: main, Common: filepath.Join(main, ".git")}, false},
		{"bare", bareWT, Checkout{Linked: true, Worktree: bareWT, Common: bare}, true},
		{"main moved", movedWT, Checkout{Linked: true, Worktree: movedWT, Main: copyMain, Common: filepath.Join(copyMain, ".git")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MainCheckout(tc.dir)
			if tc.noMain != errors.Is(err, ErrNoMain) {
				t.Fatalf("err = %v, want ErrNoMain %v", err, tc.noMain)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("MainCheckout(%s) (-want +got):\n%s", tc.dir, d)
			}
		})
	}
}
