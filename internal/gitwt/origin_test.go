package gitwt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// OriginURL reads what `git config --get remote.origin.url` prints, or
// says to ask git.
func TestOriginURL(t *testing.T) {
	for _, tc := range []struct {
		name, config, want string
		ok                 bool
	}{
		{"plain", "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n", "git@github.com:o/r.git", true},
		{"no origin", "[remote \"upstream\"]\n\turl = https://x/y\n", "", false},
		{"an include", "[include]\n\tpath = other\n[remote \"origin\"]\n\turl = https://x/y\n", "", false},
		{"quoted", "[remote \"origin\"]\n\turl = \"https://x/y\"\n", "", false},
		{"the last wins", "[remote \"origin\"]\n\turl = https://x/a\n\turl = https://x/b\n", "https://x/b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
				t.Skip("no git")
			}
			if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := OriginURL(dir)
			if got != tc.want || ok != tc.ok {
				t.Errorf("OriginURL = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
			if ok {
				out, err := exec.Command("git", "-C", dir, "config", "--get", "remote.origin.url").Output()
				if err != nil || strings.TrimSpace(string(out)) != got {
					t.Errorf("git says %q (%v), OriginURL %q", out, err, got)
				}
			}
		})
	}
}
