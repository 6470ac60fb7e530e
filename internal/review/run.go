package review

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// waitDelay bounds how long Wait waits for pipes after the kill, in case
// something outside the process group still holds them.
const waitDelay = 3 * time.Second

// invocation is one reviewer process to run.
type invocation struct {
	name  string   // adapter name, for messages
	hint  string   // what to do when the executable is missing
	argv  []string // full argv
	stdin string   // the prompt
	dir   string   // working directory
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
	err = cmd.Run()
	out := output{stdout: stdout.Bytes(), stderr: stderr.Bytes(), raw: raw.Bytes(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		return out, failf(FailTimeout, out.raw, "%s reviewer: stopped after %s (%v); its process group was killed",
			inv.name, out.elapsed.Round(time.Millisecond), context.Cause(ctx))
	}
	return out, exitFailure(inv.name, err, out)
}

// exitFailure turns a Run error into a Failure, or nil.
func exitFailure(name string, err error, out output) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		tail := lastLines(out.stderr, 10)
		if tail == "" {
			tail = lastLines(out.stdout, 10)
		}
		return failf(FailExit, out.raw, "%s reviewer: exited with code %d: %s", name, ee.ExitCode(), tail)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The reviewer exited 0 but a leftover child held its output open.
		return nil
	}
	return failf(FailExit, out.raw, "%s reviewer: %v", name, err)
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

// lastLines returns up to n trailing non-empty lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.TrimSpace(strings.Join(lines, "\n"))
	if s == "" {
		return "(no output)"
	}
	return s
}

// finish makes sure the review ends up on disk: taskie writes the review
// text itself when the reviewer did not, and never touches an existing file.
func finish(req Request, res Result) (Result, error) {
	if _, err := os.Lstat(req.ReviewFile); err == nil {
		return res, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return res, failf(FailNoReview, res.Raw, "%s: %v", req.ReviewFile, err)
	}
	if strings.TrimSpace(res.Text) == "" {
		return res, failf(FailNoReview, res.Raw, "%s: the reviewer wrote no review file and returned no review text", req.ReviewFile)
	}
	wrote, err := writeNew(req.ReviewFile, res.Text)
	if err != nil {
		return res, failf(FailNoReview, res.Raw, "%s: cannot write the review: %v", req.ReviewFile, err)
	}
	res.WroteFile = wrote
	return res, nil
}

// writeNew creates path exclusively; wrote is false when the file appeared
// meanwhile (review files are never overwritten).
func writeNew(path, text string) (wrote bool, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// No half-written review file: a later run must be able to retry.
		os.Remove(path)
		return false, err
	}
	return true, nil
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
