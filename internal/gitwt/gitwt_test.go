package gitwt

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// repo makes a repository with one commit and a linked worktree.
func repo(t *testing.T) (main, linked string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	main, linked = filepath.Join(base, "main"), filepath.Join(base, "linked")
	os.Mkdir(main, 0o755)
	git(t, main, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(main, "a.txt"), []byte("a\n"), 0o644)
	git(t, main, "add", "a.txt")
	git(t, main, "commit", "-q", "-m", "first")
	git(t, main, "worktree", "add", "-q", "-b", "w", linked)
	return main, linked
}

// Discover reads the same common directory git reports, without git.
func TestDiscoverAgreesWithGit(t *testing.T) {
	main, linked := repo(t)
	sub := filepath.Join(linked, "deep", "er")
	os.MkdirAll(sub, 0o755)
	for _, dir := range []string{main, linked, sub} {
		l, err := Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if l.CommonDir != filepath.Clean(want) {
			t.Errorf("%s: common dir %s, git says %s", dir, l.CommonDir, want)
		}
		if top := git(t, dir, "rev-parse", "--show-toplevel"); l.Toplevel != top {
			t.Errorf("%s: toplevel %s, git says %s", dir, l.Toplevel, top)
		}
		if l.Linked != (dir != main) {
			t.Errorf("%s: linked = %v", dir, l.Linked)
		}
	}
}

func TestNotARepo(t *testing.T) {
	dir := t.TempDir()
	if _, err := Discover(dir); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Discover: %v", err)
	}
	if _, err := CommonDir(dir); !errors.Is(err, ErrNotRepo) {
		t.Errorf("CommonDir: %v", err)
	}
}

// A .git file without commondir (a submodule) is its own common
// directory; a .git file that names nothing is left to git.
func TestGitFiles(t *testing.T) {
	dir := t.TempDir()
	gd := filepath.Join(dir, "modules", "x")
	os.MkdirAll(gd, 0o755)
	os.WriteFile(filepath.Join(gd, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	wt := filepath.Join(dir, "x")
	os.MkdirAll(wt, 0o755)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../modules/x\n"), 0o644)
	l, err := Discover(wt)
	if err != nil || l.CommonDir != gd || l.Linked {
		t.Errorf("submodule: %+v, %v", l, err)
	}
	os.WriteFile(filepath.Join(wt, ".git"), []byte("nonsense\n"), 0o644)
	if _, err := Discover(wt); !errors.Is(err, errUnusual) {
		t.Errorf("bad .git file: %v", err)
	}
}

func TestWorktreeOps(t *testing.T) {
	main, linked := repo(t)
	head, err := Head(main)
	if err != nil || len(head) != 40 {
		t.Fatalf("Head = %q, %v", head, err)
	}
	if c, err := Commit(main, "main"); err != nil || c != head {
		t.Errorf("Commit(main) = %q, %v", c, err)
	}
	if _, err := Commit(main, "nosuch"); err == nil || !strings.Contains(err.Error(), `"nosuch" is not a commit`) {
		t.Errorf("Commit(nosuch): %v", err)
	}
	if top, err := MainWorktree(linked); err != nil || top != main {
		t.Errorf("MainWorktree = %q, %v", top, err)
	}
	if !BranchExists(main, "w") || BranchExists(main, "nope") {
		t.Error("BranchExists")
	}
	wt := filepath.Join(filepath.Dir(main), "added")
	if err := Add(main, wt, "taskie/p/task-1", head); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "b.txt"), []byte("b\n"), 0o644)
	if d, err := Dirty(wt); err != nil || len(d) != 1 || !strings.HasSuffix(d[0], "b.txt") {
		t.Errorf("Dirty = %q, %v", d, err)
	}
	git(t, wt, "add", "b.txt")
	git(t, wt, "commit", "-q", "-m", "b")
	if n, err := CommitsSince(wt, head); err != nil || n != 1 {
		t.Errorf("CommitsSince = %d, %v", n, err)
	}
	if err := Remove(main, wt, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
}

// TestHeadOfAgreesWithGit: HEAD read from the files is what git says, in
// the main checkout and a linked worktree, with loose and packed refs and
// a detached HEAD; outside a repository it is an error.
func TestHeadOfAgreesWithGit(t *testing.T) {
	main, linked := repo(t)
	check := func(dir, when string) {
		t.Helper()
		l, err := Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := headFromFiles(l); !ok {
			t.Errorf("%s, %s: not read from the files", dir, when)
		}
		got, err := HeadOf(l)
		if want := git(t, dir, "rev-parse", "HEAD"); err != nil || got != want {
			t.Errorf("%s, %s: HeadOf = %q, %v; git says %q", dir, when, got, err, want)
		}
	}
	check(main, "loose ref")
	check(linked, "loose ref")
	git(t, main, "commit", "-q", "--allow-empty", "-m", "second")
	git(t, main, "pack-refs", "--all")
	check(main, "packed refs")
	check(linked, "packed refs")
	git(t, linked, "checkout", "-q", "--detach")
	check(linked, "detached")
	if _, err := HeadOf(Layout{Toplevel: t.TempDir()}); err == nil {
		t.Error("HeadOf outside a repository: no error")
	}
}
