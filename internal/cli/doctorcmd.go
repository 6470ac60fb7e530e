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

func newDoctorCmd(s *Streams, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the binary, the agent hooks, the reviewer CLI, the config and the plans",
		Long: `Check that taskie can work here: this binary is the taskie on PATH, the
Claude Code plugin or a taskie Stop hook is registered, the reviewer CLI is on
PATH and logged in, CLAUDE_CODE_STOP_HOOK_BLOCK_CAP allows a review cycle, the
config is valid and the plans validate. For Codex also: taskie's hooks are
trusted in config.toml with the hash Codex computes (Codex skips an untrusted
hook silently), and a login shell finds taskie (Codex runs hooks and commands
with -lc). Each problem comes with the command
that fixes it. Exit 1 when a problem is found.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			cwd, err := g.cwd()
			if err != nil {
				return err
			}
			exe, _ := os.Executable()
			home, _ := os.UserHomeDir()
			checks := doctor.Run(doctor.Env{Version: version(), Exe: exe, Home: home, Cwd: cwd,
				Getenv: os.Getenv, LookPath: exec.LookPath, LoginShell: loginShell})
			if asJSON {
				if err := writeJSON(s.Out, checks); err != nil {
					return err
				}
			} else {
				for _, c := range checks {
					mark := "ok  "
					if !c.OK {
						mark = "FAIL"
					}
					fmt.Fprintf(s.Out, "%s %-18s %s\n", mark, c.Name, c.Detail)
					if c.Fix != "" {
						fmt.Fprintf(s.Out, "     %-18s fix: %s\n", "", c.Fix)
					}
				}
			}
			if n := doctor.Problems(checks); n > 0 {
				fmt.Fprintf(s.Err, "taskie doctor: %d problem(s)\n", n)
				return errProblems
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
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
