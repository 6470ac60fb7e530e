// Package gitwt runs the few git commands parallel execution needs
// (docs/parallel.md#worktrees): where a clone keeps what all its worktrees share (the git common
// directory), a worktree's HEAD, and adding, inspecting and removing
// worktrees. Discover and HeadOf read git's own files, so that a claim runs
// no git process; every other call is one git process with a timeout, run without the
// GIT_DIR-like variables a git hook may have set, so that it always acts on
// the directory it is given. Outside a repository, or without git, calls
// fail with an error wrapping ErrNotRepo.
package gitwt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// ErrNotRepo is wrapped by the error of a call made outside a git
// repository, or where git cannot run.
var ErrNotRepo = errors.New("not in a git repository")

// Timeout bounds one git command; adding a worktree checks out files.
var Timeout = 2 * time.Minute

// scrubbed are the variables that point git at another repository, object
// store, index or configuration than the directory given: the ones git
// itself clears before it runs a command in another repository (`git
// rev-parse --local-env-vars`). A git hook that runs taskie inherits them,
// and `git -c` passes its settings on in GIT_CONFIG_PARAMETERS. The user's
// own configuration files (GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM,
// GIT_CONFIG_NOSYSTEM) and HOME are kept.
var scrubbed = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
	"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
	"GIT_TERMINAL_PROMPT", // set to 0 below: git never waits for a password
}

// ExitError is a git command that ran and failed. One that failed because
// its directory is in no repository wraps ErrNotRepo.
type ExitError struct {
	Dir     string
	Args    string // the arguments, joined by spaces
	Msg     string // git's last line of stderr, or the exit status
	Code    int    // git's exit status
	notRepo bool
}

func (e *ExitError) Error() string {
	if e.notRepo {
		return e.Dir + ": " + ErrNotRepo.Error()
	}
	return "git " + e.Args + ": " + e.Msg
}

func (e *ExitError) Unwrap() error {
	if e.notRepo {
		return ErrNotRepo
	}
	return nil
}

// ExitCode returns the exit status of the git command that failed with
// err, or -1 when git did not run to an exit status.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// run runs git with args in dir under Timeout.
func run(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	return Run(ctx, dir, args...)
}

// Run runs git with args in dir, with the environment Env returns, and
// returns its trimmed stdout: every git process taskie starts goes through
// it. A failure names the command and git's last line of stderr (an
// *ExitError); outside a repository, or when git cannot run, the error
// wraps ErrNotRepo.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = Env(os.Environ())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		return strings.TrimSpace(out.String()), nil
	}
	msg := lastLine(errb.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return "", fmt.Errorf("git %s: %w (%v)", args[0], ErrNotRepo, err)
	}
	if msg == "" {
		msg = err.Error()
	}
	return "", &ExitError{Dir: dir, Args: strings.Join(args, " "), Msg: msg, Code: ee.ExitCode(),
		notRepo: strings.Contains(msg, "not a git repository")}
}

// Env returns environ without the scrubbed variables (and the
// GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n pairs GIT_CONFIG_COUNT names), with
// GIT_TERMINAL_PROMPT=0.
func Env(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(scrubbed, k) || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GIT_TERMINAL_PROMPT=0")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(strings.TrimPrefix(lines[len(lines)-1], "fatal: "))
}

