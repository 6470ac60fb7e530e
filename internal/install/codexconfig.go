package install

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/taskie-dev/taskie/internal/domain"
)

// trustComment marks the tables install adds to config.toml, so uninstall
// can take the comment away with them.
const trustComment = "# Added by `taskie install codex`: lets Codex run taskie's hook."

var hooksState = []string{"hooks", "state"}

// CodexConfig is what taskie reads from Codex's config.toml.
type CodexConfig struct {
	// States are the [hooks.state."<key>"] entries, by key.
	States map[string]HookState
	// HooksOff is set when [features] turns hooks off (hooks or codex_hooks = false).
	HooksOff string
}

// HookState is one [hooks.state] entry.
type HookState struct {
	TrustedHash string
	Disabled    bool // enabled = false
}

// ReadCodexConfig reads config.toml; a missing file is empty.
func ReadCodexConfig(path string) (CodexConfig, error) {
	cfg := CodexConfig{States: map[string]HookState{}}
	data, err := readFile("", path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	doc, err := scanTOML(string(data))
	if err != nil {
		return cfg, fmt.Errorf("%s: %v", path, err)
	}
	for _, e := range doc.entries {
		p := e.path()
		switch {
		case len(p) == 4 && hasPrefix(p, hooksState):
			st := cfg.States[p[2]]
			switch {
			case p[3] == "trusted_hash" && e.isStr:
				st.TrustedHash = e.str
			case p[3] == "enabled":
				st.Disabled = strings.TrimSpace(doc.src[e.valStart:e.valEnd]) == "false"
			}
			cfg.States[p[2]] = st
		case len(p) == 2 && p[0] == "features" && (p[1] == "hooks" || p[1] == "codex_hooks"):
			if strings.TrimSpace(doc.src[e.valStart:e.valEnd]) == "false" {
				cfg.HooksOff = "[features] " + p[1] + " = false"
			}
		}
	}
	return cfg, nil
}

// setTrust makes config.toml trust one hook: it sets
// hooks.state."<key>".trusted_hash, in place when the entry exists, else in
// a new table at the end. Everything else is left byte for byte.
func setTrust(src, key, hash, what string) (string, error) {
	doc, err := scanTOML(src)
	if err != nil {
		return src, err
	}
	target := append(append([]string{}, hooksState...), key)
	if out, done, err := trustInPlace(doc, src, target, hash); done || err != nil {
		return out, err
	}
	out := src
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if out != "" {
		out += "\n"
	}
	comment := trustComment
	if what != "" {
		comment = strings.Replace(comment, "taskie's hook", what, 1)
	}
	return out + comment + "\n[" + tomlKey(target) + "]\ntrusted_hash = " + domain.QuoteTOML(hash) + "\n", nil
}

// trustInPlace sets trusted_hash of table target where the document
// already has it, its table or dotted keys in it (done); an inline table
// is refused.
func trustInPlace(doc *tomlDoc, src string, target []string, hash string) (out string, done bool, err error) {
	for _, e := range doc.entries {
		if samePath(e.path(), append(target, "trusted_hash")) {
			if e.isStr && e.str == hash {
				return src, true, nil
			}
			return src[:e.valStart] + domain.QuoteTOML(hash) + src[e.valEnd:], true, nil
		}
	}
	for _, e := range doc.entries {
		p := e.path()
		if e.isTable && hasPrefix(target, p) || e.inline && hasPrefix(p, target[:2]) {
			return src, false, fmt.Errorf("%s is written as an inline table, which taskie does not edit", tomlKey(p[:min(len(p), 3)]))
		}
	}
	for _, h := range doc.headers {
		if samePath(h.path, target) && !h.array {
			return src[:h.end] + "trusted_hash = " + domain.QuoteTOML(hash) + "\n" + src[h.end:], true, nil
		}
	}
	// The table may exist through dotted keys ([hooks.state] "k".enabled = false):
	// add trusted_hash next to them, in the same table.
	for _, e := range doc.entries {
		if !e.inline && hasPrefix(e.path(), target) && hasPrefix(target, e.table) {
			line := tomlKey(append(append([]string{}, target[len(e.table):]...), "trusted_hash")) + " = " + domain.QuoteTOML(hash) + "\n"
			return src[:e.end] + line + src[e.end:], true, nil
		}
	}
	return src, false, nil
}

// dropTrust removes hooks.state."<key>".trusted_hash, then its table when
// nothing else is left in it, with the comment and blank line install put
// before it.
func dropTrust(src, key string) (string, error) {
	doc, err := scanTOML(src)
	if err != nil {
		return src, err
	}
	target := append(append([]string{}, hooksState...), key)
	for i := len(doc.entries) - 1; i >= 0; i-- {
		e := doc.entries[i]
		if !e.inline && samePath(e.path(), append(target, "trusted_hash")) {
			src = src[:e.start] + src[e.end:]
		}
	}
	if doc, err = scanTOML(src); err != nil {
		return src, err
	}
	for _, e := range doc.entries {
		if hasPrefix(e.path(), target) {
			return src, nil // the user keeps other settings of this hook
		}
	}
	for _, h := range doc.headers {
		if !samePath(h.path, target) {
			continue
		}
		start := h.start
		if c := finalLine(src[:start]); start > 0 && strings.HasPrefix(c, trustCommentPrefix) {
			start -= len(c) + 1
			if strings.HasSuffix(src[:start], "\n\n") {
				start-- // the blank line install put before the comment
			}
		}
		return src[:start] + src[h.end:], nil
	}
	return src, nil
}

// trustCommentPrefix recognizes trustComment in whatever form it was written.
const trustCommentPrefix = "# Added by `taskie install codex`"

// finalLine is the last line of s, which ends with a newline.
func finalLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}

// renameTrust moves a [hooks.state."<old>"] table to the key new: a user's
// hook whose position in hooks.json changed keeps its trust.
func renameTrust(src, oldKey, newKey string) (string, bool) {
	doc, err := scanTOML(src)
	if err != nil {
		return src, false
	}
	old := append(append([]string{}, hooksState...), oldKey)
	for _, h := range doc.headers {
		if samePath(h.path, old) && !h.array {
			header := "[" + tomlKey(append(append([]string{}, hooksState...), newKey)) + "]\n"
			return src[:h.start] + header + src[h.end:], true
		}
	}
	return src, false
}

// editCodexConfig applies fn to config.toml (missing = empty) and writes
// the result when it changed, keeping the file's mode and writing through
// a symlink (a dotfiles manager's link stays a link). A file that ends up
// empty is removed.
func editCodexConfig(path string, fn func(string) (string, error)) (Change, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	data, err := readFile("", path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	existed := err == nil
	out, err := fn(string(data))
	if err != nil {
		return Change{}, fmt.Errorf("%s: %v", path, err)
	}
	if out == string(data) {
		return Change{Path: path, Action: "unchanged"}, nil
	}
	if _, err := scanTOML(out); err != nil { // never write what Codex could not read
		return Change{}, fmt.Errorf("%s: taskie's edit would break the file (%v); nothing written", path, err)
	}
	if strings.TrimSpace(out) == "" {
		if !existed {
			return Change{Path: path, Action: "unchanged"}, nil
		}
		return Change{Path: path, Action: "removed"}, removeFile("", path)
	}
	action := "updated"
	if !existed {
		action = "created"
	}
	return Change{Path: path, Action: action}, writeFileIn("", path, []byte(out), secretPerm)
}
