package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/state"
)

// CommandPrefix marks a rotation entry that runs a program instead of
// naming a model: "cmd:my-reviewer --strict" runs my-reviewer with the
// argument --strict (split at white space, no quoting). Every other entry
// ("opus", "claude:opus", "codex:gpt-5.5") is a model. Leading white space
// and the prefix's case do not matter: " CMD:x" is a command too, so that no
// spelling of one escapes the trust check.
const CommandPrefix = "cmd:"

// IsCommand reports whether a models entry is a command.
func IsCommand(entry string) bool {
	e := strings.TrimSpace(entry)
	return len(e) >= len(CommandPrefix) && strings.EqualFold(e[:len(CommandPrefix)], CommandPrefix)
}

// CommandArgv returns the program and arguments of a command entry, nil
// for a model.
func CommandArgv(entry string) []string {
	if !IsCommand(entry) {
		return nil
	}
	return strings.Fields(strings.TrimSpace(entry)[len(CommandPrefix):])
}

// Program is a setting that runs a program, with the program it runs.
type Program struct {
	Setting string   `json:"setting"` // "reviewer_command" or "models"
	Command []string `json:"command"` // program and arguments
}

// programSettings are the settings that may run a program (docs/configuration.md#trust), each
// with what it runs. A value that cannot be read counts as running
// something when in doubt; Load reports it as a problem anyway.
var programSettings = []struct {
	key  string
	runs func(json.RawMessage) ([][]string, bool)
}{
	{"reviewer_command", func(v json.RawMessage) ([][]string, bool) {
		var argv []string
		if err := json.Unmarshal(v, &argv); err != nil {
			return nil, true
		}
		if len(argv) == 0 {
			return nil, false
		}
		return [][]string{argv}, true
	}},
	{"models", func(v json.RawMessage) ([][]string, bool) {
		var models []string
		if err := json.Unmarshal(v, &models); err != nil {
			return nil, false
		}
		var cmds [][]string
		for _, m := range models {
			if IsCommand(m) {
				cmds = append(cmds, CommandArgv(m))
			}
		}
		return cmds, len(cmds) > 0
	}},
}

// Programs returns the settings of a config file's content that run a
// program, in the order of programSettings. path only names the file in a
// syntax error.
func Programs(path string, data []byte) ([]Program, error) {
	raw, err := state.DecodeObject(path, data)
	if err != nil {
		return nil, err
	}
	var out []Program
	for _, ps := range programSettings {
		v, ok := raw[ps.key]
		if !ok {
			continue
		}
		cmds, runs := ps.runs(v)
		if !runs {
			continue
		}
		if len(cmds) == 0 {
			out = append(out, Program{Setting: ps.key})
		}
		for _, cmd := range cmds {
			out = append(out, Program{Setting: ps.key, Command: cmd})
		}
	}
	return out, nil
}

// programKeys names the settings of raw that run a program.
func programKeys(raw map[string]json.RawMessage) []string {
	var keys []string
	for _, ps := range programSettings {
		if v, ok := raw[ps.key]; ok {
			if _, runs := ps.runs(v); runs {
				keys = append(keys, ps.key)
			}
		}
	}
	return keys
}

// TrustMessage returns "" when every setting was honoured; else one
// sentence for the user naming the ignored settings and `taskie trust`.
func (c Config) TrustMessage() string {
	if len(c.Untrusted) == 0 {
		return ""
	}
	names := make([]string, len(c.Untrusted))
	for i, k := range c.Untrusted {
		names[i] = k
		if k == "models" {
			names[i] = fmt.Sprintf("models (with a %q entry)", CommandPrefix)
		}
	}
	if len(c.Changed) > 0 {
		return fmt.Sprintf("%s changed since `taskie trust` (.taskie/config.json runs it through %s): not run; read it, then run `taskie trust` again",
			strings.Join(c.Changed, ", "), andList(names))
	}
	what := "which runs a program; it is"
	if len(names) > 1 {
		what = "which run programs; they are"
	}
	return fmt.Sprintf(".taskie/config.json sets %s, %s ignored until you review the file and run `taskie trust`", andList(names), what)
}

// IgnoredMessage returns "" when the repository's store, project and
// allowed_tools were honoured (or not set); else one sentence naming the
// ignored ones and `taskie trust`.
func (c Config) IgnoredMessage() string {
	if len(c.Ignored) == 0 {
		return ""
	}
	verb := "is"
	if len(c.Ignored) > 1 {
		verb = "are"
	}
	return fmt.Sprintf(".taskie/config.json sets %s, which %s ignored until you review the file and run `taskie trust`", andList(c.Ignored), verb)
}

// AwaitingTrust says what of the repository's config waits for `taskie
// trust` — programs not run, settings (store, project, allowed_tools) not
// honoured — as the needs-you list names it; "" when nothing does. Load
// already knows it: no file is read.
func (c Config) AwaitingTrust() string {
	var ms []string
	if m := c.TrustMessage(); m != "" {
		ms = append(ms, m)
	}
	if m := c.IgnoredMessage(); m != "" {
		if slices.Contains(c.Ignored, "store") {
			m += ": this clone keeps its claims and events in its own files, out of the shared store"
		}
		ms = append(ms, m)
	}
	return strings.Join(ms, "; ")
}

// andList writes "a", "a and b", "a, b and c".
func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
