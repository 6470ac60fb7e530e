package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/hook"
	"github.com/taskie-dev/taskie/internal/store"
)

// hookOpts are the options of `taskie hook` given a hook it does not know.
type hookOpts struct {
	s    *Streams
	hook []string
}

func newHookCmd(s *Streams) *cobra.Command { return newHookCmdWith(s, runHook) }

func newHookCmdWith(s *Streams, run func(*hookOpts) error) *cobra.Command {
	o := &hookOpts{s: s}
	c := &cobra.Command{
		Use:   "hook",
		Short: "Agent hooks (called by Claude Code or Codex, JSON on stdin)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			o.hook = args
			return run(o)
		},
	}
	c.AddCommand(newHookStopCmd(s),
		newHookEventCmd(s, "session-start", "SessionStart hook: inject where the plan stands (under 2 KB)", hook.SessionStart),
		newHookEventCmd(s, "subagent-stop", "SubagentStop hook: block, once, a subagent that holds a claim and stops without a new commit", hook.SubagentStop))
	return c
}

// runHook warns about an unknown hook and allows: it must not print help
// on stdout or block.
func runHook(o *hookOpts) error {
	fmt.Fprintf(o.s.Err, "taskie: warning: unknown command %q for \"taskie hook\" (hook allowed); hooks: stop, session-start, subagent-stop\n", strings.Join(o.hook, " "))
	return nil
}

// hookEventOpts are the options of the hooks without flags
// (session-start, subagent-stop).
type hookEventOpts struct {
	s    *Streams
	hook func(hook.Env) int
}

func newHookEventCmd(s *Streams, name, short string, fn func(hook.Env) int) *cobra.Command {
	return newHookEventCmdWith(s, name, short, fn, runHookEvent)
}

func newHookEventCmdWith(s *Streams, name, short string, fn func(hook.Env) int, run func(*hookEventOpts) error) *cobra.Command {
	o := &hookEventOpts{s: s, hook: fn}
	return &cobra.Command{
		Use:   name,
		Short: short,
		Args:  exactArgs(0, "no arguments (input comes on stdin)"),
		RunE:  func(*cobra.Command, []string) error { return run(o) },
	}
}

func runHookEvent(o *hookEventOpts) error { return exitCode(o.hook(hookEnv(o.s, ""))) }

func hookEnv(s *Streams, format string) hook.Env {
	inHook.Store(true)
	store.MirrorTimeout = min(store.MirrorTimeout, 3*time.Second) // a hook never waits longer on the database
	return hook.Env{Stdin: s.In, Stdout: s.Out, Stderr: s.Err, Getenv: os.Getenv, Clock: s.Clock,
		Format: format, InputDeadline: hook.DefaultInputDeadline}
}

// hookStopOpts are the options of `taskie hook stop`.
type hookStopOpts struct {
	s      *Streams
	format string
}

func newHookStopCmd(s *Streams) *cobra.Command { return newHookStopCmdWith(s, runHookStop) }

func newHookStopCmdWith(s *Streams, run func(*hookStopOpts) error) *cobra.Command {
	o := &hookStopOpts{s: s}
	c := &cobra.Command{
		Use:   "stop",
		Short: "Stop hook: validate the plan and run the review that is due",
		Long: `The Stop hook. Reads the agent's hook JSON on stdin, validates the plan, and
runs the independent review that is due. Allow: exit 0 with nothing or one
{"systemMessage": …} object on stdout. Block: exit 2 with the reason on
stderr, or with --format json {"decision":"block","reason":…} and exit 0.
Any internal error allows the stop.`,
		Args: exactArgs(0, "no arguments (input comes on stdin)"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().StringVar(&o.format, "format", "", "block output: exit2 (default) or json")
	return c
}

// runHookStop runs the Stop hook; an unknown --format warns and falls
// back to the configured one, since a hook must not fail on usage.
func runHookStop(o *hookStopOpts) error {
	format := o.format
	if format != "" && format != hook.FormatJSON && format != hook.FormatExit2 {
		fmt.Fprintf(o.s.Err, "taskie: warning: unknown --format %q, using the configured output format (exit2 or json)\n", format)
		format = ""
	}
	return exitCode(hook.Stop(hookEnv(o.s, format)))
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
	clk, _ := processClock(os.Stderr, true) // as Run reads it for every other command
	return hook.Stop(hookEnv(&Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Clock: clk}, ""))
}
