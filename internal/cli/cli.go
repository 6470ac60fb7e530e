// Package cli is taskie's command line: one file per command, each parsing
// flags and calling the domain packages. Main is what cmd/taskie and the
// tests run.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/clock"
)

// Exit codes (docs/cli.md).
const (
	ExitOK       = 0
	ExitProblems = 1 // validation or doctor found problems
	ExitUsage    = 2 // bad usage or bad input; for the hook: block
)

// Version is set with -ldflags "-X github.com/taskie-dev/taskie/internal/cli.Version=…".
var Version = ""

func version() string { return buildVersion().Version }

// VersionLine is what `taskie --version` prints; main prints it without
// building any command.
func VersionLine() string { return "taskie " + version() + "\n" }

// Streams carries all I/O: stdout holds only data; messages go to stderr.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	TTY      bool // stdout is a terminal: bars, aligned tables
	// Color and ErrColor switch colour on for stdout and stderr: a
	// terminal, and NO_COLOR unset (see SystemStreams).
	Color, ErrColor bool
	// Clock is the time commands act at (TASKIE_NOW, read once by Run);
	// the zero Clock is the real one.
	Clock clock.Clock
}

// exitError carries an exit code and an optional hint line.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr is a usage or input error (exit 2).
func usageErr(err error, hint string) error { return &exitError{code: ExitUsage, err: err, hint: hint} }

// problems reports that a command found problems (exit 1); it prints nothing more.
var errProblems = &exitError{code: ExitProblems, err: errors.New("problems found")}

// errSilent marks an exit code whose message was already printed.
var errSilent = errors.New("silent exit")

// Main runs taskie with the process's streams and returns the exit code.
func Main(args []string) int {
	return Run(args, SystemStreams())
}

// Run runs taskie with the given streams.
func Run(args []string, s Streams) int {
	clk, err := processClock(s.Err, len(args) > 0 && args[0] == "hook")
	if err != nil {
		fmt.Fprintf(s.Err, "taskie: error: %v\n", err)
		return ExitUsage
	}
	s.Clock = clk
	root := newRootCmdFor(&s, args)
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	err = storeFailure(explainError(root, err))
	var ee *exitError
	if errors.As(err, &ee) && (ee == errProblems || ee.err == errSilent) {
		return ee.code
	}
	if isHook(cmd) {
		// Exit 2 from a hook means "block": a usage error must never trap
		// the agent, so it is reported and the stop allowed.
		fmt.Fprintf(s.Err, "taskie: warning: %v (hook allowed)\n", err)
		return ExitOK
	}
	fmt.Fprintf(s.Err, "%s %v\n", s.errs().Red("taskie: error:"), err)
	if !errors.As(err, &ee) {
		fmt.Fprintf(s.Err, "%s see `%s --help`\n", s.errs().Yellow("taskie: hint:"), cmd.CommandPath())
		return ExitUsage
	}
	if ee.hint != "" {
		fmt.Fprintf(s.Err, "%s %s\n", s.errs().Yellow("taskie: hint:"), ee.hint)
	}
	return ee.code
}

// isHook reports whether cmd is `taskie hook` or one of its subcommands.
func isHook(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Name() == "hook" && c.Parent() != nil && !c.Parent().HasParent() {
			return true
		}
	}
	return false
}

// global options shared by every command.
type globals struct {
	dir  string // -C
	plan string // --plan

	s       *Streams // for the note naming a plan picked by default
	picked  bool     // that note was printed
	located bool     // the project was found (the worktree notice is said once)
}

// command is one top-level command: its name and how to build it.
type command struct {
	name  string
	build func(*Streams, *globals) *cobra.Command
}

