// Command demo plays a whole taskie plan through the real Stop hook with a
// simulated agent and a simulated reviewer, so a newcomer sees the review
// loop work in seconds. `make demo` builds what it needs and runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/taskie-dev/taskie/internal/agentsim"
)

// Verdicts the simulated reviewer gives, in order: plan review PASS,PASS;
// tasks review FAIL,PASS,PASS; task 1 FAIL,PASS,PASS; task 2 PASS,PASS;
// all-code review PASS,PASS.
const script = "PASS\nPASS\nFAIL\nPASS\nPASS\nFAIL\nPASS\nPASS\nPASS\nPASS\nPASS\nPASS\n"

func main() {
	taskie := flag.String("taskie", "bin/taskie", "taskie binary")
	reviewer := flag.String("reviewer", "bin/fakereviewer", "fake reviewer binary (stands in for claude)")
	keep := flag.Bool("keep", false, "keep the demo project directory")
	flag.Parse()
	if err := run(*taskie, *reviewer, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(taskie, reviewer string, keep bool) error {
	sb, err := agentsim.NewSandbox(taskie, reviewer, script)
	if err != nil {
		return err
	}
	if !keep {
		defer sb.Remove()
	}
	a := sb.Agent("demo-session", "demo", os.Stdout)
	fmt.Printf("demo project: %s\n\n", sb.Dir)
	if _, err := a.Run("plan", "new", "demo", "--auto"); err != nil {
		return err
	}
	if err := os.WriteFile(sb.PlanFile("demo", "plan.md"), []byte("# Plan: demo\n\nBuild the demo in two steps.\n"), 0o644); err != nil {
		return err
	}
	fmt.Println("agent: wrote plan.md")
	if err := a.Play(60); err != nil {
		return err
	}
	out, err := a.Run("status", "--plan", "demo")
	fmt.Printf("\n$ taskie status\n%s", out)
	return err
}
