package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskie-dev/taskie/internal/install"
)

// agents is which coding agents this machine and project use.
type agents struct {
	claudeCLI, codexCLI bool
	claudeReg, codexReg []string // the settings / hooks files that register taskie
	// claudeEnabledOnly: settings files enabling taskie's plugin that
	// Claude Code has not installed (no hook runs).
	claudeEnabledOnly []string
	home              string
	unreadable        []string // why a Claude Code settings file could not be read
}

// codexOnly: Codex is here and Claude Code is not, so no fix may send the
// user to install Claude Code.
func (a agents) codexOnly() bool {
	return (a.codexCLI || len(a.codexReg) > 0) && !a.claudeCLI && len(a.claudeReg) == 0 && len(a.claudeEnabledOnly) == 0
}

// codexInstalled: the user installed taskie for Codex, or uses nothing but
// Codex.
func (a agents) codexInstalled() bool { return len(a.codexReg) > 0 || a.codexOnly() }

// codexHooksFile is one Codex hooks.json that may hold taskie's hooks, with
// the name Codex gives it in trust keys and the install command for it.
type codexHooksFile struct {
	path, key, install string
	project            string // the project root, for a project's file
}

func codexHome(e Env) string { return install.CodexHome(e.Home, e.Getenv("CODEX_HOME")) }

func codexHooksFiles(e Env, root string) []codexHooksFile {
	user := filepath.Join(codexHome(e), "hooks.json")
	files := []codexHooksFile{{path: user, key: user, install: "taskie install codex"}}
	if root != "" {
		p := filepath.Join(root, ".codex", "hooks.json")
		files = append(files, codexHooksFile{path: p, key: p, install: "taskie install codex --scope project", project: root})
	}
	return files
}

