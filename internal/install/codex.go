package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/taskie-dev/taskie/internal/domain"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// CodexHooks is the hooks.json install edits: $CODEX_HOME/hooks.json for
// the user scope, .codex/hooks.json in the project for --scope project.
func (t Target) CodexHooks() (string, error) {
	if t.Scope == ScopeProject {
		return filepath.Join(t.Root, ".codex", "hooks.json"), nil
	}
	if _, err := t.base(); err != nil {
		return "", err
	}
	return filepath.Join(t.codexHome(), "hooks.json"), nil
}

// codexHome is $CODEX_HOME (or ~/.codex) with symlinks resolved, the way
// Codex names it in hook trust keys.
func (t Target) codexHome() string { return CodexHome(t.Home, t.CodexHome) }

// CodexSkills is where the skills go: $CODEX_HOME/skills for the user
// scope, .agents/skills in the project for --scope project (where Codex
// 0.169 looks for a repository's skills, from the directory it runs in up
// to the repository root).
func (t Target) CodexSkills() string {
	if t.Scope == ScopeProject {
		return filepath.Join(t.Root, ".agents", "skills")
	}
	return filepath.Join(t.codexHome(), "skills")
}

// CodexConfig is the user's config.toml, where hook trust lives (Codex
// reads trust from the user's file only, also for a project's hooks).
func (t Target) CodexConfig() string { return filepath.Join(t.codexHome(), "config.toml") }

// codexPrompts is where taskie up to 0.x put Codex custom prompts, which
// Codex 0.117.0 stopped reading.
func (t Target) codexPrompts() string { return filepath.Join(t.codexHome(), "prompts") }

// codexKeyFiles are the names Codex may give the hooks file in trust keys:
// the user file under the resolved $CODEX_HOME; a project file under the
// directory Codex was started in, which may be the project's path through
// a symlink or the real one, so both are trusted.
func (t Target) codexKeyFiles(hooks string) []string {
	if t.Scope != ScopeProject {
		return []string{hooks}
	}
	files := []string{hooks}
	if real, err := filepath.EvalSymlinks(filepath.Dir(hooks)); err == nil {
		if r := filepath.Join(real, "hooks.json"); r != hooks {
			files = append(files, r)
		}
	}
	return files
}

// CodexOptions tune the Codex install.
type CodexOptions struct {
	// NoTrust leaves trusting the hooks to the user.
	NoTrust bool
}

// Codex installs the skills and the Stop and SessionStart hooks, and
// trusts those hooks in config.toml (unless opt.NoTrust). Only handlers
// exactly as codex/hooks.json has them are trusted. An event that already
// has a handler looking like taskie's but different (a cloned project's
// .codex/hooks.json may hold "taskie hook stop; …") keeps it untrusted and
// gets no second one: CodexLookalikes lists them for the user to judge.
func Codex(t Target, assets fs.FS, opt CodexOptions) ([]Change, error) {
	hooks, err := t.CodexHooks()
	if err != nil {
		return nil, err
	}
	own, err := CodexOwnHooks(assets)
	if err != nil {
		return nil, err
	}
	base := t.repoBase(hooks)
	// Check what install will write before writing anything.
	if _, err := readFile(base, hooks); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := checkDir(t.repoBase(t.CodexSkills()), t.CodexSkills()); err != nil {
		return nil, err
	}
	changes, err := installSkills(t, assets)
	if err != nil {
		return changes, err
	}
	changes = append(changes, removeLegacyPrompts(t)...)
	want, err := assetHookGroups(assets)
	if err != nil {
		return changes, err
	}
	var added, kept []string
	c, err := editJSON(base, hooks, func(o *object) error {
		for _, event := range sortedKeys(want) {
			if err := editHookList(o, event, func(entries []json.RawMessage) []json.RawMessage {
				for _, e := range entries {
					if own.ownEntry(event, e) {
						added = append(added, event)
						return entries // already there
					}
				}
				for _, e := range entries {
					if own.lookalikeEntry(event, e) {
						kept = append(kept, event)
						return entries // not ours: the user decides (CodexLookalikes)
					}
				}
				added = append(added, event)
				return append(entries, want[event]...)
			}); err != nil {
				return err
			}
		}
		return nil
	})
	c.What = hookSummary(own, added, kept)
	if ok, _ := CodexProjectTrusted(t.CodexConfig(), t.Root); t.Scope == ScopeProject && !ok {
		c.What += "; Codex reads a project's .codex/ only in a trusted project: start codex here and trust it"
	}
	changes = append(changes, c)
	if err != nil || opt.NoTrust {
		return changes, err
	}
	c, err = trustCodexHooks(t, hooks, own)
	return append(changes, c), err
}

