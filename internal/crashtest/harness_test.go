package crashtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	planID = "p"
	// cmdTimeout bounds a command that is not killed on purpose.
	cmdTimeout = 30 * time.Second
)

// harness runs the taskie binary in isolated repositories.
type harness struct {
	t   *testing.T
	env []string
}

func newHarness(t *testing.T, home string) *harness {
	t.Helper()
	for _, d := range []string{home, filepath.Join(home, ".config"), filepath.Join(home, ".state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "XDG_CONFIG_HOME", k == "XDG_STATE_HOME",
			strings.HasPrefix(k, "TASKIE_"), strings.HasPrefix(k, "CLAUDE"), strings.HasPrefix(k, "CODEX_"):
			continue
		}
		env = append(env, kv)
	}
	// One fixed clock: the shadow run of a command runs later than the
	// killed one, and what it writes must not differ by the second it ran.
	env = append(env, "TASKIE_NOW=2026-03-04T05:06:07Z", "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"))
	return &harness{t: t, env: env}
}

// result is how one taskie process ended.
type result struct {
	code   int  // exit code, -1 when a signal ended it
	killed bool // ended by our SIGKILL
	dur    time.Duration
	stdout string
	stderr string
}

func (r result) String() string {
	if r.killed {
		return fmt.Sprintf("killed after %v", r.dur.Round(time.Microsecond))
	}
	return fmt.Sprintf("exit %d after %v: %s", r.code, r.dur.Round(time.Microsecond), strings.TrimSpace(r.stderr))
}

func (h *harness) command(dir string, args []string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	c := exec.Command(taskieBin, args...)
	c.Dir = dir
	c.Env = h.env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	return c, &out, &errb
}

// run runs taskie to completion (or cmdTimeout). Safe from any goroutine.
func (h *harness) run(dir string, args ...string) (result, error) {
	return h.runKilled(dir, cmdTimeout, args...)
}

// runKilled starts taskie and sends it SIGKILL after delay unless it has
// finished by then, then waits for it.
func (h *harness) runKilled(dir string, delay time.Duration, args ...string) (result, error) {
	c, out, errb := h.command(dir, args)
	start := time.Now()
	if err := c.Start(); err != nil {
		return result{}, err
	}
	done := make(chan struct{})
	go func() {
		_ = c.Wait()
		close(done)
	}()
	timer := time.NewTimer(delay)
	select {
	case <-done:
		timer.Stop()
	case <-timer.C:
		_ = c.Process.Signal(syscall.SIGKILL) // fails harmlessly when it just ended
		<-done
	}
	r := result{dur: time.Since(start), code: c.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.killed = true
	}
	if r.killed && delay == cmdTimeout {
		return r, fmt.Errorf("taskie %s timed out after %v", strings.Join(args, " "), cmdTimeout)
	}
	return r, nil
}

// must runs taskie to completion and fails the test unless it exits 0.
func (h *harness) must(dir string, args ...string) result {
	h.t.Helper()
	r, err := h.run(dir, args...)
	if err != nil {
		h.t.Fatal(err)
	}
	if r.code != 0 {
		h.t.Fatalf("taskie %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// Paths inside a repository.
func planDir(root string) string    { return filepath.Join(root, ".taskie", "plans", planID) }
func archiveDir(root string) string { return filepath.Join(root, ".taskie", "archive", planID) }

// snapshot is what the test reads of a repository's plan.
type snapshot struct {
	state, tasks []byte
	task         [4][]byte // task-1.md … task-3.md (index 0 unused); nil = absent
	archive      []byte    // .taskie/archive/p/task-1.md
	eventsSize   int64
	eventsTorn   bool     // events.jsonl does not end with a newline
	planTemps    []string // temp files (".*.tmp*") in the plan directory
	archiveTemps []string // temp files in .taskie/archive/p
}

func (h *harness) snap(root string) snapshot {
	h.t.Helper()
	pd := planDir(root)
	var s snapshot
	s.state = h.readOpt(filepath.Join(pd, "state.json"))
	s.tasks = h.readOpt(filepath.Join(pd, "tasks.md"))
	for k := 1; k <= 3; k++ {
		s.task[k] = h.readOpt(filepath.Join(pd, fmt.Sprintf("task-%d.md", k)))
	}
	s.archive = h.readOpt(filepath.Join(archiveDir(root), "task-1.md"))
	f, err := os.Open(filepath.Join(pd, "events.jsonl"))
	if err != nil {
		h.t.Fatalf("events.jsonl: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		h.t.Fatal(err)
	}
	s.eventsSize = fi.Size()
	if s.eventsSize > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, s.eventsSize-1); err != nil {
			h.t.Fatal(err)
		}
		s.eventsTorn = last[0] != '\n'
	}
	s.planTemps = temps(h.t, pd)
	s.archiveTemps = temps(h.t, archiveDir(root))
	return s
}

// readOpt reads a file; nil when it does not exist.
func (h *harness) readOpt(p string) []byte {
	h.t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		h.t.Fatalf("read %s: %v", p, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// temps lists the atomic-write temp files (".<base>.tmp<digits>") of dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp") {
			out = append(out, n)
		}
	}
	return out
}

// readFrom returns the bytes of a file from offset off.
func readFrom(p string, off int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// copyTree replaces dst with a copy of the directory src.
func copyTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
		return nil
	})
}

// sessionTS matches the timestamp of a progress entry heading, which two
// runs of the same note may write differently.
var sessionTS = regexp.MustCompile(`(?m)^(### Session \d+) — [^\r\n]*`)

// norm blanks the session timestamps of a task or archive file.
func norm(b []byte) []byte {
	if b == nil {
		return nil
	}
	return sessionTS.ReplaceAll(b, []byte("$1 — TS"))
}

// same compares two optional files: both absent, or both present and equal.
func same(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// sameNorm is same after norm.
func sameNorm(a, b []byte) bool { return same(norm(a), norm(b)) }

// sessionHeading matches "### Session N" (not the "### Sessions a–b
// archived" summary).
var sessionHeading = regexp.MustCompile(`(?m)^### Session (\d+)\b`)

// sessions counts the "### Session N" headings of a file by number.
func sessions(b []byte) map[int]int {
	out := map[int]int{}
	for _, m := range sessionHeading.FindAllSubmatch(b, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		out[n]++
	}
	return out
}

// duplicated returns the session numbers with more than one heading.
func duplicated(b []byte) []int {
	var out []int
	for n, c := range sessions(b) {
		if c > 1 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// overlap returns the session numbers present in both files.
func overlap(a, b []byte) []int {
	sb := sessions(b)
	var out []int
	for n := range sessions(a) {
		if sb[n] > 0 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// words make up the notes and the padding of task 1.
var words = strings.Fields(`store commit event replay rename fsync temp archive session lock plan
task review state log crash kill redo snapshot version hash table status progress journal atomic
write read load repair interrupted durable directory record entry summary heading`)

// text returns about size bytes of words in lines of at most 100 bytes.
func text(rng *rand.Rand, size int) string {
	var b strings.Builder
	line := 0
	for b.Len() < size {
		w := words[rng.IntN(len(words))]
		switch {
		case line > 0 && line+1+len(w) > 100:
			b.WriteByte('\n')
			line = 0
		case line > 0:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
