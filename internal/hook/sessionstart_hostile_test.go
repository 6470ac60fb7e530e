package hook

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// secret is what a file outside the repository holds; no byte of it may
// reach the agent's context.
const secret = "SECRET-CREDENTIAL-7f3a"

// childEnv makes the test binary run one SessionStart (see
// TestSessionStartChild) in the repository it names.
const childEnv = "TASKIE_TEST_SESSIONSTART_ROOT"

// A repository is someone else's content: whatever it commits as a task
// file (the current task's or a dependency's), SessionStart exits 0 at once,
// in bounded memory, and puts nothing from outside the repository into the
// agent's context.
func TestSessionStartHostileTaskFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("FIFOs and /dev/zero are Unix")
	}
	kinds := map[string]func(t *testing.T, file, outside string){
		"link to /dev/zero": func(t *testing.T, file, _ string) {
			rel, err := filepath.Rel(filepath.Dir(file), "/dev/zero")
			if err != nil {
				t.Fatal(err)
			}
			mustLink(t, rel, file)
		},
		"absolute link to /dev/zero": func(t *testing.T, file, _ string) { mustLink(t, "/dev/zero", file) },
		"FIFO": func(t *testing.T, file, _ string) {
			if err := syscall.Mkfifo(file, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"link out of the repository": func(t *testing.T, file, outside string) {
			rel, err := filepath.Rel(filepath.Dir(file), outside)
			if err != nil {
				t.Fatal(err)
			}
			mustLink(t, rel, file)
		},
		"over the task file limit": func(t *testing.T, file, _ string) {
			big := bytes.Repeat([]byte("- [ ] criterion\n"), 5<<20/16)
			if err := os.WriteFile(file, big, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, whose := range []string{"current task", "dependency"} {
		for kind, plant := range kinds {
			t.Run(whose+"/"+kind, func(t *testing.T) {
				base := t.TempDir()
				root := filepath.Join(base, "repo")
				outside := filepath.Join(base, "outside", "credentials")
				writeFiles(t, base, map[string]string{
					"outside/credentials": "# Task 1: " + secret + "\n\n" + secret + "\n\n## Acceptance Criteria\n\n- [ ] " + secret +
						"\n\n## Chain Output\n\n### Summary\n" + secret + "\n",
				})
				current := "1"
				if whose == "dependency" {
					current = "2"
				}
				writeFiles(t, root, map[string]string{
					".taskie/plans/p/plan.md":  "# Plan\n",
					".taskie/plans/p/tasks.md": "| Id | Task Summary | Status | Depends On |\n|---|---|---|---|\n| 1 | One | done | |\n| 2 | Two | in-progress | 1 |\n",
					".taskie/plans/p/state.json": `{"phase":"continue-task","next_phase":null,"current_task":"` + current +
						`","phase_iteration":0}`,
				})
				plant(t, filepath.Join(root, ".taskie/plans/p/task-1.md"), outside)

				out, errOut, code, elapsed, rss := runSessionStart(t, root)
				if code != 0 {
					t.Errorf("exit %d, want 0; stderr:\n%s", code, errOut)
				}
				if elapsed > time.Second {
					t.Errorf("SessionStart took %v, want < 1s", elapsed)
				}
				if rss > 100<<20 {
					t.Errorf("max RSS %d MB, want < 100 MB", rss>>20)
				}
				if strings.Contains(out, "SECRET") || strings.Contains(errOut, "SECRET") {
					t.Errorf("the outside file reached the output:\n%s\n%s", out, errOut)
				}
				if !strings.Contains(out, "task-1.md was not read") {
					t.Errorf("the context does not say task-1.md was not read:\n%s", out)
				}
			})
		}
	}
}

// runSessionStart runs SessionStart in a child process on root and returns
// its stdout, stderr, exit code, its own time for the hook and its peak
// memory.
func runSessionStart(t *testing.T, root string) (stdout, stderr string, code int, elapsed time.Duration, maxRSS int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSessionStartChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+root, "TASKIE_HOOK_SKIP=", "CLAUDE_ENV_FILE=")
	cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"SessionStart"}`, root))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("SessionStart still running after %v", time.Since(start))
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
		if runtime.GOOS == "darwin" {
			maxRSS = int64(ru.Maxrss)
		}
	}
	stdout, stderr = out.String(), errb.String()
	if i := strings.LastIndex(stderr, "elapsed "); i >= 0 {
		elapsed, _ = time.ParseDuration(strings.TrimSpace(stderr[i+len("elapsed "):]))
		stderr = stderr[:i]
	} else {
		elapsed = time.Since(start)
	}
	return stdout, stderr, code, elapsed, maxRSS
}

// TestSessionStartChild is the child of runSessionStart: one SessionStart,
// its exit code as the process's. A watchdog ends it past 200 MB of heap,
// so that an unbounded read fails the test instead of the machine.
func TestSessionStartChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestSessionStartHostileTaskFiles")
	}
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > 200<<20 {
				fmt.Fprintf(os.Stderr, "heap over 200 MB\n")
				os.Exit(3)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	code := SessionStart(Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, InputDeadline: time.Second})
	fmt.Fprintf(os.Stderr, "elapsed %s\n", time.Since(start))
	os.Exit(code)
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