// hookSummary says what install did to each event of hooks.json.
func hookSummary(own OwnCodexHooks, added, kept []string) string {
	var parts []string
	for _, e := range []string{"Stop", "SessionStart"} {
		switch {
		case slices.Contains(added, e):
			parts = append(parts, e+" → "+own[e].Command)
		case slices.Contains(kept, e):
			parts = append(parts, e+": kept the taskie-looking hook already there, not trusted")
		}
	}
	return strings.Join(parts, ", ")
}

// trustCodexHooks writes the trust entries of taskie's own hooks in hooks.
func trustCodexHooks(t Target, hooks string, own OwnCodexHooks) (Change, error) {
	var all []CodexHook
	for _, key := range t.codexKeyFiles(hooks) {
		hs, err := CodexHooksIn(t.repoBase(hooks), hooks, key, true)
		if err != nil {
			return Change{}, err
		}
		all = append(all, own.Own(hs)...)
	}
	c, err := editCodexConfig(t.CodexConfig(), func(src string) (string, error) {
		var err error
		for _, h := range all {
			if src, err = setTrust(src, h.Key, h.Hash, "taskie's "+h.Event+" hook ("+h.Command+")"); err != nil {
				return src, err
			}
		}
		return src, nil
	})
	c.What = "trusted " + describeHooks(all)
	return c, err
}

func describeHooks(hs []CodexHook) string {
	seen := map[string]bool{}
	var parts []string
	for _, h := range hs {
		d := fmt.Sprintf("%s (%s)", h.Event, h.Command)
		if !seen[d] {
			seen[d] = true
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, ", ")
}

// CodexTrustLines are the config.toml lines that trust taskie's own hooks
// in the scope's hooks.json: what --no-trust leaves to the user.
func CodexTrustLines(t Target, assets fs.FS) (string, error) {
	hooks, err := t.CodexHooks()
	if err != nil {
		return "", err
	}
	own, err := CodexOwnHooks(assets)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, key := range t.codexKeyFiles(hooks) {
		hs, err := CodexHooksIn(t.repoBase(hooks), hooks, key, true)
		if err != nil {
			return "", err
		}
		for _, h := range own.Own(hs) {
			fmt.Fprintf(&b, "[%s]\ntrusted_hash = %s\n", tomlKey([]string{"hooks", "state", h.Key}), domain.QuoteTOML(h.Hash))
		}
	}
	return b.String(), nil
}

// assetHookGroups reads the hook groups of codex/hooks.json, by event.
func assetHookGroups(assets fs.FS) (map[string][]json.RawMessage, error) {
	data, err := fs.ReadFile(assets, "codex/hooks.json")
	if err != nil {
		return nil, err
	}
	var f struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("codex/hooks.json: %v", err)
	}
	for event, groups := range f.Hooks {
		for i, g := range groups {
			var compact bytes.Buffer
			if err := json.Compact(&compact, g); err != nil {
				return nil, err
			}
			f.Hooks[event][i] = compact.Bytes()
		}
	}
	return f.Hooks, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// installSkills writes codex/skills/taskie-*/ to $CODEX_HOME/skills, and
// removes the taskie skills of an older version that this one no longer has.
func installSkills(t Target, assets fs.FS) ([]Change, error) {
	dest := t.CodexSkills()
	base := t.repoBase(dest)
	files, err := writeTree(assets, "codex/skills", base, dest)
	if err != nil {
		return files, err
	}
	changes := []Change{summarizeSkills(dest, files)}
	have := map[string]bool{}
	entries, _ := fs.ReadDir(assets, "codex/skills")
	for _, e := range entries {
		have[e.Name()] = true
	}
	for _, dir := range ownSkills(base, dest) {
		if !have[filepath.Base(dir)] {
			if err := removeTree(base, dir); err != nil {
				return changes, err
			}
			changes = append(changes, Change{Path: dir, Action: "removed", What: "no longer a taskie action"})
		}
	}
	return changes, nil
}

// summarizeSkills folds the per-file changes of the skills into one line.
func summarizeSkills(dest string, files []Change) Change {
	n := map[string]int{}
	for _, f := range files {
		n[f.Action]++
	}
	c := Change{Path: filepath.Join(dest, "taskie-*"), Action: "unchanged",
		What: fmt.Sprintf("%d skills: $taskie-new-plan, $taskie-continue-plan, …", len(files))}
	switch {
	case n["created"] == len(files):
		c.Action = "created"
	case n["created"]+n["updated"] > 0:
		c.Action = "updated"
	}
	return c
}

// skillMarker is in every SKILL.md taskie generates.
const skillMarker = "Generated by codex/generate.sh"

// ownSkills lists the taskie-* skill directories under dir that taskie
// wrote (a link there is not one).
func ownSkills(base, dir string) []string {
	entries, _ := listDir(base, dir)
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "taskie-") {
			continue
		}
		d := filepath.Join(dir, e.Name())
		if data, err := readFile(base, filepath.Join(d, "SKILL.md")); err == nil && bytes.Contains(data, []byte(skillMarker)) {
			out = append(out, d)
		}
	}
	return out
}

