package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Codex runs a hook from hooks.json only when the user has trusted it: an
// entry in the user's config.toml
//
//	[hooks.state."<abs hooks.json>:<event>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// whose hash is that of the hook's normalized identity. `codex exec` skips
// an untrusted (or changed) hook without a word. What follows recomputes
// that identity the way @openai/codex 0.169.0 does (codex-rs
// hooks/src/engine/discovery.rs command_hook_hash and
// config/src/fingerprint.rs version_for_toml): the object
//
//	{"event_name":"stop","hooks":[{"async":false,"command":"…","timeout":1800,"type":"command"}]}
//
// (plus "matcher" for the events that use one, "statusMessage" when set),
// absent fields left out, keys sorted, serialized compactly as serde_json
// does, then sha256. The result was checked against the currentHash that
// `codex app-server`'s hooks/list reports for the same file.

// codexEventLabels maps a hooks.json event name to Codex's key label.
var codexEventLabels = map[string]string{
	"PreToolUse":        "pre_tool_use",
	"PermissionRequest": "permission_request",
	"PostToolUse":       "post_tool_use",
	"PreCompact":        "pre_compact",
	"PostCompact":       "post_compact",
	"SessionStart":      "session_start",
	"UserPromptSubmit":  "user_prompt_submit",
	"Stop":              "stop",
}

// codexMatcherEvents are the events whose matcher is part of the identity;
// Codex ignores a matcher on the others.
var codexMatcherEvents = map[string]bool{
	"PreToolUse": true, "PermissionRequest": true, "PostToolUse": true, "SessionStart": true,
}

// codexDefaultTimeout is what Codex assumes for a command hook without one.
const codexDefaultTimeout = 600

// CodexHandler is one command handler of a Codex hooks.json, as written.
type CodexHandler struct {
	Type          string  `json:"type"`
	Command       string  `json:"command"`
	Timeout       *int64  `json:"timeout,omitempty"`
	Async         bool    `json:"async,omitempty"`
	StatusMessage *string `json:"statusMessage,omitempty"`
}

type codexGroup struct {
	Matcher *string        `json:"matcher,omitempty"`
	Hooks   []CodexHandler `json:"hooks"`
}

// CodexHookHash is the trusted_hash Codex expects for handler h of an event
// (a hooks.json name such as "Stop") in a group with the given matcher.
func CodexHookHash(event string, matcher *string, h CodexHandler) string {
	timeout := int64(codexDefaultTimeout)
	if h.Timeout != nil {
		timeout = max(*h.Timeout, 1)
	}
	handler := map[string]any{"type": "command", "command": h.Command, "timeout": timeout, "async": h.Async}
	if h.StatusMessage != nil {
		handler["statusMessage"] = *h.StatusMessage
	}
	identity := map[string]any{"event_name": codexEventLabels[event], "hooks": []any{handler}}
	if matcher != nil && codexMatcherEvents[event] {
		identity["matcher"] = *matcher
	}
	var b strings.Builder
	canonicalJSON(&b, identity)
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CodexHookKey is the key of a handler's entry under [hooks.state].
func CodexHookKey(hooksFile, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", hooksFile, codexEventLabels[event], group, handler)
}

// canonicalJSON writes v compactly with sorted keys, escaping strings the
// way serde_json does (only ", \ and control characters; no HTML escapes).
func canonicalJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonString(b, k)
			b.WriteByte(':')
			canonicalJSON(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			canonicalJSON(b, x)
		}
		b.WriteByte(']')
	case string:
		jsonString(b, v)
	case bool:
		fmt.Fprint(b, v)
	case int64:
		fmt.Fprint(b, v)
	default:
		panic(fmt.Sprintf("canonicalJSON: unexpected %T", v))
	}
}

func jsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// CodexHook is one of taskie's handlers in a Codex hooks.json, with the
// trust entry Codex needs to run it.
type CodexHook struct {
	File    string `json:"file"`  // the hooks.json, as Codex names it in the key
	Event   string `json:"event"` // Stop, SessionStart
	Group   int    `json:"group"`
	Handler int    `json:"handler"`
	Command string `json:"command"`
	Key     string `json:"key"`  // hooks.state key
	Hash    string `json:"hash"` // the trusted_hash that makes Codex run it
}

// CodexHooksIn lists the command handlers of a hooks.json that run a taskie
// hook (all of them when all is true), with their trust keys and hashes.
// keyFile is the path Codex uses in the keys; base is the project root the
// file stays in, "" for the user's own file. A missing file has none. The
// error names the file.
func CodexHooksIn(base, hooksFile, keyFile string, all bool) ([]CodexHook, error) {
	data, err := readFile(base, hooksFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	hs, err := codexHooksOf(data, keyFile, all)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", hooksFile, err)
	}
	return hs, nil
}

func codexHooksOf(data []byte, keyFile string, all bool) ([]CodexHook, error) {
	var f struct {
		Hooks map[string][]codexGroup `json:"hooks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	events := make([]string, 0, len(f.Hooks))
	for e := range f.Hooks {
		events = append(events, e)
	}
	sort.Strings(events)
	var out []CodexHook
	for _, event := range events {
		if codexEventLabels[event] == "" {
			continue
		}
		for g, group := range f.Hooks[event] {
			for h, handler := range group.Hooks {
				if handler.Type != "command" || strings.TrimSpace(handler.Command) == "" {
					continue
				}
				if !all && !strings.HasPrefix(strings.TrimSpace(handler.Command), hookPrefix) {
					continue
				}
				out = append(out, CodexHook{File: keyFile, Event: event, Group: g, Handler: h, Command: handler.Command,
					Key: CodexHookKey(keyFile, event, g, h), Hash: CodexHookHash(event, group.Matcher, handler)})
			}
		}
	}
	return out, nil
}

// CodexHome is the directory Codex uses: $CODEX_HOME (symlinks resolved,
// as Codex resolves them) or ~/.codex.
func CodexHome(home, env string) string {
	dir := env
	if dir == "" {
		dir = filepath.Join(home, ".codex")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}
