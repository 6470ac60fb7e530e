package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Registering keeps the user's own .gitattributes lines, adds taskie's
// once, and sets this clone's config to taskie's fixed command.
func TestMergeDriverRegistersOnce(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	empty := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", empty)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	ga := filepath.Join(root, ".gitattributes")
	if err := os.WriteFile(ga, []byte("*.png binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		cs, err := MergeDriver(root)
		if err != nil {
			t.Fatal(err)
		}
		if (i == 0) != (len(cs) == 2) {
			t.Errorf("run %d: changes %+v", i+1, cs)
		}
	}
	got, _ := os.ReadFile(ga)
	want := "*.png binary\n# written by taskie: merge a plan's files without conflicts (docs/fleet.md)\n" +
		".taskie/plans/*/events.jsonl merge=taskie-events\n.taskie/plans/*/state.json merge=taskie-state\n.taskie/plans/*/tasks.md merge=taskie-tasks\n.taskie/plans/*/task-*-output.md merge=union\n"
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf(".gitattributes (-want +got):\n%s", d)
	}
	if m := MissingDriverConfig(root); len(m) != 0 {
		t.Errorf("missing after registering: %v", m)
	}
}