// removeLegacyPrompts removes the custom prompts older taskie versions
// installed: Codex 0.117.0 dropped custom prompts, so they are dead files.
func removeLegacyPrompts(t Target) []Change {
	var out []Change
	dir := t.codexPrompts()
	entries, _ := listDir("", dir)
	found := false
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "taskie-") || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		found = true
		m := filepath.Join(dir, e.Name())
		if removeFile("", m) == nil {
			out = append(out, Change{Path: m, Action: "removed", What: "old custom prompt; Codex uses the skills now"})
		}
	}
	if found {
		removeIfEmpty("", dir)
	}
	return out
}

// UninstallCodex removes what install adds: the hook entries exactly as
// codex/hooks.json has them and their trust entries, the skills, and the
// old prompts. A taskie-looking hook install did not write stays, with its
// trust, as the user's own hooks do; a hook that moves up in hooks.json
// keeps its trust under its new key.
func UninstallCodex(t Target, assets fs.FS) ([]Change, error) {
	hooks, err := t.CodexHooks()
	if err != nil {
		return nil, err
	}
	own, err := CodexOwnHooks(assets)
	if err != nil {
		return nil, err
	}
	base := t.repoBase(hooks)
	skills := t.CodexSkills()
	if err := checkDir(t.repoBase(skills), skills); err != nil {
		return nil, err
	}
	keyFiles := t.codexKeyFiles(hooks)
	before := map[string][]CodexHook{}
	for _, k := range keyFiles {
		hs, err := CodexHooksIn(base, hooks, k, true)
		if err != nil {
			return nil, err
		}
		before[k] = hs
	}
	c, removed, err := removeOwnHooks(base, hooks, own)
	if err != nil {
		return nil, err
	}
	changes := []Change{dropEmptyJSON(base, c)}
	cc, err := untrustRemoved(t.CodexConfig(), base, hooks, keyFiles, before, removed)
	if err != nil {
		return changes, err
	}
	changes = append(changes, cc)
	if t.Scope == ScopeProject {
		removeIfEmpty(base, filepath.Dir(hooks))
	}
	more, err := removeSkills(t)
	changes = append(changes, more...)
	if err != nil {
		return changes, err
	}
	changes = append(changes, removeLegacyPrompts(t)...)
	removeIfEmpty("", t.codexHome())
	return changes, nil
}

