package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/install"
)

// A fresh clone has the repository's .gitattributes but not the git
// config that says what the merge drivers run: doctor names the one
// command that registers them, and is content once it ran.
func TestMergeDriverCheck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	empty := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", empty)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")

	if _, ok := mergeDriver(t.TempDir()); ok {
		t.Errorf("outside a git repository: want no merge driver check")
	}
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	c, ok := mergeDriver(root)
	if !ok || c.OK || !strings.Contains(c.Fix, "`taskie init`") || !strings.Contains(c.Detail, "merge.taskie-events.driver") {
		t.Errorf("fresh clone: got %+v, want a failed check whose fix is `taskie init`", c)
	}
	if _, err := install.MergeDriver(root); err != nil {
		t.Fatal(err)
	}
	if c, ok := mergeDriver(root); !ok || !c.OK {
		t.Errorf("after registering: got %+v, want OK", c)
	}
	// A driver set to another command is not taskie's: reported.
	if out, err := exec.Command("git", "-C", root, "config", "merge.taskie-state.driver", "sh -c evil %A").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v: %s", err, out)
	}
	if c, _ := mergeDriver(root); c.OK || !strings.Contains(c.Detail, "merge.taskie-state.driver") {
		t.Errorf("another command: got %+v, want a failed check naming merge.taskie-state.driver", c)
	}
}
