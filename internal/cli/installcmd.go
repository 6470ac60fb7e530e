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

// installOpts are the options of `taskie install` and `taskie uninstall`.
type installOpts struct {
	s       *Streams
	g       *globals
	remove  bool // uninstall
	agent   string
	scope   string
	asJSON  bool
	noTrust bool
}

func newInstallCmd(s *Streams, g *globals, remove bool) *cobra.Command {
	return newInstallCmdWith(s, g, remove, runInstallCmd)
}

func newInstallCmdWith(s *Streams, g *globals, remove bool, run func(*installOpts) error) *cobra.Command {
	o := &installOpts{s: s, g: g, remove: remove}
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
With --scope project the settings name the marketplace relative to the project
and .taskie/.gitignore covers the plugin copy: commit .claude/settings.json,
and each clone runs taskie install claude --scope project once.
codex: writes one skill per action to $CODEX_HOME/skills/taskie-<action>/
(.agents/skills/ in the project with --scope project; in Codex:
$taskie-new-plan, $taskie-continue-plan, …), adds the Stop and SessionStart
hooks to hooks.json ($CODEX_HOME, or .codex/ with --scope project), and
trusts those two hooks in $CODEX_HOME/config.toml: Codex skips an untrusted
hook without a word. Only hooks exactly as taskie writes them are trusted: a
hook that merely starts with "taskie hook" (say, from a cloned repository)
is shown to you and left untrusted. --no-trust leaves the trust to you
(taskie prints the lines; Codex's /hooks can trust them too).
Every other setting and hook is kept; running it again changes nothing.
uninstall removes what install added, with or without the claude CLI on PATH,
and no empty file or directory is left behind. See taskie help codex.`,
		Args:      exactArgs(1, "claude or codex"),
		ValidArgs: []string{"claude", "codex"},
		RunE: func(_ *cobra.Command, args []string) error {
			o.agent = args[0]
			return run(o)
		},
	}
	c.Flags().StringVar(&o.scope, "scope", install.ScopeUser, "user or project")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the changes as JSON")
	if !remove {
		c.Flags().BoolVar(&o.noTrust, "no-trust", false, "codex: do not write the hook trust entries to config.toml")
	}
	_ = c.RegisterFlagCompletionFunc("scope", cobra.FixedCompletions([]string{install.ScopeUser, install.ScopeProject}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func runInstallCmd(o *installOpts) error {
	use := "install"
	if o.remove {
		use = "uninstall"
	}
	if o.agent != "claude" && o.agent != "codex" {
		return usageErr(fmt.Errorf("unknown agent %q%s", o.agent, didYouMean(o.agent, []string{"claude", "codex"})), "use claude or codex")
	}
	t, err := installTarget(o.g, o.scope)
	if err != nil {
		return err
	}
	changes, err := runInstall(o.agent, t, o.remove, install.CodexOptions{NoTrust: o.noTrust})
	if err != nil {
		return err
	}
	if !o.remove {
		more, err := install.ProjectMergeDriver(t)
		if err != nil {
			return err
		}
		changes = append(changes, more...)
	}
	if o.asJSON {
		return writeJSON(o.s.Out, changes)
	}
	for _, ch := range changes {
		if ch.Action == "unchanged" {
			continue
		}
		if ch.Action == "skipped" { // nothing written: a note, not a change
			fmt.Fprintf(o.s.Err, "taskie: skipped %s: %s\n", ch.Path, ch.What)
			continue
		}
		fmt.Fprintf(o.s.Out, "%-9s %s", ch.Action, ch.Path)
		if ch.What != "" {
			fmt.Fprintf(o.s.Out, " (%s)", ch.What)
		}
		fmt.Fprintln(o.s.Out)
	}
	if n := countChanged(changes); n == 0 {
		fmt.Fprintf(o.s.Err, "taskie %s %s: nothing to change\n", use, o.agent)
	}
	if o.agent == "codex" && !o.remove {
		codexNotes(o.s, t, o.noTrust)
	}
	if o.agent == "claude" && !o.remove && t.Scope == install.ScopeProject {
		fmt.Fprintln(o.s.Err, "taskie: commit .claude/settings.json (and .taskie/.gitignore); in another clone, run `taskie install claude --scope project` once")
	}
	return nil
}

// codexNotes tells the user what Codex needs beyond the files: the trust
// of the hooks (when --no-trust left it to them), the taskie-looking hooks
// install left alone, and taskie on the PATH of both Codex and its shell.
func codexNotes(s *Streams, t install.Target, noTrust bool) {
	if noTrust {
		lines, err := install.CodexTrustLines(t, Assets)
		if err == nil && lines != "" {
			fmt.Fprintf(s.Err, "taskie: the hooks are not trusted yet, and Codex skips an untrusted hook silently.\n"+
				"Trust them in Codex (/hooks), or add these lines to %s:\n\n%s\n", t.CodexConfig(), lines)
		}
	}
	if others, err := install.CodexLookalikes(t, Assets); err == nil {
		for _, h := range others {
			fmt.Fprintf(s.Err, "taskie: %s already has a %s hook that looks like taskie's but is not what taskie installs:\n"+
				"    %s\nLeft as it is and not trusted. Read it: trust it in Codex (/hooks) only if you know what it runs;"+
				" else delete it and run this install again.\n", h.File, h.Event, h.Command)
		}
	}
	fmt.Fprintln(s.Err, "taskie: Codex runs the hooks with its own PATH and the agent's commands in a login shell: `taskie doctor` checks that both find taskie.")
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
		if c.Action != "unchanged" && c.Action != "skipped" {
			n++
		}
	}
	return n
}

func installTarget(g *globals, scope string) (install.Target, error) {
	if scope != install.ScopeUser && scope != install.ScopeProject {
		return install.Target{}, usageErr(fmt.Errorf("unknown scope %q%s", scope, didYouMean(scope, []string{install.ScopeUser, install.ScopeProject})), "use --scope user or --scope project")
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

func runInstall(agent string, t install.Target, remove bool, opt install.CodexOptions) ([]install.Change, error) {
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
		return install.Codex(t, Assets, opt)
	case agent == "codex":
		return install.UninstallCodex(t, Assets)
	}
	return nil, usageErr(fmt.Errorf("unknown agent %q", agent), "use claude or codex")
}
