package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// Scopes.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
)

// Target says where to install: the user's home or a project root.
type Target struct {
	Scope     string
	Home      string // the user's home directory
	Root      string // the project root (project scope)
	CodexHome string // $CODEX_HOME, default Home/.codex
}

func (t Target) base() (string, error) {
	switch t.Scope {
	case ScopeUser, "":
		return t.Home, nil
	case ScopeProject:
		return t.Root, nil
	}
	return "", fmt.Errorf("unknown scope %q: use user or project", t.Scope)
}

// The plugin is registered as taskie@taskie from a local marketplace.
const (
	Marketplace = "taskie"
	PluginID    = "taskie@taskie"
	hookPrefix  = "taskie hook "
)

// ClaudeSettings is the settings file install edits for a scope.
func (t Target) ClaudeSettings() (string, error) {
	b, err := t.base()
	return filepath.Join(b, ".claude", "settings.json"), err
}

// ClaudeMarketplace is the directory holding the plugin's local marketplace.
func (t Target) ClaudeMarketplace() (string, error) {
	b, err := t.base()
	return filepath.Join(b, ".taskie", "claude-marketplace"), err
}

// marketplaceRel is the marketplace directory as a project's settings name
// it: relative to the project root, so that .claude/settings.json can be
// committed and works in every clone.
const marketplaceRel = "./.taskie/claude-marketplace"

// marketplaceSource is the path settings.json gives the marketplace:
// absolute for the user scope, relative to the project for --scope project.
func (t Target) marketplaceSource() (string, error) {
	if t.Scope == ScopeProject {
		return marketplaceRel, nil
	}
	return t.ClaudeMarketplace()
}

const marketplaceJSON = `{
  "name": "taskie",
  "owner": {"name": "taskie"},
  "plugins": [{"name": "taskie", "source": "./plugin", "description": "Stateful plans and an automatic independent review loop, driven by the taskie binary."}]
}
`

// Claude installs the plugin: the plugin files in a local marketplace, and
// in settings.json the marketplace plus the enabled plugin.
func Claude(t Target, assets fs.FS) ([]Change, error) {
	mp, err := t.ClaudeMarketplace()
	if err != nil {
		return nil, err
	}
	settings, _ := t.ClaudeSettings()
	base := t.repoBase(mp)
	// Check what install will write before writing anything.
	if _, err := readFile(t.repoBase(settings), settings); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := checkDir(base, mp); err != nil {
		return nil, err
	}
	changes, err := writeTree(assets, "plugin", base, filepath.Join(mp, "plugin"))
	if err != nil {
		return changes, err
	}
	c, err := writeIfChanged(base, filepath.Join(mp, ".claude-plugin", "marketplace.json"), []byte(marketplaceJSON))
	if err != nil {
		return changes, err
	}
	changes = append(changes, c)
	if t.Scope == ScopeProject {
		c, err := ignoreMarketplace(t)
		if err != nil {
			return changes, err
		}
		changes = append(changes, c)
	}
	c, err = claudeSettings(t, settings)
	return append(changes, c), err
}

// claudeSettings registers the marketplace and enables the plugin in the
// scope's settings.json.
func claudeSettings(t Target, settings string) (Change, error) {
	path, err := t.marketplaceSource()
	if err != nil {
		return Change{}, err
	}
	c, err := editJSON(t.repoBase(settings), settings, func(o *object) error {
		src, _ := json.Marshal(map[string]any{"source": map[string]string{"source": "directory", "path": path}})
		if err := setIn(o, "extraKnownMarketplaces", Marketplace, src); err != nil {
			return err
		}
		return setIn(o, "enabledPlugins", PluginID, json.RawMessage("true"))
	})
	c.What = "marketplace " + Marketplace + ", plugin " + PluginID + " enabled"
	return c, err
}

