package fsafe

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEachNameListsLikeReadDir: EachName reports the names and types
// ReadDir does, in any order, over more than one read of the directory
// and every kind of entry, twice in a row.
func TestEachNameListsLikeReadDir(t *testing.T) {
	old := direntBuf
	direntBuf = 4 << 10 // many reads of the directory
	t.Cleanup(func() { direntBuf = old })
	r, root := newRoot(t)
	dir := filepath.Join(root, "d")
	for i := range 600 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("task-%d-review-%d.md", i, i%7+1)), "")
	}
	writeFile(t, filepath.Join(dir, "sub", "x.md"), "")
	symlink(t, "sub", filepath.Join(dir, "link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Logf("no FIFO: %v", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{}
	for _, e := range ents {
		want[e.Name()] = e.Type()
	}
	d, err := r.OpenDir("d")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for range 2 {
		got := map[string]fs.FileMode{}
		if err := d.EachName(func(name []byte, typ fs.FileMode) { got[string(name)] = typ }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("EachName (+) vs os.ReadDir (-):\n%s", diff)
		}
	}
}
