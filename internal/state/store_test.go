package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// workerEnv switches the test binary into a worker process for
// TestConcurrentUpdatesAcrossProcesses: it names the plan directory.
const workerEnv = "TASKIE_STATE_TEST_WORKER_DIR"

const (
	workers          = 20
	updatesPerWorker = 50
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(workerEnv); dir != "" {
		// The test is about lost updates, not waiting: 20 processes queue
		// on one lock, and on a loaded machine (the race detector, the
		// rest of make test) the last can wait longer than a command would.
		LockTimeout = 2 * time.Minute
		if err := incrementCounter(dir, updatesPerWorker); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// update is the read-modify-write every state-changing command does: Load
// under the plan lock, change, Save.
func update(dir string, fn func(*State) error) error {
	return WithLock(dir, func() error {
		s, err := Load(dir)
		if err != nil {
			return err
		}
		if err := fn(s); err != nil {
			return err
		}
		return Save(dir, s)
	})
}

// incrementCounter adds 1 to the unknown field "counter" n times, one
// locked read-modify-write each.
func incrementCounter(dir string, n int) error {
	for range n {
		err := update(dir, func(s *State) error {
			c := 0
			if raw, ok := s.Extra["counter"]; ok {
				if err := json.Unmarshal(raw, &c); err != nil {
					return err
				}
			}
			s.Extra["counter"] = json.RawMessage(strconv.Itoa(c + 1))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

const richState = `{
  "max_reviews": 5,
  "current_task": "3",
  "phase": "post-code-review",
  "phase_iteration": 2,
  "next_phase": "code-review",
  "review_model": "sonnet",
  "consecutive_clean": 1,
  "tdd": true,
  "enabled": true,
  "session_id": "sess-9",
  "counter": 0,
  "nested": {"keep": [1, "two", {"three": null}]}
}
`

func writeState(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(Path(dir), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentUpdatesAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	writeState(t, dir, richState)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, workers)
	outs := make([]*bytes.Buffer, workers)
	for i := range cmds {
		c := exec.Command(exe, "-test.run=^$")
		c.Env = append(os.Environ(), workerEnv+"="+dir)
		outs[i] = new(bytes.Buffer)
		c.Stdout, c.Stderr = outs[i], outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("worker %d: %v\n%s", i, err, outs[i])
		}
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := string(got.Extra["counter"]); c != strconv.Itoa(workers*updatesPerWorker) {
		t.Errorf("counter = %s after %d×%d increments: updates were lost", c, workers, updatesPerWorker)
	}
	want, _ := Decode("", []byte(richState))
	want.Extra["counter"] = json.RawMessage(strconv.Itoa(workers * updatesPerWorker))
	want.Extra["nested"] = json.RawMessage(`{"keep":[1,"two",{"three":null}]}`)
	if diff := cmp.Diff(want, got, emptyEq); diff != "" {
		t.Errorf("other fields changed (-want +got):\n%s", diff)
	}
	assertOnly(t, dir, FileName, LockName)
}

// assertOnly fails unless dir holds exactly the named entries (no temp files).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("directory entries (-want +got):\n%s", diff)
	}
}

func TestLoadMalformedLeavesFileUntouched(t *testing.T) {
	dir := t.TempDir()
	content := "{\n  \"phase\": \"next-task\",\n}\n"
	writeState(t, dir, content)
	err := update(dir, func(s *State) error { t.Error("fn ran on a malformed state"); return nil })
	var se *SyntaxError
	if !errors.As(err, &se) || se.Path != Path(dir) || se.Line != 3 {
		t.Fatalf("Load = %v, want a *SyntaxError on line 3 of %s", err, Path(dir))
	}
	if data, _ := os.ReadFile(Path(dir)); string(data) != content {
		t.Errorf("state.json changed:\n%s", data)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load of an empty dir = %v, want ErrNotFound", err)
	}
	if want := Path(dir) + ": no state.json"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	writeState(t, dir, `{"phase": "complete", "tdd": "yes"}`)
	_, err = Load(dir)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != Path(dir) || fe.Field != "tdd" {
		t.Errorf("Load = %v, want a *FieldError for tdd in %s", err, Path(dir))
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, _ := Decode("", []byte(richState))
	if err := Save(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got, emptyEq, cmp.Transformer("compact", compactRaw)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(Path(dir))
	if !bytes.Equal(data, s.Encode()) {
		t.Errorf("file is not Encode's output:\n%s", data)
	}
	assertOnly(t, dir, FileName)
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for i, content := range []string{"first\n", "second, longer\n", ""} {
		if err := WriteFileAtomic(p, []byte(content)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		data, err := os.ReadFile(p)
		if err != nil || string(data) != content {
			t.Errorf("write %d: read %q, %v; want %q", i, data, err, content)
		}
		assertOnly(t, dir, "f.json")
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
		}
	}
}

func TestWriteFileAtomicFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory: the rename fails.
	target := filepath.Join(dir, "state.json")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(target, []byte("{}")); err == nil {
		t.Fatal("WriteFileAtomic onto a directory succeeded")
	}
	assertOnly(t, dir, "state.json")

	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
		t.Error("WriteFileAtomic into a missing directory succeeded")
	}
}

// A reader never sees a partial file while writers replace it.
func TestReadersSeeWholeFiles(t *testing.T) {
	dir := t.TempDir()
	small, _ := Decode("", []byte(`{"phase":"new-plan"}`))
	big, _ := Decode("", []byte(richState))
	big.Extra["pad"] = json.RawMessage(strconv.Quote(string(bytes.Repeat([]byte("x"), 64<<10))))
	if err := Save(dir, small); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			s := small
			if i%2 == 0 {
				s = big
			}
			if err := WithLock(dir, func() error { return Save(dir, s) }); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		if _, err := Load(dir); err != nil {
			t.Fatalf("reader saw a broken state.json: %v", err)
		}
	}
}
