//go:build unix

package state

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Under umask 077 a new state.json is 0600 (0644 less the umask), and a
// rewritten one keeps its own bits.
func TestWriteFileAtomicRespectsUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	fresh, kept := filepath.Join(dir, "state.json"), filepath.Join(dir, "kept.json")
	if err := os.WriteFile(kept, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o664); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fresh, kept} {
		if err := WriteFileAtomic(p, []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string]os.FileMode{fresh: 0o600, kept: 0o664} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(p), got, want)
		}
	}
	assertOnly(t, dir, "kept.json", "state.json")
}
