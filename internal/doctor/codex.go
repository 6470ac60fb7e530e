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
}

// codexOnly: Codex is here and Claude Code is not, so no fix may send the
// user to install Claude Code.
func (a agents) codexOnly() bool {
	return (a.codexCLI || len(a.codexReg) > 0) && !a.claudeCLI && len(a.claudeReg) == 0
}

func (a agents) codexUsed() bool { return a.codexCLI || len(a.codexReg) > 0 }

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

// codexTrust recomputes the trust hash of every taskie hook in the Codex
// hooks files and reports the hooks Codex would skip: untrusted, changed
// since they were trusted (stale hash), disabled, or in a project Codex
// does not trust; and hooks turned off altogether.
func codexTrust(e Env, root string) (Check, bool) {
	config := filepath.Join(codexHome(e), "config.toml")
	cfg, err := install.ReadCodexConfig(config)
	if err != nil {
		return Check{Name: "codex hook trust", Detail: err.Error(), Fix: "fix " + config + " (Codex cannot read it either)"}, true
	}
	var problems, fixes, fine []string
	found := false
	for _, f := range codexHooksFiles(e, root) {
		hooks, err := install.CodexHooksIn(f.path, f.key, false)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f.path, err))
			fixes = append(fixes, "fix "+f.path)
			continue
		}
		if len(hooks) == 0 {
			continue
		}
		found = true
		events := map[string]bool{}
		bad := false
		for _, h := range hooks {
			events[h.Event] = true
			st := cfg.States[h.Key]
			switch {
			case st.Disabled:
				problems = append(problems, fmt.Sprintf("%s hook %q is disabled in %s", h.Event, h.Command, config))
				fixes = append(fixes, fmt.Sprintf("remove enabled = false from [hooks.state.%q]", h.Key))
			case st.TrustedHash == "":
				bad = true
				problems = append(problems, fmt.Sprintf("%s hook %q in %s is not trusted: Codex skips it without a warning", h.Event, h.Command, f.path))
			case st.TrustedHash != h.Hash:
				bad = true
				problems = append(problems, fmt.Sprintf("%s hook %q in %s changed since it was trusted (stale hash): Codex skips it", h.Event, h.Command, f.path))
			default:
				fine = append(fine, h.Event)
			}
		}
		if !events["SessionStart"] {
			bad = true
			problems = append(problems, fmt.Sprintf("no SessionStart hook in %s: a new Codex session is not told where the plan stands", f.path))
		}
		if bad {
			fixes = append(fixes, f.install+"   (writes the hooks and their trust; or trust them in Codex with /hooks)")
		}
		if f.project != "" {
			if ok, _ := install.CodexProjectTrusted(config, f.project); !ok {
				problems = append(problems, fmt.Sprintf("Codex reads %s only in a trusted project, and %s is not trusted", filepath.Dir(f.path), f.project))
				fixes = append(fixes, "start codex in "+f.project+" and trust the project")
			}
		}
	}
	if !found {
		return Check{}, false
	}
	if cfg.HooksOff != "" {
		problems = append(problems, cfg.HooksOff+" in "+config+": Codex runs no hook at all")
		fixes = append(fixes, "remove that line from "+config)
	}
	if len(problems) > 0 {
		return Check{Name: "codex hook trust", Detail: strings.Join(problems, "; "), Fix: strings.Join(dedupe(fixes), "; ")}, true
	}
	return Check{Name: "codex hook trust", OK: true, Detail: "trusted: " + strings.Join(dedupe(fine), ", ")}, true
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

// loginPath checks that a login shell finds taskie: Codex runs the agent's
// commands (`bash -lc`) and its hooks (`$SHELL -lc`) in one, so without it
// `taskie done` exits 127 and the hooks never run.
func loginPath(e Env) Check {
	shell := e.Getenv("SHELL") // Codex's hooks run in $SHELL -lc
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
		return Check{Name: "login shell PATH", Detail: fmt.Sprintf("`%s` finds no taskie: Codex runs hooks and commands in a login shell, so they fail (exit 127)", cmd),
			Fix: fmt.Sprintf("echo 'export PATH=\"%s:$PATH\"' >> %s   (or install taskie into /usr/local/bin)", dir, profileFor(e, name))}
	}
	if e.Exe != "" && !sameFile(p, e.Exe) {
		return Check{Name: "login shell PATH", Detail: fmt.Sprintf("`%s` finds %s, not this binary (%s)", cmd, p, e.Exe),
			Fix: "make install, or remove the other copy from the login PATH"}
	}
	return Check{Name: "login shell PATH", OK: true, Detail: fmt.Sprintf("`%s`: %s", cmd, p)}
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
