// Package doctor checks that taskie can work on this machine and project:
// the binary on PATH, the agent registration, the reviewer CLI and its login,
// the block-cap advice, the config and the plans. Each problem comes with the
// command that fixes it.
package doctor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/clock"
	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/implied"
	"github.com/taskie-dev/taskie/internal/install"
	"github.com/taskie-dev/taskie/internal/plan"
	"github.com/taskie-dev/taskie/internal/review"
	"github.com/taskie-dev/taskie/internal/store"
)

// Check is one finding.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Env is what the checks look at; tests replace it.
type Env struct {
	Version  string
	Exe      string // this binary
	Home     string
	Cwd      string
	Getenv   func(string) string
	LookPath func(string) (string, error)
	// LoginShell runs `<shell> -lc 'command -v taskie'` and returns its output.
	LoginShell func(shell string) (string, error)
	// Assets holds codex/hooks.json: the hooks taskie installs, to tell
	// them from hooks that only look like them.
	Assets fs.FS
	// Clock is the time taskie acts at (TASKIE_NOW when set).
	Clock clock.Clock
}

// Run performs every check.
func Run(e Env) []Check {
	var out []Check
	out = append(out, Check{Name: "version", OK: true, Detail: fmt.Sprintf("taskie %s at %s", e.Version, e.Exe)})
	out = append(out, onPath(e))
	loc, lerr := store.Locate(e.Cwd)
	repo := loc.Repo
	var nm *store.NoMainError
	switch {
	case errors.As(lerr, &nm):
		out = append(out, Check{Name: "worktree", Detail: lerr.Error(), Fix: "run taskie in the checkout that holds the plan (`taskie -C <it> …`)"})
	case loc.Notice() != "":
		out = append(out, Check{Name: "worktree", OK: true, Detail: loc.Notice()})
	}
	cfg := config.Default()
	if repo != nil {
		c, err := config.Load(repo.TaskieDir())
		if err != nil {
			out = append(out, Check{Name: "config", Detail: err.Error(), Fix: "fix .taskie/config.json (`taskie help config` lists the settings, `taskie config` shows the effective values)"})
		} else {
			cfg = c
			out = append(out, Check{Name: "config", OK: true, Detail: "valid"})
		}
		out = append(out, configTrust(c), boxCheck(repo.Root, c))
	}
	root := ""
	if repo != nil {
		root = repo.Root
	}
	// A project installed with --scope project may have no .taskie yet.
	codexRoot := cmp.Or(root, codexProjectRoot(e.Cwd, e.Home))
	ag := detectAgents(e, root, codexRoot)
	out = append(out, registration(ag))
	if len(ag.unreadable) > 0 {
		out = append(out, Check{Name: "agent settings", Detail: strings.Join(ag.unreadable, "; "),
			Fix: "make each a regular JSON file (or delete it), then run taskie install again"})
	}
	if c, ok := projectMarketplace(cmp.Or(root, e.Cwd)); ok {
		out = append(out, c)
	}
	if c, ok := codexTrust(e, codexRoot); ok {
		out = append(out, c)
	}
	// Only for a Codex user: someone who installed for Claude Code alone
	// and merely has codex on PATH does not run agents through Codex.
	if ag.codexInstalled() && e.LoginShell != nil {
		out = append(out, loginPath(e))
	}
	out = append(out, reviewer(e, cfg, ag)...)
	out = append(out, blockCap(e, cfg, ag))
	if c, ok := mergeDriver(root); ok {
		out = append(out, c)
	}
	out = append(out, storeChecks(e, repo, cfg)...)
	if repo != nil {
		out = append(out, plans(repo, e.Clock)...)
	} else {
		out = append(out, Check{Name: "project", OK: true, Detail: "no .taskie here (run `taskie init` in a project to use taskie)"})
	}
	return out
}

// Problems counts the failed checks.
func Problems(cs []Check) int {
	n := 0
	for _, c := range cs {
		if !c.OK {
			n++
		}
	}
	return n
}

