package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// waitDelay bounds how long Wait waits for pipes after the kill, in case
// something outside the process group still holds them.
const waitDelay = 3 * time.Second

// invocation is one reviewer process to run.
type invocation struct {
	name   string              // adapter name, for messages
	hint   string              // what to do when the executable is missing
	argv   []string            // full argv
	stdin  string              // the prompt
	dir    string              // working directory
	hold   *os.File            // the review lock to hand to the reviewer, or nil
	lease  func(Lease)         // told the reviewer's lease once it runs, or nil
	reason func(output) string // the reviewer's own reason for a failure; nil = lastReason
}

// output is what a finished reviewer process left behind.
type output struct {
	stdout  []byte
	stderr  []byte
	raw     []byte // stdout and stderr interleaved, for the log
	elapsed time.Duration
}

// run starts the reviewer in its own process group with a clean
// environment and the prompt on stdin, and kills the group on timeout.
func run(ctx context.Context, inv invocation, timeout time.Duration) (output, error) {
	path, err := exec.LookPath(inv.argv[0])
	if err != nil {
		return output{}, failf(FailNotFound, nil, "%s reviewer: %q not found: %s", inv.name, inv.argv[0], inv.hint)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, path, inv.argv[1:]...)
	cmd.Dir = inv.dir
	cmd.Env = reviewerEnv(os.Environ())
	cmd.Stdin = strings.NewReader(inv.stdin)
	var stdout, stderr bytes.Buffer
	raw := &lockedBuffer{}
	cmd.Stdout = tee{&stdout, raw}
	cmd.Stderr = tee{&stderr, raw}
	setProcessGroup(cmd)
	cmd.WaitDelay = waitDelay

	start := time.Now()
	err = runProcess(cmd, inv.hold, func(pid int) {
		if inv.lease != nil {
			inv.lease(newLease(pid, start, timeout))
		}
	})
	out := output{stdout: stdout.Bytes(), stderr: stderr.Bytes(), raw: raw.Bytes(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		return out, failf(FailTimeout, out.raw, "%s reviewer: stopped after %s (%v); its process group was killed",
			inv.name, out.elapsed.Round(time.Millisecond), context.Cause(ctx))
	}
	return out, exitFailure(inv, err, out)
}

// exitFailure turns a Run error into a Failure, or nil. The message's first
// line carries the reviewer's own reason (docs/hook.md); the lines after it
// give more of the output's tail when there is more.
func exitFailure(inv invocation, err error, out output) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		why := inv.reasonOf(out)
		msg := fmt.Sprintf("%s reviewer: exited with code %d: %s", inv.name, ee.ExitCode(), why)
		if tail := tailOf(out); tail != "" && tail != why {
			msg += "\n" + tail
		}
		return failf(FailExit, out.raw, "%s", msg)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The reviewer exited 0 but a leftover child held its output open.
		return nil
	}
	return failf(FailExit, out.raw, "%s reviewer: %v", inv.name, err)
}

// reasonOf returns the one line that best says why the reviewer failed.
func (inv invocation) reasonOf(out output) string {
	if inv.reason != nil {
		if why := inv.reason(out); why != "" {
			return why
		}
	}
	return lastReason(out)
}

// lastReason is the last non-empty line of stderr, else of stdout: a CLI
// prints its fatal error last. "(no output)" only when there is none.
func lastReason(out output) string {
	if l := lastLine(out.stderr); l != "" {
		return l
	}
	if l := lastLine(out.stdout); l != "" {
		return l
	}
	return "(no output)"
}

// tailOf is up to 10 trailing lines of stderr, else of stdout.
func tailOf(out output) string {
	if tail := lastLines(out.stderr, 10); tail != "" {
		return tail
	}
	return lastLines(out.stdout, 10)
}

// reviewerEnv drops the variables that make a nested claude refuse to start
// or re-enter taskie's hook, and marks the child as the nested reviewer.
func reviewerEnv(parent []string) []string {
	env := make([]string, 0, len(parent)+1)
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "TASKIE_HOOK_SKIP":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TASKIE_HOOK_SKIP=1")
}

// lastLines returns up to n trailing lines of b, blank lines at either end
// dropped; "" when b is blank.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// lastLine returns the last non-blank line of b, trimmed; "" when b is
// blank.
func lastLine(b []byte) string {
	return lastLineWhere(b, func(string) bool { return true })
}