// commands lists every top-level command, one line each. A process builds
// only the one its arguments name (see commandsFor): building all of them
// cost `taskie --version` more than the rest of its start.
var commands = []command{
	{"init", newInitCmd}, {"plan", newPlanCmd}, {"status", newStatusCmd}, {"start", newStartCmd},
	{"done", newDoneCmd}, {"set", newSetCmd},
	{"pause", func(s *Streams, g *globals) *cobra.Command { return newPauseCmd(s, g, false) }},
	{"resume", func(s *Streams, g *globals) *cobra.Command { return newPauseCmd(s, g, true) }},
	{"continue", newContinueCmd}, {"validate", newValidateCmd},
	{"diagram", func(s *Streams, _ *globals) *cobra.Command { return newDiagramCmd(s) }},
	{"hook", func(s *Streams, _ *globals) *cobra.Command { return newHookCmd(s) }},
	{"config", newConfigCmd},
	{"install", func(s *Streams, g *globals) *cobra.Command { return newInstallCmd(s, g, false) }},
	{"uninstall", func(s *Streams, g *globals) *cobra.Command { return newInstallCmd(s, g, true) }},
	{"doctor", newDoctorCmd}, {"task", newTaskCmd}, {"context", newContextCmd},
	{"recover", newRecoverCmd}, {"history", newHistoryCmd}, {"log", newLogCmd},
	{"trust", newTrustCmd},
	{"store", newStoreCmd},
	{"findings", newFindingsCmd}, {"finding", newFindingCmd},
	{"query", newQueryCmd},
	{"ready", newReadyCmd}, {"claim", newClaimCmd}, {"heartbeat", newHeartbeatCmd}, {"release", newReleaseCmd},
	{"groups", newGroupsCmd}, {"worktree", newWorktreeCmd},
	{"version", func(s *Streams, _ *globals) *cobra.Command { return newVersionCmd(s) }},
	{"review", newReviewCmd},
	{"merge-driver", newMergeDriverCmd},
	{"watch", newWatchCmd},
	{"serve", newServeCmd},
}

// commandsFor picks the commands to build for args: the one the first
// argument that is not a flag names; none for a lone --version (-v); every one
// otherwise (help, completion, a name to correct, no command at all).
func commandsFor(args []string) []command {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		return nil
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return commands
		case a == "-C" || a == "--dir" || a == "--plan":
			i++ // its value
		case strings.HasPrefix(a, "-"):
		default:
			for _, c := range commands {
				if c.name == a {
					return []command{c}
				}
			}
			return commands
		}
	}
	return commands
}

// newRootCmdFor builds the root with the commands args need (all of them
// when args is nil).
func newRootCmdFor(s *Streams, args []string) *cobra.Command {
	g := &globals{s: s}
	root := &cobra.Command{
		Use:   "taskie",
		Short: "State and automatic reviews for AI coding-agent plans",
		Long: `taskie keeps the state of an AI coding agent's plan (phases, tasks, reviews)
in .taskie/plans/<id>/ and drives an automatic review loop through the agent's
Stop hook.

Exit codes: 0 ok, 1 problems found (validate, doctor, a FAIL review), 2 usage
or input error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("taskie {{.Version}}\n")
	root.PersistentFlags().StringVarP(&g.dir, "dir", "C", "", "run as if taskie was started in `dir`")
	root.PersistentFlags().StringVar(&g.plan, "plan", "", "plan `id` (default: the one `taskie plan use` set, else the most recently changed)")
	root.SetFlagErrorFunc(flagError)
	cmds := commandsFor(args)
	whole := len(cmds) != 1
	if whole {
		// --version is root's own flag: a process running one command does
		// not read the build information for it.
		root.Version = version()
	} else {
		// Nor does it complete anything: a completion request names no
		// command first, so it builds the whole tree.
		root.CompletionOptions.DisableDefaultCmd = true
	}
	for _, c := range cmds {
		root.AddCommand(c.build(s, g))
	}
	finishTree(root, s, g, whole)
	return root
}

// cwd returns the directory taskie works in.
func (g *globals) cwd() (string, error) {
	if g.dir != "" {
		return g.dir, nil
	}
	return os.Getwd()
}

// writeJSON prints v as indented JSON on stdout.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// exactArgs is cobra.ExactArgs with a usage-error exit code.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr(fmt.Errorf("%s expects %s", c.CommandPath(), what), fmt.Sprintf("usage: %s", c.UseLine()))
		}
		return nil
	}
}

// maxArgs is cobra.MaximumNArgs with a usage-error exit code.
func maxArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErr(fmt.Errorf("%s takes at most %d argument(s), got %d", c.CommandPath(), n, len(args)), fmt.Sprintf("usage: %s", c.UseLine()))
		}
		return nil
	}
}