func onPath(e Env) Check {
	p, err := e.LookPath("taskie")
	if err != nil {
		return Check{Name: "binary on PATH", Detail: "`taskie` is not on PATH, but the hooks run `taskie hook …` with the PATH the agent (Claude Code, Codex) was started with",
			Fix: fmt.Sprintf("make install (or add %s to PATH)", filepath.Dir(e.Exe))}
	}
	if !sameFile(p, e.Exe) {
		return Check{Name: "binary on PATH", Detail: fmt.Sprintf("`taskie` on PATH is %s, not this binary (%s)", p, e.Exe),
			Fix: "make install, or remove the other copy from PATH"}
	}
	return Check{Name: "binary on PATH", OK: true, Detail: p}
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// detectAgents finds the agents' CLIs on PATH and taskie's registrations:
// the plugin or a taskie Stop hook in the Claude Code settings, the Stop
// hook in the Codex hooks files.
func detectAgents(e Env, root, codexRoot string) agents {
	a := agents{home: e.Home}
	_, err := e.LookPath("claude")
	a.claudeCLI = err == nil
	_, err = e.LookPath("codex")
	a.codexCLI = err == nil
	claude := []string{filepath.Join(e.Home, ".claude", "settings.json")}
	if root != "" {
		claude = append(claude, filepath.Join(root, ".claude", "settings.json"), filepath.Join(root, ".claude", "settings.local.json"))
	}
	for i, f := range claude {
		base := ""
		if i > 0 {
			base = root
		}
		how, err := registered(base, f)
		if err != nil {
			a.unreadable = append(a.unreadable, err.Error())
		}
		switch {
		case how == byHook:
			a.claudeReg = append(a.claudeReg, f)
		case how == byPlugin && pluginInstalled(e.Home, root, i > 0):
			a.claudeReg = append(a.claudeReg, f+" (plugin "+install.PluginID+" installed and enabled)")
		case how == byPlugin:
			a.claudeEnabledOnly = append(a.claudeEnabledOnly, f)
		}
	}
	for _, f := range codexHooksFiles(e, codexRoot) {
		// codexTrust reports a hooks file it cannot read.
		if how, _ := registered(f.project, f.path); how == byHook {
			a.codexReg = append(a.codexReg, f.path)
		}
	}
	return a
}

// registration reports where taskie is registered.
func registration(a agents) Check {
	found := append(append([]string{}, a.claudeReg...), a.codexReg...)
	if len(found) == 0 && len(a.claudeEnabledOnly) > 0 {
		// Enabled in settings is not installed: Claude Code runs no hook of
		// a plugin missing from its own records (`claude plugin list`).
		fix := "put the claude CLI on PATH, then run `taskie install claude` again"
		if a.claudeEnabledOnly[0] != filepath.Join(a.home, ".claude", "settings.json") {
			fix += " --scope project"
		}
		return Check{Name: "hook registration", Detail: fmt.Sprintf("%s enables plugin %s, but Claude Code has not installed it (%s has no record of it; `claude plugin list` shows none), so its hooks do not run",
			a.claudeEnabledOnly[0], install.PluginID, installedPlugins(a.home)), Fix: fix}
	}
	if len(found) == 0 {
		fix := "taskie install claude   (or: taskie install codex)"
		if a.codexOnly() {
			fix = "taskie install codex"
		}
		return Check{Name: "hook registration", Detail: "no Claude Code plugin or taskie Stop hook registered (user or project settings)", Fix: fix}
	}
	return Check{Name: "hook registration", OK: true, Detail: "found in " + strings.Join(found, ", ")}
}

// How a settings file registers taskie.
type registeredBy int

const (
	notRegistered registeredBy = iota
	byPlugin                   // enabledPlugins names taskie's plugin
	byHook                     // a Stop hook runs `taskie hook stop`
)

// registered reports how the settings file path registers taskie; base
// is the project root the file stays in, "" for the user's own file. A file
// that is missing or not JSON registers nothing; one that cannot be read
// (a FIFO, a link out of the project, too large) is an error too.
func registered(base, path string) (registeredBy, error) {
	data, err := install.ReadFile(base, path)
	if errors.Is(err, fs.ErrNotExist) {
		return notRegistered, nil
	}
	if err != nil {
		return notRegistered, err
	}
	var s struct {
		EnabledPlugins map[string]any `json:"enabledPlugins"`
		Hooks          map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(data, &s) != nil {
		return notRegistered, nil
	}
	for _, e := range s.Hooks["Stop"] {
		for _, h := range e.Hooks {
			if strings.HasPrefix(strings.TrimSpace(h.Command), "taskie hook stop") {
				return byHook, nil
			}
		}
	}
	if v, ok := s.EnabledPlugins[install.PluginID]; ok && v == true {
		return byPlugin, nil
	}
	return notRegistered, nil
}

// installedPlugins is Claude Code's own record of the plugins it installed
// (what `claude plugin list` shows).
func installedPlugins(home string) string {
	return filepath.Join(home, ".claude", "plugins", "installed_plugins.json")
}

// pluginInstalled reports whether Claude Code's records hold an install of
// taskie's plugin for the user (project false) or for the project at root.
// The file lists installs per plugin, as a list or (older) one object.
func pluginInstalled(home, root string, project bool) bool {
	data, err := install.ReadFile("", installedPlugins(home))
	if err != nil {
		return false
	}
	var f struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if json.Unmarshal(data, &f) != nil {
		return false
	}
	raw, ok := f.Plugins[install.PluginID]
	if !ok {
		return false
	}
	type record struct {
		Scope       string `json:"scope"`
		ProjectPath string `json:"projectPath"`
	}
	var recs []record
	if json.Unmarshal(raw, &recs) != nil {
		var one record
		if json.Unmarshal(raw, &one) != nil {
			return false
		}
		recs = []record{one}
	}
	for _, r := range recs {
		switch {
		case !project && (r.Scope == "" || r.Scope == install.ScopeUser):
			return true
		case project && r.Scope != "" && r.Scope != install.ScopeUser && (r.ProjectPath == "" || sameDir(r.ProjectPath, root)):
			return true
		}
	}
	return false
}

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// configTrust reports the settings that run a program which the
// repository's config sets but the user has not trusted (docs/configuration.md#trust): they are
// ignored, and the hook runs no review, until the user trusts the file.
func configTrust(cfg config.Config) Check {
	if len(cfg.Untrusted) == 0 {
		return Check{Name: "config trust", OK: true, Detail: "no untrusted setting that runs a program"}
	}
	runs := "which runs a program"
	if len(cfg.Untrusted) > 1 {
		runs = "which run programs"
	}
	return Check{Name: "config trust", Detail: fmt.Sprintf("%s sets %s, %s, but you have not trusted this file (or it changed since): ignored, and no review runs",
		cfg.UntrustedFile, strings.Join(cfg.Untrusted, " and "), runs),
		Fix: "read " + cfg.UntrustedFile + ", then run `taskie trust`"}
}

// reviewer checks the CLI of every reviewer the rotation uses (a mixed
// rotation such as claude:opus, codex:gpt-5.5 needs both) and its login.
// reviewer_command stands in for the configured reviewer's CLI only.
func reviewer(e Env, cfg config.Config, ag agents) []Check {
	var out []Check
	adapters := review.Adapters(cfg.Reviewer, cfg.Models)
	for _, adapter := range adapters {
		name := adapter
		if cmd := review.CommandFor(cfg.Reviewer, adapter, cfg.ReviewerCommand); len(cmd) > 0 {
			name = cmd[0]
		}
		suffix := ""
		if len(adapters) > 1 {
			suffix = " (" + adapter + ")"
		}
		p, err := e.LookPath(name)
		if err != nil {
			detail := fmt.Sprintf("%q (reviewer %q) is not on PATH: reviews cannot run", name, adapter)
			if adapter != cmp.Or(cfg.Reviewer, "claude") {
				detail = fmt.Sprintf("%q is not on PATH, and the models rotation sends reviews to %s: those reviews cannot run", name, adapter)
			}
			fix := "npm install -g @anthropic-ai/claude-code"
			switch {
			case adapter == "codex":
				fix = "npm install -g @openai/codex"
			case len(adapters) > 1:
				fix += "   (or drop the claude entries from \"models\")"
			case name == "claude" && ag.codexOnly():
				detail += "; this is a Codex setup (codex here, Claude Code not)"
				fix = `review with Codex: set "reviewer": "codex" in .taskie/config.json (or in ~/.config/taskie/config.json for every project)`
			}
			if adapter == "codex" && len(adapters) > 1 {
				fix += "   (or drop the codex entries from \"models\")"
			}
			out = append(out, Check{Name: "reviewer CLI" + suffix, Detail: detail, Fix: fix})
			continue
		}
		out = append(out, Check{Name: "reviewer CLI" + suffix, OK: true, Detail: p})
		c := login(e, adapter, p)
		c.Name += suffix
		out = append(out, c)
	}
	return out
}

// login asks the reviewer CLI whether it is logged in, where it can tell.
func login(e Env, reviewer, path string) Check {
	if reviewer == "claude" && e.Getenv("ANTHROPIC_API_KEY") != "" {
		return Check{Name: "reviewer login", OK: true, Detail: "ANTHROPIC_API_KEY is set"}
	}
	args, fix := []string{"auth", "status"}, "claude auth login"
	if reviewer == "codex" {
		args, fix = []string{"login", "status"}, "codex login"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "TASKIE_HOOK_SKIP=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Check{Name: "reviewer login", Detail: fmt.Sprintf("`%s %s` failed: %s", reviewer, strings.Join(args, " "), firstLine(string(out), err)), Fix: fix}
	}
	return Check{Name: "reviewer login", OK: true, Detail: firstLine(string(out), nil)}
}

// firstLine squeezes a command's output into one short line.
func firstLine(s string, err error) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" && err != nil {
		return err.Error()
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// blockCap: Claude Code stops honouring Stop-hook blocks after
// CLAUDE_CODE_STOP_HOOK_BLOCK_CAP consecutive ones; a review cycle may need
// up to max_reviews blocks in a row.
func blockCap(e Env, cfg config.Config, ag agents) Check {
	v := e.Getenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
	need := cfg.MaxReviews + 1
	if ag.codexOnly() {
		return Check{Name: "block cap", OK: true, Detail: fmt.Sprintf("Codex has no cap on consecutive blocks; taskie's block_cap (%d) bounds the loop", cfg.BlockCap)}
	}
	if v == "" {
		return Check{Name: "block cap", OK: true, Detail: "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP not set (Claude Code's default applies)"}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < need {
		return Check{Name: "block cap", Detail: fmt.Sprintf("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=%s is lower than a review cycle needs (%d blocks for max_reviews %d)", v, need, cfg.MaxReviews),
			Fix: fmt.Sprintf("export CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=%d", need)}
	}
	return Check{Name: "block cap", OK: true, Detail: "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=" + v}
}

func plans(r *plan.Repo, now clock.Clock) []Check {
	ids, err := r.Plans()
	if err != nil {
		return []Check{{Name: "plans", Detail: err.Error(), Fix: "check " + r.PlansDir()}}
	}
	var out []Check
	for _, id := range ids {
		p, err := implied.Get(r, id, now)
		if err != nil {
			out = append(out, Check{Name: "plan " + id, Detail: err.Error(), Fix: "remove or fix " + filepath.Join(r.PlansDir(), id)})
			continue
		}
		vs := implied.Validate(p)
		if len(vs) > 0 {
			out = append(out, planCheck(id, vs))
			continue
		}
		out = append(out, Check{Name: "plan " + id, OK: true, Detail: "valid"})
	}
	return out
}

// planCheck reports a plan that breaks validation rules. A bad state.json
// (rule 8) does not block the agent, but taskie cannot automate the plan
// until it is fixed, so it fails the check too, with its own fix.
func planCheck(id string, vs []plan.Violation) Check {
	c := Check{Name: "plan " + id, Detail: fmt.Sprintf("%d violation(s), first: %s", len(vs), vs[0]),
		Fix: "taskie validate " + id + " lists them; `taskie help validation` explains each rule"}
	for _, v := range vs {
		if v.Rule == 8 {
			c.Detail = fmt.Sprintf("state.json: %s", v.Msg)
			if len(vs) > 1 {
				c.Detail += fmt.Sprintf(" (and %d more violation(s))", len(vs)-1)
			}
			c.Fix = fmt.Sprintf("fix .taskie/plans/%s/state.json by hand (`taskie validate %s` re-checks it), or rebuild it from the event log: taskie recover %s --write --force", id, id, id)
			break
		}
	}
	return c
}

// projectMarketplace checks that the plugin copy a project's committed
// settings name (`taskie install claude --scope project`) exists: a fresh
// clone has the settings but not the git-ignored copy.
func projectMarketplace(root string) (Check, bool) {
	if root == "" {
		return Check{}, false
	}
	data, err := install.ReadFile(root, filepath.Join(root, ".claude", "settings.json"))
	if err != nil {
		return Check{}, false // the agent settings check reports a file it cannot read
	}
	var s struct {
		Markets map[string]struct {
			Source struct {
				Source string `json:"source"`
				Path   string `json:"path"`
			} `json:"source"`
		} `json:"extraKnownMarketplaces"`
	}
	if json.Unmarshal(data, &s) != nil {
		return Check{}, false
	}
	m, ok := s.Markets[install.Marketplace]
	if !ok || m.Source.Source != "directory" || m.Source.Path == "" {
		return Check{}, false
	}
	dir, base := m.Source.Path, ""
	if !filepath.IsAbs(dir) {
		dir, base = filepath.Join(root, dir), root
	}
	if !install.Exists(base, filepath.Join(dir, ".claude-plugin", "marketplace.json")) {
		return Check{Name: "plugin copy", Detail: fmt.Sprintf(".claude/settings.json names the taskie plugin at %s, which is missing (a fresh clone: the copy is git-ignored)", m.Source.Path),
			Fix: "taskie install claude --scope project"}, true
	}
	return Check{Name: "plugin copy", OK: true, Detail: m.Source.Path}, true
}