// codexProjectRoot finds the project whose .codex/hooks.json Codex would
// read from cwd when there is no .taskie yet (`taskie install codex
// --scope project` needs none): the nearest directory up to the git root
// holding one. The home directory is the user scope's, not a project.
func codexProjectRoot(cwd, home string) string {
	for dir := cwd; dir != ""; {
		if dir == home {
			return ""
		}
		if _, err := os.Stat(filepath.Join(dir, ".codex", "hooks.json")); err == nil {
			return dir
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	return ""
}

// codexTrust recomputes the trust hash of every taskie hook in the Codex
// hooks files and reports the hooks Codex would skip: untrusted, changed
// since they were trusted (stale hash), disabled, or in a project Codex
// does not trust; and hooks turned off altogether. A hook that looks like
// taskie's but is not what install writes is reported too: one that runs
// more than a taskie hook is a problem whether trusted or not.
func codexTrust(e Env, root string) (Check, bool) {
	config := filepath.Join(codexHome(e), "config.toml")
	cfg, err := install.ReadCodexConfig(config)
	if err != nil {
		return Check{Name: "codex hook trust", Detail: err.Error(), Fix: "fix " + config + " (Codex cannot read it either)"}, true
	}
	t := trustCheck{config: config, cfg: cfg}
	if e.Assets != nil {
		if t.own, err = install.CodexOwnHooks(e.Assets); err != nil {
			return Check{Name: "codex hook trust", Detail: "taskie's own codex/hooks.json: " + err.Error(), Fix: "reinstall taskie"}, true
		}
	}
	for _, f := range codexHooksFiles(e, root) {
		t.file(f)
	}
	if !t.found {
		return Check{}, false
	}
	if cfg.HooksOff != "" {
		t.problem(cfg.HooksOff+" in "+config+": Codex runs no hook at all", "remove that line from "+config)
	}
	if len(t.problems) > 0 {
		return Check{Name: "codex hook trust", Detail: strings.Join(t.problems, "; "), Fix: strings.Join(dedupe(t.fixes), "; ")}, true
	}
	return Check{Name: "codex hook trust", OK: true, Detail: "trusted: " + strings.Join(dedupe(t.fine), ", ")}, true
}

// trustCheck gathers what codexTrust finds, file by file.
type trustCheck struct {
	config                string // Codex's config.toml
	cfg                   install.CodexConfig
	own                   install.OwnCodexHooks
	problems, fixes, fine []string
	found                 bool // a hooks file with a taskie hook (or unreadable)
}

// problem adds a problem and, when fix is not "", its fix.
func (t *trustCheck) problem(p, fix string) {
	t.problems = append(t.problems, p)
	if fix != "" {
		t.fixes = append(t.fixes, fix)
	}
}

// file checks the taskie hooks of one hooks file.
func (t *trustCheck) file(f codexHooksFile) {
	all, err := install.CodexHooksIn(f.project, f.path, f.key, true)
	if err != nil {
		t.found = true
		t.problem(err.Error(), "fix "+f.path)
		return
	}
	var hooks []install.CodexHook
	for _, h := range all {
		if t.own.Kind(h) != install.HookOther {
			hooks = append(hooks, h)
		}
	}
	if len(hooks) == 0 {
		return
	}
	t.found = true
	events := map[string]bool{}
	bad := false
	for _, h := range hooks {
		events[h.Event] = true
		bad = t.hook(f, h) || bad
	}
	if !events["SessionStart"] {
		bad = true
		t.problem(fmt.Sprintf("no SessionStart hook in %s: a new Codex session is not told where the plan stands", f.path), "")
	}
	if bad {
		t.fixes = append(t.fixes, f.install+"   (writes the hooks and their trust; or trust them in Codex with /hooks)")
	}
	if f.project != "" {
		if ok, _ := install.CodexProjectTrusted(t.config, f.project); !ok {
			t.problem(fmt.Sprintf("Codex reads %s only in a trusted project, and %s is not trusted", filepath.Dir(f.path), f.project),
				"start codex in "+f.project+" and trust the project")
		}
	}
}

// hook checks one taskie hook; bad means installing fixes it.
func (t *trustCheck) hook(f codexHooksFile, h install.CodexHook) (bad bool) {
	st := t.cfg.States[h.Key]
	lookalike := t.own != nil && t.own.Kind(h) == install.HookLookalike
	switch {
	case lookalike && !install.RunsOnlyTaskie(h.Command):
		state, entry := "not trusted", ""
		if st.TrustedHash != "" {
			entry = fmt.Sprintf(" (and [hooks.state.%q] from %s)", h.Key, t.config)
		}
		if st.TrustedHash == h.Hash && !st.Disabled {
			state = "TRUSTED: Codex runs it"
		}
		t.problem(fmt.Sprintf("%s hook %q in %s runs more than a taskie hook and is not what taskie installs (%s)", h.Event, h.Command, f.path, state),
			fmt.Sprintf("read it; unless you wrote it, delete it from %s%s, then run %s", f.path, entry, f.install))
	case st.Disabled:
		t.problem(fmt.Sprintf("%s hook %q is disabled in %s", h.Event, h.Command, t.config),
			fmt.Sprintf("remove enabled = false from [hooks.state.%q]", h.Key))
	case lookalike && st.TrustedHash != h.Hash:
		t.problem(fmt.Sprintf("%s hook %q in %s differs from what taskie installs and is not trusted as it is: Codex skips it (taskie trusts only the hooks exactly as it writes them)", h.Event, h.Command, f.path),
			fmt.Sprintf("if you want it as it is, trust it in Codex with /hooks; else delete it from %s and run %s", f.path, f.install))
	case st.TrustedHash == "":
		t.problem(fmt.Sprintf("%s hook %q in %s is not trusted: Codex skips it without a warning", h.Event, h.Command, f.path), "")
		return true
	case st.TrustedHash != h.Hash:
		t.problem(fmt.Sprintf("%s hook %q in %s changed since it was trusted (stale hash): Codex skips it", h.Event, h.Command, f.path), "")
		return true
	case lookalike:
		t.fine = append(t.fine, h.Event+" (yours: differs from what taskie installs)")
	default:
		t.fine = append(t.fine, h.Event)
	}
	return false
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// loginPath checks that a login shell finds taskie: Codex runs the
// agent's commands in a snapshot of the user's login shell ($SHELL -l), so
// without it `taskie done` exits 127. (Codex runs its hooks with its own
// PATH, which onPath checks.)
func loginPath(e Env) Check {
	shell := e.Getenv("SHELL")
	if shell == "" {
		shell = "bash"
	}
	name := filepath.Base(shell)
	cmd := fmt.Sprintf("%s -lc 'command -v taskie'", name)
	p, err := e.LoginShell(shell)
	p = strings.TrimSpace(p)
	if lines := strings.Split(p, "\n"); len(lines) > 1 {
		p = strings.TrimSpace(lines[len(lines)-1]) // a profile may print something first
	}
	if err != nil || p == "" || !filepath.IsAbs(p) {
		dir := filepath.Dir(e.Exe)
		return Check{Name: "login shell PATH", Detail: fmt.Sprintf("`%s` finds no taskie: Codex runs the agent's commands in a login shell, so `taskie done` and the other commands fail (exit 127)", cmd),
			Fix: fmt.Sprintf("echo 'export PATH=\"%s:$PATH\"' >> %s   (or install taskie into /usr/local/bin)", dir, profileFor(e, name))}
	}
	if e.Exe != "" && !sameFile(p, e.Exe) {
		return Check{Name: "login shell PATH", Detail: fmt.Sprintf("`%s` finds %s, not this binary (%s)", cmd, p, e.Exe),
			Fix: "make install, or remove the other copy from the login PATH"}
	}
	return Check{Name: "login shell PATH", OK: true, Detail: fmt.Sprintf("`%s`: %s (Codex runs the agent's commands there)", cmd, p)}
}

// profileFor is the file a login shell of that name reads its PATH from.
func profileFor(e Env, shell string) string {
	switch shell {
	case "zsh":
		return "~/.zprofile"
	case "bash":
		for _, f := range []string{".bash_profile", ".bash_login"} {
			if _, err := os.Stat(filepath.Join(e.Home, f)); err == nil {
				return "~/" + f
			}
		}
	}
	return "~/.profile"
}

// CodexHookTrust is the check of the Codex hooks Codex would skip, alone
// (`taskie status` lists a failing one as needing you); ok is false when
// no Codex hooks file holds taskie's hooks.
func CodexHookTrust(e Env, root string) (c Check, ok bool) { return codexTrust(e, root) }