// removeOwnHooks removes from hooks.json the entries exactly as taskie
// writes them, and says which it removed: event → group index.
func removeOwnHooks(base, hooks string, own OwnCodexHooks) (Change, map[string]map[int]bool, error) {
	removed := map[string]map[int]bool{}
	c, err := editJSON(base, hooks, func(o *object) error {
		hooksObj, err := o.child("hooks")
		if err != nil {
			return err
		}
		for _, event := range append([]string(nil), hooksObj.keys...) {
			if err := editHookList(o, event, func(entries []json.RawMessage) []json.RawMessage {
				var keep []json.RawMessage
				for i, e := range entries {
					if own.ownEntry(event, e) {
						if removed[event] == nil {
							removed[event] = map[int]bool{}
						}
						removed[event][i] = true
						continue
					}
					keep = append(keep, e)
				}
				return keep
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return c, removed, err
}

// untrustRemoved drops the trust of the removed hooks from config.toml and
// moves the trust of the hooks that stay to their new keys.
func untrustRemoved(config, base, hooks string, keyFiles []string, before map[string][]CodexHook, removed map[string]map[int]bool) (Change, error) {
	gone := func(h CodexHook) bool { return removed[h.Event][h.Group] }
	return editCodexConfig(config, func(src string) (string, error) {
		for _, k := range keyFiles {
			after, err := CodexHooksIn(base, hooks, k, true)
			if err != nil {
				return src, err
			}
			for _, h := range before[k] { // first: another hook may move into taskie's old key
				if gone(h) {
					if src, err = dropTrust(src, h.Key); err != nil {
						return src, err
					}
				}
			}
			src = rekeyHooks(src, before[k], after, gone)
		}
		return src, nil
	})
}

// rekeyHooks moves the trust of the hooks that stay (the user's, and
// lookalikes) whose position changed when taskie's entries were removed.
func rekeyHooks(src string, before, after []CodexHook, gone func(CodexHook) bool) string {
	b := map[string][]CodexHook{}
	for _, h := range before {
		if !gone(h) {
			b[h.Event] = append(b[h.Event], h)
		}
	}
	a := map[string][]CodexHook{}
	for _, h := range after {
		a[h.Event] = append(a[h.Event], h)
	}
	for event, hs := range b {
		for i, h := range hs {
			if i < len(a[event]) && a[event][i].Key != h.Key {
				src, _ = renameTrust(src, h.Key, a[event][i].Key)
			}
		}
	}
	return src
}

// dropEmptyJSON removes a settings or hooks file that uninstall left as {}.
func dropEmptyJSON(base string, c Change) Change {
	data, err := readFile(base, c.Path)
	if err != nil || strings.TrimSpace(string(data)) != "{}" {
		return c
	}
	if removeFile(base, c.Path) == nil {
		c.Action = "removed"
	}
	return c
}

// removeSkills removes the skills install wrote: the taskie-<action>
// directories of this version and older ones, each carrying the marker
// of the generator; a user's skill of the same name without it stays.
func removeSkills(t Target) ([]Change, error) {
	var out []Change
	dir := t.CodexSkills()
	base := t.repoBase(dir)
	for _, d := range ownSkills(base, dir) {
		if err := removeTree(base, d); err != nil {
			return out, err
		}
		out = append(out, Change{Path: d, Action: "removed"})
	}
	removeIfEmpty(base, dir)
	if t.Scope == ScopeProject {
		removeIfEmpty(base, filepath.Dir(dir)) // .agents, when the skills were all it held
	}
	return out, nil
}

// CodexProjectTrusted reports whether config.toml trusts the project root
// ([projects."<root>"] trust_level = "trusted"): Codex ignores a project's
// .codex/ otherwise.
func CodexProjectTrusted(configToml, root string) (bool, error) {
	data, err := readFile("", configToml)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	doc, err := scanTOML(string(data))
	if err != nil {
		return false, err
	}
	roots := []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		roots = append(roots, real)
	}
	for _, e := range doc.entries {
		p := e.path()
		if len(p) == 3 && p[0] == "projects" && p[2] == "trust_level" && e.isStr && e.str == "trusted" {
			for _, r := range roots {
				if p[1] == r {
					return true, nil
				}
			}
		}
	}
	return false, nil
}