// abs makes a path git printed relative to dir absolute and clean.
func abs(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// CommonDir returns the absolute git common directory of the clone that
// holds dir: the same for every worktree of the clone (".git" of the main
// checkout). It reads the repository's layout from the files (Discover),
// as `git rev-parse --git-common-dir` would answer, and asks git itself
// only when that layout is not the usual one.
func CommonDir(dir string) (string, error) {
	l, err := Discover(dir)
	if err == nil {
		return l.CommonDir, nil
	}
	if errors.Is(err, ErrNotRepo) {
		return "", err
	}
	out, err := run(dir, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", err
	}
	return abs(dir, out), nil
}

// Layout is where a worktree keeps its git data.
type Layout struct {
	Toplevel  string // the worktree's root: the directory holding .git
	GitDir    string // its git directory (.git, or .git/worktrees/<name> of a linked worktree)
	CommonDir string // the clone's common directory, shared by all its worktrees
	Linked    bool   // a linked worktree (`git worktree add`), not the main checkout
}

// errUnusual is returned by Discover for a layout it leaves to git.
var errUnusual = errors.New("unusual repository layout")

// Discover finds the worktree that holds dir by reading the files git
// reads: the nearest .git upwards, a directory (a main checkout) or a file
// "gitdir: <path>" (a linked worktree or a submodule), and that git
// directory's "commondir" file. It runs no git process: commands that run
// at every claim stay fast. A dir in no repository is ErrNotRepo.
func Discover(dir string) (Layout, error) {
	cur, err := filepath.Abs(dir)
	if err != nil {
		return Layout{}, err
	}
	for {
		dotgit := filepath.Join(cur, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return layoutOf(cur, dotgit, false)
		case err == nil && fi.Mode().IsRegular():
			gitdir, err := readGitFile(dotgit)
			if err != nil {
				return Layout{}, err
			}
			return layoutOf(cur, gitdir, true)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return Layout{}, fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		cur = parent
	}
}

// Limits of git's own files read here: a .git file, HEAD, a ref and
// commondir are a line; packed-refs grows with the number of refs.
const (
	smallLimit  = 64 << 10
	packedLimit = 256 << 20
)

// readGitFile reads a .git file: "gitdir: <path>", relative to its directory.
func readGitFile(path string) (string, error) {
	data, err := fsafe.ReadPath(path, smallLimit)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok || strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%s: %w", path, errUnusual)
	}
	return abs(filepath.Dir(path), strings.TrimSpace(p)), nil
}

// layoutOf completes a layout from the git directory: its "commondir"
// file, when there is one, names the common directory (relative to it).
func layoutOf(top, gitdir string, viaFile bool) (Layout, error) {
	if fi, err := os.Stat(filepath.Join(gitdir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return Layout{}, fmt.Errorf("%s: %w", gitdir, errUnusual)
	}
	l := Layout{Toplevel: top, GitDir: gitdir, CommonDir: gitdir}
	data, err := fsafe.ReadPath(filepath.Join(gitdir, "commondir"), smallLimit)
	switch {
	case err == nil:
		l.CommonDir = abs(gitdir, strings.TrimSpace(string(data)))
		l.Linked = true
	case !errors.Is(err, os.ErrNotExist):
		return Layout{}, err
	case viaFile:
		// A .git file without commondir: a submodule, whose git
		// directory is its common directory.
	}
	return l, nil
}

// Head returns the full commit id HEAD points to in the worktree at dir.
func Head(dir string) (string, error) {
	return Commit(dir, "HEAD")
}

// Commit resolves ref (a branch, a tag, an abbreviated id) to a full commit
// id in the repository at dir.
func Commit(dir, ref string) (string, error) {
	out, err := run(dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil && !errors.Is(err, ErrNotRepo) {
		return "", fmt.Errorf("%q is not a commit of the repository at %s", ref, dir)
	}
	return out, err
}

// Dirty returns the changed and untracked paths of the worktree at dir, as
// `git status --porcelain` lists them; none means clean.
func Dirty(dir string) ([]string, error) {
	out, err := run(dir, "status", "--porcelain")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// CommitsSince counts the commits reachable from HEAD of the worktree at
// dir and not from base.
func CommitsSince(dir, base string) (int, error) {
	out, err := run(dir, "rev-list", "--count", base+"..HEAD")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

// Add creates a worktree at path on a new branch started at base, from
// the repository at repoDir.
func Add(repoDir, path, branch, base string) error {
	_, err := run(repoDir, "worktree", "add", "-b", branch, path, base)
	return err
}

// Remove removes the worktree at path; force removes it with changes.
func Remove(repoDir, path string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := run(repoDir, append(args, path)...)
	return err
}

// BranchExists reports whether refs/heads/branch exists.
func BranchExists(repoDir, branch string) bool {
	_, err := run(repoDir, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// MainWorktree returns the root of the clone's main worktree (the first
// of `git worktree list`), wherever dir is.
func MainWorktree(dir string) (string, error) {
	out, err := run(dir, "worktree", "list", "--porcelain")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(out, "\n")
	p, ok := strings.CutPrefix(first, "worktree ")
	if !ok {
		return "", fmt.Errorf("git worktree list: unexpected output %q", first)
	}
	return filepath.Clean(p), nil
}

// HeadOf returns the commit HEAD points to in the worktree of layout l,
// reading the files git reads — HEAD, then the branch's loose ref or the
// clone's packed-refs — so that a claim runs no git process. Anything
// else (a reftable repository, a symbolic ref to another symbolic ref, a
// branch without a commit) is left to git: Head(l.Toplevel).
func HeadOf(l Layout) (string, error) {
	if sha, ok := headFromFiles(l); ok {
		return sha, nil
	}
	return Head(l.Toplevel)
}

// HeadFromFiles reads HEAD's commit from git's files alone (loose ref,
// packed-refs, detached HEAD); ok is false when only git can tell.
func HeadFromFiles(dir string) (sha string, ok bool) {
	l, err := Discover(dir)
	if err != nil {
		return "", false
	}
	return headFromFiles(l)
}

func headFromFiles(l Layout) (string, bool) {
	if l.GitDir == "" {
		return "", false
	}
	data, err := fsafe.ReadPath(filepath.Join(l.GitDir, "HEAD"), smallLimit)
	if err != nil {
		return "", false
	}
	head := strings.TrimSpace(string(data))
	ref, symbolic := strings.CutPrefix(head, "ref: ")
	if !symbolic {
		return head, isSHA(head)
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(l.CommonDir, "reftable")); err == nil {
		return "", false
	}
	if data, err := fsafe.ReadPath(filepath.Join(l.CommonDir, filepath.FromSlash(ref)), smallLimit); err == nil {
		sha := strings.TrimSpace(string(data))
		return sha, isSHA(sha)
	}
	packed, err := fsafe.ReadPath(filepath.Join(l.CommonDir, "packed-refs"), packedLimit)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if sha, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref {
			return sha, isSHA(sha)
		}
	}
	return "", false
}

// isSHA reports a full commit id: 40 (SHA-1) or 64 (SHA-256) lower-case
// hex digits.
func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

// ChangedFiles lists the paths that differ between commits base and
// commit in the repository at dir, each as "path (added)", "(modified)",
// "(deleted)" or with git's status letter: `git diff --name-status
// --no-renames base commit`.
func ChangedFiles(dir, base, commit string) ([]string, error) {
	out, err := run(dir, "diff", "--name-status", "--no-renames", "--end-of-options", base, commit, "--")
	if err != nil || out == "" {
		return nil, err
	}
	words := map[string]string{"A": "added", "M": "modified", "D": "deleted", "T": "type changed"}
	var files []string
	for _, line := range strings.Split(out, "\n") {
		st, path, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		w := words[st]
		if w == "" {
			w = st
		}
		files = append(files, path+" ("+w+")")
	}
	return files, nil
}
