package agentsim

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var taskieBin, reviewerBin string

// inputs are the source and embedded files of the binaries TestMain builds.
var (
	inputs     []string
	inputsOnce sync.Once
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentsim-test-*")
	if err != nil {
		panic(err)
	}
	taskieBin, reviewerBin = filepath.Join(dir, "taskie"), filepath.Join(dir, "fakereviewer")
	for out, pkg := range map[string]string{taskieBin: "../../cmd/taskie", reviewerBin: "../testtools/fakereviewer"} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			panic(string(b))
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-f", `{{$d := .Dir}}{{if not .Standard}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}`, "../../cmd/taskie", "../testtools/fakereviewer").Output()
	if err != nil {
		panic(err)
	}
	inputs = strings.Fields(string(out))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// trackInputs opens every file the binaries are built from, so that go
// test's cache, which sees only what the test process opens, reruns these
// tests when the hook or any command changes instead of answering "(cached)".
func trackInputs(t *testing.T) {
	inputsOnce.Do(func() {
		for _, name := range inputs {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	})
}

func sandbox(t *testing.T, verdicts string, config string) (*Sandbox, *Agent) {
	t.Helper()
	trackInputs(t)
	sb, err := NewSandbox(taskieBin, reviewerBin, verdicts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Remove)
	a := sb.Agent("session-1", "p", nil)
	if _, err := a.Run("plan", "new", "p", "--auto"); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(sb.Dir, ".taskie", "config.json"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sb, a
}

// models returns the model of every reviewer run, in order.
func models(t *testing.T, sb *Sandbox) []string {
	f, err := os.Open(sb.ReviewLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct{ Model string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.Model)
	}
	return out
}

func decisions(stops []Stop) string {
	var b strings.Builder
	for _, s := range stops {
		switch {
		case s.Block:
			b.WriteString("B")
		default:
			b.WriteString("A")
		}
	}
	return b.String()
}

// TestWholePlan plays a plan from plan review to complete: plan PASS,PASS;
// tasks FAIL,PASS,PASS; task 1 FAIL,PASS,PASS; task 2 PASS,PASS; the last
// task opens a fresh all-code-review cycle, PASS,PASS, and the plan completes.
func TestWholePlan(t *testing.T) {
	sb, a := sandbox(t, "PASS\nPASS\nFAIL\nPASS\nPASS\nFAIL\nPASS\nPASS\nPASS\nPASS\nPASS\nPASS\n", "")
	if err := a.Play(40); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("BABBABBABABA", decisions(a.Stops)); diff != "" {
		t.Errorf("block/allow sequence (-want +got):\n%s", diff)
	}
	want := []string{"opus", "sonnet", "opus", "sonnet", "opus", "opus", "sonnet", "opus", "opus", "sonnet", "opus", "sonnet"}
	if diff := cmp.Diff(want, models(t, sb)); diff != "" {
		t.Errorf("reviewer models (-want +got):\n%s", diff)
	}
	st, err := a.State()
	if err != nil {
		t.Fatal(err)
	}
	if st["phase"] != "complete" || st["next_phase"] != nil {
		t.Errorf("final state: phase %v next %v, want complete/null", st["phase"], st["next_phase"])
	}
	for _, f := range []string{"plan-review-2.md", "tasks-review-3.md", "task-1-review-3.md", "task-2-review-2.md", "all-code-review-2.md", "all-code-post-review-1.md"} {
		if _, err := os.Stat(sb.PlanFile("p", f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	tasks, _ := os.ReadFile(sb.PlanFile("p", "tasks.md"))
	if strings.Count(string(tasks), "| done |") != len(DemoTasks) {
		t.Errorf("tasks.md should mark every task done:\n%s", tasks)
	}
	if out, err := a.Run("validate"); err != nil {
		t.Errorf("finished plan does not validate: %v\n%s", err, out)
	}
}

// TestAutopilot runs a whole plan in one turn: with autopilot every advance
// blocks with "run taskie continue", so the agent never waits for a user.
func TestAutopilot(t *testing.T) {
	_, a := sandbox(t, "PASS\n", `{"autopilot": true}`)
	if err := a.Play(30); err != nil {
		t.Fatal(err)
	}
	n := len(a.Stops)
	for i, s := range a.Stops[:n-1] {
		if !s.Block {
			t.Errorf("stop %d allowed before the plan was complete: %q", i+1, s.Message)
		}
	}
	if adv := a.Stops[n-2]; !strings.Contains(adv.Reason, "all-code-review passed") {
		t.Errorf("stop %d = %+v, want the all-code-review advance", n-1, adv)
	}
	if last := a.Stops[n-1]; last.Block || last.Message != "" {
		t.Errorf("stop after completion = %+v, want a silent allow", last)
	}
}

// TestBlockCap: a chain of blocks is cut at block_cap even when reviews keep failing.
func TestBlockCap(t *testing.T) {
	_, a := sandbox(t, "FAIL\n", `{"block_cap": 3}`)
	if err := os.WriteFile(filepath.Join(a.Dir, ".taskie/plans/p/plan.md"), []byte("# Plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := a.Play(10)
	if err == nil {
		t.Fatal("plan cannot complete with FAIL reviews")
	}
	if diff := cmp.Diff("BBBA", decisions(a.Stops[:4])); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(a.Stops[3].Message, "3 blocks in a row in this session (cap 3)") {
		t.Errorf("cap message = %q", a.Stops[3].Message)
	}
}
