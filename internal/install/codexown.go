package install

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
)

// A hooks.json may come with a cloned repository (.codex/hooks.json), so a
// command that merely starts with "taskie hook" proves nothing: "taskie
// hook stop; curl … | sh" starts that way too. taskie trusts, and
// uninstall removes, only the handlers that are exactly what install
// writes (codex/hooks.json); anything else that looks like taskie's is
// shown to the user, who decides.

// HookKind says whose a hooks.json handler is.
type HookKind int

const (
	// HookOther is not taskie's: the user's own hook.
	HookOther HookKind = iota
	// HookOwn is exactly the handler install writes for its event: same
	// command, timeout and every other field Codex hashes.
	HookOwn
	// HookLookalike runs a command starting with "taskie hook" but is not
	// what install writes: someone else wrote or changed it.
	HookLookalike
)

// String names the value in test failures (%v); taskie prints none.
func (k HookKind) String() string {
	return [...]string{"other", "own", "lookalike"}[k]
}

// OwnCodexHooks are the handlers install writes, by hooks.json event
// ("Stop", "SessionStart"), with their trust hashes.
type OwnCodexHooks map[string]CodexHook

// CodexOwnHooks reads them from codex/hooks.json in assets.
func CodexOwnHooks(assets fs.FS) (OwnCodexHooks, error) {
	data, err := fs.ReadFile(assets, "codex/hooks.json")
	if err != nil {
		return nil, err
	}
	hs, err := codexHooksOf(data, "codex/hooks.json", true)
	if err != nil {
		return nil, fmt.Errorf("codex/hooks.json: %v", err)
	}
	own := OwnCodexHooks{}
	for _, h := range hs {
		own[h.Event] = h
	}
	return own, nil
}

// Kind classifies one handler found in a hooks.json.
func (own OwnCodexHooks) Kind(h CodexHook) HookKind {
	switch {
	case own[h.Event].Hash != "" && own[h.Event].Hash == h.Hash:
		return HookOwn
	case looksLikeTaskie(h.Command):
		return HookLookalike
	}
	return HookOther
}

// Own keeps the handlers of hs that are exactly what install writes.
func (own OwnCodexHooks) Own(hs []CodexHook) []CodexHook {
	return own.filter(hs, HookOwn)
}

// Lookalikes keeps the handlers of hs that look like taskie's but are not
// what install writes.
func (own OwnCodexHooks) Lookalikes(hs []CodexHook) []CodexHook {
	return own.filter(hs, HookLookalike)
}

func (own OwnCodexHooks) filter(hs []CodexHook, kind HookKind) []CodexHook {
	var out []CodexHook
	for _, h := range hs {
		if own.Kind(h) == kind {
			out = append(out, h)
		}
	}
	return out
}

// looksLikeTaskie reports whether a command claims to run a taskie hook.
func looksLikeTaskie(command string) bool {
	return strings.HasPrefix(strings.TrimSpace(command), hookPrefix)
}

// plainTaskieHook matches a command that runs a taskie hook and nothing
// else: `taskie hook <name>` with plain arguments, no shell syntax.
// (compiled at first use: every taskie process, the hooks included, would
// pay for it at start-up).
var plainTaskieHook = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^taskie hook [a-z-]+( [A-Za-z0-9_./=:-]+)*$`)
})

// RunsOnlyTaskie reports whether command runs a taskie hook and nothing
// else. A lookalike that does not is the sign of a planted hook.
func RunsOnlyTaskie(command string) bool {
	return plainTaskieHook().MatchString(strings.TrimSpace(command))
}

// ownEntry reports whether a hooks.json group for event is exactly one
// install writes: every handler is taskie's own.
func (own OwnCodexHooks) ownEntry(event string, e json.RawMessage) bool {
	var g struct {
		Matcher *string           `json:"matcher"`
		Hooks   []json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(e, &g) != nil || len(g.Hooks) == 0 || own[event].Hash == "" {
		return false
	}
	for _, raw := range g.Hooks {
		var h CodexHandler
		if json.Unmarshal(raw, &h) != nil || h.Type != "command" || CodexHookHash(event, g.Matcher, h) != own[event].Hash {
			return false
		}
	}
	return true
}

// lookalikeEntry reports whether a group for event holds a handler that
// looks like taskie's without being exactly what install writes.
func (own OwnCodexHooks) lookalikeEntry(event string, e json.RawMessage) bool {
	data, err := json.Marshal(map[string]any{"hooks": map[string][]json.RawMessage{event: {e}}})
	if err != nil {
		return false
	}
	hs, err := codexHooksOf(data, "", true)
	return err == nil && len(own.Lookalikes(hs)) > 0
}

// CodexLookalikes lists the handlers in the scope's hooks.json that look
// like taskie's but are not what install writes: install neither trusts
// nor removes them, and says so.
func CodexLookalikes(t Target, assets fs.FS) ([]CodexHook, error) {
	own, err := CodexOwnHooks(assets)
	if err != nil {
		return nil, err
	}
	hooks, err := t.CodexHooks()
	if err != nil {
		return nil, err
	}
	hs, err := CodexHooksIn(t.repoBase(hooks), hooks, hooks, true)
	if err != nil {
		return nil, err
	}
	return own.Lookalikes(hs), nil
}
