package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/doctor"
)

// doctorOpts are the options of `taskie doctor`.
type doctorOpts struct {
	s      *Streams
	g      *globals
	asJSON bool
}

func newDoctorCmd(s *Streams, g *globals) *cobra.Command { return newDoctorCmdWith(s, g, runDoctor) }

func newDoctorCmdWith(s *Streams, g *globals, run func(*doctorOpts) error) *cobra.Command {
	o := &doctorOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the binary, the agent hooks, the reviewer CLI, the config and the plans",
		Long: `Check that taskie can work here: this binary is the taskie on PATH, the
Claude Code plugin or a taskie Stop hook is registered, the reviewer CLI is on
PATH and logged in (every reviewer the models rotation uses),
CLAUDE_CODE_STOP_HOOK_BLOCK_CAP allows a review cycle, the config is valid and
the plans validate (a malformed or illegal state.json is a problem too). For
Codex also: taskie's hooks are trusted in config.toml with the hash Codex
computes (Codex skips an untrusted hook silently), a hook that only looks like
taskie's is named, and both PATHs find taskie: the current one (Codex runs
hooks with its own PATH) and a login shell's (Codex runs the agent's commands
in one). With a shared store (TASKIE_DATABASE_URL, or a trusted "store"
setting): the server answers within 3 s and lets this user in, the schema
against this taskie's, this clone's plan events are all in it, and the origin
remote or project names the repository. Each problem comes with the command
that fixes it. Exit 1 when a problem is found.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func runDoctor(o *doctorOpts) error {
	cwd, err := o.g.cwd()
	if err != nil {
		return err
	}
	exe, _ := os.Executable()
	home, _ := os.UserHomeDir()
	checks := doctor.Run(doctor.Env{Version: version(), Exe: exe, Home: home, Cwd: cwd,
		Getenv: os.Getenv, LookPath: exec.LookPath, LoginShell: loginShell, Assets: Assets, Clock: o.s.Clock})
	if o.asJSON {
		if err := writeJSON(o.s.Out, checks); err != nil {
			return err
		}
	} else {
		printChecks(o.s, checks)
	}
	if n := doctor.Problems(checks); n > 0 {
		fmt.Fprintf(o.s.Err, "taskie doctor: %d problem(s)\n", n)
		return errProblems
	}
	return nil
}

// printChecks prints one line per check, and the fix under a failure.
func printChecks(s *Streams, checks []doctor.Check) {
	c := s.out()
	for _, ch := range checks {
		mark := c.Green("ok  ")
		if !ch.OK {
			mark = c.Red("FAIL")
		}
		fmt.Fprintf(s.Out, "%s %-18s %s\n", mark, ch.Name, ch.Detail)
		if ch.Fix != "" {
			fmt.Fprintf(s.Out, "     %-18s %s %s\n", "", c.Yellow("fix:"), ch.Fix)
		}
	}
}

// loginShell asks a login shell where taskie is, as Codex would find it.
func loginShell(shell string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-lc", "command -v taskie")
	cmd.Env = append(os.Environ(), "TASKIE_HOOK_SKIP=1")
	out, err := cmd.Output()
	return string(out), err
}
