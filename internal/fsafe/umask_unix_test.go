//go:build unix

package fsafe

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// umaskEnv makes the test binary run TestUmaskChild under umask 077 in the
// directory it names: the umask is per process, so the test changes it
// only in a child of its own.
const umaskEnv = "TASKIE_TEST_UMASK_DIR"

// Under umask 077 a new file is created 0600 (0644 less the umask: nothing
// widens it), and a rewritten file keeps its own bits.
func TestUmaskRespected(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kept.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "kept.md"), 0o664); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUmaskChild$")
	cmd.Env = append(os.Environ(), umaskEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := map[string]fs.FileMode{
		"state.json": 0o600, "plan.md": 0o600, "task-1.md": 0o600, "appended.jsonl": 0o600,
		"replaced": 0o600, "created": 0o600, "kept.md": 0o664,
	}
	got := map[string]fs.FileMode{}
	for name := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = fi.Mode().Perm()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}

// TestUmaskChild writes files under umask 077 for TestUmaskRespected.
func TestUmaskChild(t *testing.T) {
	dir := os.Getenv(umaskEnv)
	if dir == "" {
		t.Skip("run by TestUmaskRespected")
	}
	syscall.Umask(0o077)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, name := range []string{"state.json", "plan.md", "task-1.md", "kept.md"} {
		if err := r.WriteFile(name, []byte("new"), true); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.AppendFile("appended.jsonl", []byte("{}\n"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if err := r.ReplaceFile("replaced", []byte("x")); err != nil {
		t.Fatal(err)
	}
	f, err := r.CreateExclusive("created", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
