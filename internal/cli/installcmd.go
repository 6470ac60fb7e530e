package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/install"
)

// Assets holds the agent packages (plugin/, codex/); cmd/taskie sets it.
var Assets fs.FS

func newInstallCmd(s *Streams, g *globals, remove bool) *cobra.Command {
	var scope string
	var asJSON bool
	use, short := "install", "Install taskie into Claude Code or Codex (idempotent)"
	if remove {
		use, short = "uninstall", "Remove what taskie install added, and nothing else"
	}
	c := &cobra.Command{
		Use:   use + " claude|codex",
		Short: short,
		Long: short + `.

claude: writes the plugin (commands, action prompts, ground rules, hooks) to a
local marketplace (~/.taskie/claude-marketplace, or .taskie/claude-marketplace
with --scope project) and enables it in .claude/settings.json as taskie@taskie.
codex: writes the prompts to $CODEX_HOME/prompts/taskie-*.md and adds the Stop
hook to hooks.json ($CODEX_HOME, or .codex/ with --scope project).
Every other setting and hook is kept; running it again changes nothing.`,
		Args:      exactArgs(1, "claude or codex"),
		ValidArgs: []string{"claude", "codex"},
		RunE: func(_ *cobra.Command, args []string) error {
			t, err := installTarget(g, scope)
			if err != nil {
				return err
			}
			changes, err := runInstall(args[0], t, remove)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(s.Out, changes)
			}
			for _, ch := range changes {
				if ch.Action == "unchanged" {
					continue
				}
				fmt.Fprintf(s.Out, "%-9s %s", ch.Action, ch.Path)
				if ch.What != "" {
					fmt.Fprintf(s.Out, " (%s)", ch.What)
				}
				fmt.Fprintln(s.Out)
			}
			if n := countChanged(changes); n == 0 {
				fmt.Fprintf(s.Err, "taskie %s %s: nothing to change\n", use, args[0])
			}
			return nil
		},
	}
	c.Flags().StringVar(&scope, "scope", install.ScopeUser, "user or project")
	c.Flags().BoolVar(&asJSON, "json", false, "print the changes as JSON")
	return c
}

// claudeRunner runs the claude CLI when it is installed, outside any
// Claude Code session's environment and hooks.
func claudeRunner() install.Runner {
	path, err := exec.LookPath("claude")
	if err != nil || os.Getenv("TASKIE_INSTALL_NO_CLI") != "" {
		return nil
	}
	return func(dir string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TASKIE_HOOK_SKIP=1", "CLAUDECODE=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

func countChanged(cs []install.Change) int {
	n := 0
	for _, c := range cs {
		if c.Action != "unchanged" {
			n++
		}
	}
	return n
}

func installTarget(g *globals, scope string) (install.Target, error) {
	if scope != install.ScopeUser && scope != install.ScopeProject {
		return install.Target{}, usageErr(fmt.Errorf("unknown scope %q", scope), "use --scope user or --scope project")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return install.Target{}, err
	}
	root, err := g.cwd()
	if err != nil {
		return install.Target{}, err
	}
	return install.Target{Scope: scope, Home: home, Root: root, CodexHome: os.Getenv("CODEX_HOME")}, nil
}

func runInstall(agent string, t install.Target, remove bool) ([]install.Change, error) {
	switch {
	case agent == "claude" && !remove:
		cs, err := install.Claude(t, Assets)
		if err != nil {
			return cs, err
		}
		more, err := install.ClaudeCLI(t, claudeRunner(), countChanged(cs) > 0)
		return append(cs, more...), err
	case agent == "claude":
		cs := install.UninstallClaudeCLI(t, claudeRunner())
		more, err := install.UninstallClaude(t)
		return append(cs, more...), err
	case agent == "codex" && !remove:
		return install.Codex(t, Assets)
	case agent == "codex":
		return install.UninstallCodex(t)
	}
	return nil, usageErr(fmt.Errorf("unknown agent %q", agent), "use claude or codex")
}