// UninstallClaude removes what Claude installed and nothing else.
func UninstallClaude(t Target) ([]Change, error) {
	mp, err := t.ClaudeMarketplace()
	if err != nil {
		return nil, err
	}
	settings, _ := t.ClaudeSettings()
	base, sbase := t.repoBase(mp), t.repoBase(settings)
	if err := checkDir(base, mp); err != nil {
		return nil, err
	}
	c, err := editJSON(sbase, settings, func(o *object) error {
		if err := delIn(o, "extraKnownMarketplaces", Marketplace); err != nil {
			return err
		}
		return delIn(o, "enabledPlugins", PluginID)
	})
	if err != nil {
		return nil, err
	}
	changes := []Change{dropEmptyJSON(sbase, c)}
	removeIfEmpty(sbase, filepath.Dir(settings))
	if exists(base, mp) {
		if err := removeTree(base, mp); err != nil {
			return changes, err
		}
		changes = append(changes, Change{Path: mp, Action: "removed"})
	}
	if t.Scope == ScopeProject {
		c, err := unignoreMarketplace(t)
		if err != nil {
			return changes, err
		}
		changes = append(changes, c)
	}
	removeIfEmpty(base, filepath.Dir(mp)) // .taskie, when the plugin was all it held
	return changes, nil
}

// setIn sets o[outer][key] = v.
func setIn(o *object, outer, key string, v json.RawMessage) error {
	c, err := o.child(outer)
	if err != nil {
		return err
	}
	c.set(key, v)
	o.setChild(outer, c)
	return nil
}

// delIn deletes o[outer][key], and o[outer] when it becomes empty.
func delIn(o *object, outer, key string) error {
	if _, ok := o.vals[outer]; !ok {
		return nil
	}
	c, err := o.child(outer)
	if err != nil {
		return err
	}
	c.del(key)
	if len(c.keys) == 0 { // taskie's entry was the last (or the agent's CLI already removed it)
		o.del(outer)
		return nil
	}
	o.setChild(outer, c)
	return nil
}

// editHookList edits o.hooks[event], dropping empty lists and objects.
func editHookList(o *object, event string, fn func([]json.RawMessage) []json.RawMessage) error {
	hooks, err := o.child("hooks")
	if err != nil {
		return err
	}
	var entries []json.RawMessage
	if v, ok := hooks.vals[event]; ok {
		if err := json.Unmarshal(v, &entries); err != nil {
			return fmt.Errorf("hooks.%s is not a list", event)
		}
	}
	entries = fn(entries)
	if len(entries) == 0 {
		hooks.del(event)
	} else {
		b, err := marshalNoEscape(entries)
		if err != nil {
			return err
		}
		hooks.set(event, b)
	}
	if len(hooks.keys) == 0 {
		o.del("hooks")
	} else {
		o.setChild("hooks", hooks)
	}
	return nil
}

// writeTree copies the files under dir of assets to dest, which stays in
// the project root base ("" for the user's own directory).
func writeTree(assets fs.FS, dir, base, dest string) ([]Change, error) {
	var changes []Change
	err := fs.WalkDir(assets, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(assets, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, dir+"/")
		out := filepath.Join(dest, filepath.FromSlash(rel))
		c, err := writeIfChanged(base, out, data)
		changes = append(changes, c)
		return err
	})
	return changes, err
}

func writeIfChanged(base, p string, data []byte) (Change, error) {
	old, err := readFile(base, p)
	switch {
	case err == nil && bytes.Equal(old, data):
		return Change{Path: p, Action: "unchanged"}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fsafe.ErrTooLarge):
		return Change{}, err
	}
	action := "updated"
	if errors.Is(err, fs.ErrNotExist) {
		action = "created"
	}
	return Change{Path: p, Action: action}, writeFileIn(base, p, data, filePerm)
}

// marshalNoEscape marshals v without HTML escapes, so that a hook command
// such as "a > b" stays readable in the file ("a \u003e b" otherwise).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
