package store_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/internal/store"
)

// Temp files of writers killed mid-write (a claim, a worktree record, an
// export) are removed by the next writer of the coordination directory;
// other files stay.
func TestCoordWriterRemovesStaleTemps(t *testing.T) {
	root := gitRepo(t)
	c := coordAt(t, root, &clock)
	dir := c.Dir(key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := []string{".claims.json.tmp123456", ".worktrees.json.tmp7", "." + store.SharedLogName + ".tmp42"}
	for _, name := range append(stale, "notes.txt") {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Claim(ctx, key, 1, "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("notes.txt removed: %v", err)
	}
}
