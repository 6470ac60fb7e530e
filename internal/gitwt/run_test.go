package gitwt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Env drops what points git at another repository, object store, index or
// configuration (a git hook or `git -c` sets them) and keeps the user's own.
func TestEnvScrub(t *testing.T) {
	prompt := "GIT_TERMINAL_PROMPT=0"
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"nothing to drop", []string{"HOME=/h", "PATH=/bin"}, []string{"HOME=/h", "PATH=/bin", prompt}},
		{"a hook's repository", []string{"GIT_DIR=/x/.git", "GIT_WORK_TREE=/x", "GIT_COMMON_DIR=/x/.git", "GIT_PREFIX=sub/", "HOME=/h"}, []string{"HOME=/h", prompt}},
		{"a hook's index and objects", []string{"GIT_INDEX_FILE=/x/.git/index.lock", "GIT_OBJECT_DIRECTORY=/q", "GIT_ALTERNATE_OBJECT_DIRECTORIES=/q2"}, []string{prompt}},
		{"history rewriting", []string{"GIT_GRAFT_FILE=/g", "GIT_NO_REPLACE_OBJECTS=1", "GIT_REPLACE_REF_BASE=refs/x/", "GIT_SHALLOW_FILE=/s"}, []string{prompt}},
		{"internal to git", []string{"GIT_IMPLICIT_WORK_TREE=0", "GIT_INTERNAL_SUPER_PREFIX=a/"}, []string{prompt}},
		{"git -c and a repository's config", []string{"GIT_CONFIG_PARAMETERS='core.fsmonitor'='evil'", "GIT_CONFIG=/x/cfg"}, []string{prompt}},
		{"config from the environment", []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/evil"}, []string{prompt}},
		{"a prompt setting is replaced", []string{"GIT_TERMINAL_PROMPT=1"}, []string{prompt}},
		{"the user's own config files stay", []string{"GIT_CONFIG_GLOBAL=/h/g", "GIT_CONFIG_SYSTEM=/etc/g", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a"},
			[]string{"GIT_CONFIG_GLOBAL=/h/g", "GIT_CONFIG_SYSTEM=/etc/g", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", prompt}},
		{"a name that only starts alike stays", []string{"GIT_DIRECTORY=/d", "GIT_CONFIGX=1"}, []string{"GIT_DIRECTORY=/d", "GIT_CONFIGX=1", prompt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Env(tc.in)); d != "" {
				t.Errorf("Env (-want +got):\n%s", d)
			}
		})
	}
}

// Run acts on the directory it is given, whatever a git hook that ran
// taskie left in the environment.
func TestRunIgnoresHookEnvironment(t *testing.T) {
	main, _ := repo(t)
	other := t.TempDir()
	git(t, other, "init", "-q", "-b", "main")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.bare'='true'")
	got, err := Run(context.Background(), main, "rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatal(err)
	}
	if got != main {
		t.Errorf("toplevel %s, want %s", got, main)
	}
	_, err = Run(context.Background(), main, "merge-base", "--is-ancestor", "HEAD~0", "does-not-exist")
	if ExitCode(err) <= 0 {
		t.Errorf("a failing git: exit code %d (%v), want > 0", ExitCode(err), err)
	}
	if _, err := Run(context.Background(), os.TempDir(), "rev-parse", "HEAD"); !errors.Is(err, ErrNotRepo) || ExitCode(err) <= 0 {
		t.Errorf("outside a repository: %v (exit %d), want ErrNotRepo and git's exit code", err, ExitCode(err))
	}
}