// lastLineWhere returns the last non-blank line of b for which ok is true,
// trimmed; "" when there is none.
func lastLineWhere(b []byte, ok func(string) bool) string {
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && ok(l) {
			return l
		}
	}
	return ""
}

// finish makes sure the review ends up on disk: taskie writes the review
// text itself when the reviewer wrote no file or a blank one, and never
// touches a file with content. A review that is blank both in the file and
// in the text is a failure.
func finish(req Request, res Result) (Result, error) {
	noText := strings.TrimSpace(res.Text) == ""
	blank, err := blankFile(req.Root, req.ReviewFile)
	switch {
	case errors.Is(err, fs.ErrNotExist) && noText:
		return res, failf(FailNoReview, res.Raw, "%s: the reviewer returned an empty review: it wrote no review file and returned no review text", req.ReviewFile)
	case errors.Is(err, fs.ErrNotExist):
		return writeReview(req, res, writeNew)
	case err != nil:
		return res, failf(FailNoReview, res.Raw, "%s: %v", req.ReviewFile, err)
	case !blank:
		return res, nil
	case noText:
		return res, failf(FailEmpty, res.Raw, "%s: the reviewer returned an empty review: the review file is blank and there is no review text", req.ReviewFile)
	}
	return writeReview(req, res, replaceBlank)
}

// writeReview writes res.Text to the review file with write.
func writeReview(req Request, res Result, write func(dir, path, text string) (bool, error)) (Result, error) {
	wrote, err := write(req.Root, req.ReviewFile, res.Text)
	if err != nil {
		return res, failf(FailNoReview, res.Raw, "%s: cannot write the review: %v", req.ReviewFile, err)
	}
	if !wrote {
		// The file appeared meanwhile: judge it like one the reviewer wrote.
		return finish(req, res)
	}
	res.WroteFile = true
	return res, nil
}

// reviewRoot opens the project root and names the review file inside it:
// the file is a repository path, so it goes through the safe file layer.
func reviewRoot(dir, path string) (*fsafe.Root, string, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, "", fmt.Errorf("%s: not inside the project %s", path, dir)
	}
	root, err := fsafe.Open(dir)
	if err != nil {
		return nil, "", err
	}
	return root, filepath.ToSlash(rel), nil
}

// blankFile reports whether the review file at path is empty or holds only
// white space. Only a regular file is read (a FIFO would block); anything
// else at path counts as not blank, as it did before blank files were
// checked.
func blankFile(dir, path string) (bool, error) {
	root, rel, err := reviewRoot(dir, path)
	if err != nil {
		return false, err
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	if err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	if fi.Size() == 0 {
		return true, nil
	}
	b, err := root.ReadFile(rel)
	if err != nil {
		return false, err
	}
	return len(bytes.TrimSpace(b)) == 0, nil
}

// writeNew creates path exclusively; wrote is false when the file appeared
// meanwhile (review files are never overwritten).
func writeNew(dir, path, text string) (wrote bool, err error) {
	root, rel, err := reviewRoot(dir, path)
	if err != nil {
		return false, err
	}
	defer root.Close()
	f, err := root.CreateExclusive(rel, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := writeSynced(f, text); err != nil {
		// No half-written review file: a later run must be able to retry.
		_ = root.Remove(rel)
		return false, err
	}
	return true, nil
}

// replaceBlank replaces the blank file at path with text, atomically. A
// blank file holds no review, so replacing it overwrites nothing.
func replaceBlank(dir, path, text string) (wrote bool, err error) {
	root, rel, err := reviewRoot(dir, path)
	if err != nil {
		return false, err
	}
	defer root.Close()
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if err := root.WriteFile(rel, []byte(text), true); err != nil {
		return false, err
	}
	return true, nil
}

// writeSynced writes text, ending in a newline, to f, syncs and closes it.
func writeSynced(f *os.File, text string) error {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err := f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockedBuffer collects stdout and stderr, which exec copies from two
// goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// tee keeps one stream on its own and in the interleaved log.
type tee struct {
	own *bytes.Buffer
	all *lockedBuffer
}

func (t tee) Write(p []byte) (int, error) {
	t.own.Write(p)
	return t.all.Write(p)
}

// withRaw makes a parse failure carry the full output, not just stdout.
func withRaw(err error, raw []byte) error {
	var f *Failure
	if errors.As(err, &f) {
		f.Raw = raw
		return f
	}
	return failf(FailOutput, raw, "%v", err)
}
