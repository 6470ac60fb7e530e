// Command demo plays a whole taskie plan through the real Stop hook with a
// simulated agent and a simulated reviewer, so a newcomer sees the review
// loop work in seconds. `make demo` builds what it needs and runs it;
// `make demo KEEP=1` keeps the sample project to look at afterwards.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/taskie-dev/taskie/internal/agentsim"
)

// Verdicts the simulated reviewer gives, in order: plan review PASS,PASS;
// tasks review FAIL,PASS,PASS; task 1 FAIL,PASS,PASS; task 2 PASS,PASS;
// all-code review PASS,PASS.
const script = "PASS\nPASS\nFAIL\nPASS\nPASS\nFAIL\nPASS\nPASS\nPASS\nPASS\nPASS\nPASS\n"

func main() {
	taskie := flag.String("taskie", "bin/taskie", "taskie binary")
	reviewer := flag.String("reviewer", "bin/fakereviewer", "fake reviewer binary (stands in for claude)")
	keep := flag.Bool("keep", false, "keep the sample project and say how to look at it")
	flag.Parse()
	if _, err := run(os.Stdout, *taskie, *reviewer, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run plays the demo, printing to w, and returns the sample project's
// directory (removed unless keep).
func run(w io.Writer, taskie, reviewer string, keep bool) (dir string, err error) {
	sb, err := agentsim.NewSandbox(taskie, reviewer, script)
	if err != nil {
		return "", err
	}
	dir = sb.Dir
	defer func() {
		if keep {
			fmt.Fprintf(w, "\nkept the sample project: %s\nlook at it with:\n  cd %s && %s status\n  %s history    # every event: reviews, verdicts, phases\n  %s log        # the progress log\n",
				dir, dir, taskieCmd(sb.Taskie), taskieCmd(sb.Taskie), taskieCmd(sb.Taskie))
			return
		}
		sb.Remove()
		fmt.Fprintf(w, "\nremoved the sample project (make demo KEEP=1 keeps it to look at)\n")
	}()
	a := sb.Agent("demo-session", "demo", w)
	fmt.Fprintln(w, "demo: a simulated agent plays plan \"demo\" through taskie's real Stop hook; a fake reviewer stands in for claude")
	fmt.Fprintln(w, agentsim.Legend)
	fmt.Fprintf(w, "sample project: %s\n\n", dir)
	fmt.Fprintln(w, "user: /taskie:new-plan demo")
	if _, err := a.Run("plan", "new", "demo", "--auto"); err != nil {
		return dir, err
	}
	if err := os.WriteFile(sb.PlanFile("demo", "plan.md"), []byte("# Plan: demo\n\nBuild the demo in two steps.\n"), 0o644); err != nil {
		return dir, err
	}
	fmt.Fprintln(w, "agent: wrote plan.md and stops")
	if err := a.Play(60); err != nil {
		return dir, err
	}
	out, err := a.Run("status", "--plan", "demo")
	fmt.Fprintf(w, "\n$ taskie status\n%s", out)
	return dir, err
}

// taskieCmd is how the user runs taskie from the kept project: `taskie`
// when it is on PATH, else the binary the demo used.
func taskieCmd(bin string) string {
	if _, err := exec.LookPath("taskie"); err == nil {
		return "taskie"
	}
	return bin
}
