package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/hook"
)

func newHookCmd(s *Streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "hook",
		Short: "Agent hooks (called by Claude Code or Codex, JSON on stdin)",
		Args:  cobra.ArbitraryArgs,
		// An unknown hook must not print help on stdout or block: warn, allow.
		RunE: func(c *cobra.Command, args []string) error {
			fmt.Fprintf(s.Err, "taskie: warning: unknown command %q for \"taskie hook\" (hook allowed); hooks: stop, session-start, subagent-stop\n", strings.Join(args, " "))
			return nil
		},
	}
	c.AddCommand(newHookStopCmd(s),
		newHookSimpleCmd(s, "session-start", "SessionStart hook: inject where the plan stands (under 2 KB)", hook.SessionStart),
		newHookSimpleCmd(s, "subagent-stop", "SubagentStop hook: block, once, a subagent that holds a claim and stops without a new commit", hook.SubagentStop))
	return c
}

func newHookSimpleCmd(s *Streams, name, short string, run func(hook.Env) int) *cobra.Command {
	return &cobra.Command{
		Use:   name,
		Short: short,
		Args:  exactArgs(0, "no arguments (input comes on stdin)"),
		RunE: func(*cobra.Command, []string) error {
			return exitCode(run(hookEnv(s, "")))
		},
	}
}

func hookEnv(s *Streams, format string) hook.Env {
	return hook.Env{Stdin: s.In, Stdout: s.Out, Stderr: s.Err, Getenv: os.Getenv, Now: time.Now,
		Format: format, InputDeadline: hook.DefaultInputDeadline}
}

func newHookStopCmd(s *Streams) *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "stop",
		Short: "Stop hook: validate the plan and run the review that is due",
		Long: `The Stop hook. Reads the agent's hook JSON on stdin, validates the plan, and
runs the independent review that is due. Allow: exit 0 with nothing or one
{"systemMessage": …} object on stdout. Block: exit 2 with the reason on
stderr, or with --format json {"decision":"block","reason":…} and exit 0.
Any internal error allows the stop.`,
		Args: exactArgs(0, "no arguments (input comes on stdin)"),
		RunE: func(*cobra.Command, []string) error {
			if format != "" && format != hook.FormatJSON && format != hook.FormatExit2 {
				fmt.Fprintf(s.Err, "taskie: warning: unknown --format %q, using the configured output format (exit2 or json)\n", format)
				format = ""
			}
			return exitCode(hook.Stop(hookEnv(s, format)))
		},
	}
	c.Flags().StringVar(&format, "format", "", "block output: exit2 (default) or json")
	return c
}

// exitCode ends a command with a code and nothing printed.
func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: errSilent}
}

// HookStop is `taskie hook stop` without building the command tree: it runs
// at every agent stop, so cmd/taskie calls it directly.
func HookStop() int {
	return hook.Stop(hookEnv(&Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, ""))
}
