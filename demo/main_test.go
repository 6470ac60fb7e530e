package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskie-dev/taskie/internal/agentsim"
)

// TestDemoLegendAndKeep plays the demo against freshly built binaries: the
// legend comes before the first hook decision, each decision says what it
// means, and the sample project stays (with the commands to look at it) only
// when asked; otherwise the demo says it removed it.
func TestDemoLegendAndKeep(t *testing.T) {
	dir := t.TempDir()
	taskie, reviewer := filepath.Join(dir, "taskie"), filepath.Join(dir, "fakereviewer")
	for out, pkg := range map[string]string{taskie: "../cmd/taskie", reviewer: "../internal/testtools/fakereviewer"} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	for _, tc := range []struct {
		name string
		keep bool
		want []string
	}{
		{"keep", true, []string{"kept the sample project: ", " status\n", " history", " log"}},
		{"remove", false, []string{"removed the sample project (make demo KEEP=1 keeps it to look at)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			project, err := run(&out, taskie, reviewer, tc.keep)
			if tc.keep {
				t.Cleanup(func() { os.RemoveAll(filepath.Dir(project)) })
			}
			if err != nil {
				t.Fatalf("demo: %v\n%s", err, out.String())
			}
			text := out.String()
			legend := strings.Index(text, agentsim.Legend+"\n")
			first := strings.Index(text, "stop #1 (stop_hook_active=false): BLOCK (keep working)")
			if legend < 0 || first < 0 || legend > first {
				t.Errorf("want the legend line before the first decision, explained:\n%s", text)
			}
			for _, w := range []string{"allow (the turn ends)", "agent: end-turn 2 (nothing to write", "user: /taskie:continue-plan"} {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			_, statErr := os.Stat(filepath.Join(project, ".taskie", "plans", "demo", "state.json"))
			if tc.keep && statErr != nil {
				t.Errorf("kept project is gone: %v", statErr)
			}
			if !tc.keep && !os.IsNotExist(statErr) {
				t.Errorf("project %s should be removed, stat: %v", project, statErr)
			}
			if !tc.keep && strings.Contains(text, "kept") {
				t.Errorf("removed project announced as kept:\n%s", text)
			}
		})
	}
}
