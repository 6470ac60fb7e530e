package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/fsafe"
	"github.com/taskie-dev/taskie/internal/state"
)

// configSetOpts are the options of `taskie config set` and `config unset`.
type configSetOpts struct {
	s     *Streams
	g     *globals
	scope string // "project" or "user"
}

func newConfigSetCmd(s *Streams, g *globals) *cobra.Command {
	o := &configSetOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change one setting in the project's config file (or yours, with --scope user)",
		Long: `Set one setting in .taskie/config.json (--scope project, the default) or in
your own config file (--scope user). The value is checked exactly as when the
file is read: an unknown setting or a value of the wrong kind is refused and
the file is left as it was. The file keeps its other settings and their order.

A string setting takes the text as typed; other settings take JSON:
  taskie config set max_reviews 5
  taskie config set autopilot true
  taskie config set models '["opus","sonnet"]'
  taskie config set reviewer_timeout 20m

reviewer_command, a models entry running a "cmd:" program, store, project and
allowed_tools in the project's file take effect only after ` + "`taskie trust`" + `.`,
		Example: "  taskie config set max_reviews 5\n  taskie config set autopilot true --scope user",
		Args:    exactArgs(2, "a setting and its value"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return config.Keys(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return o.run(args[0], config.ParseValue(args[0], args[1]))
		},
	}
	c.Flags().StringVar(&o.scope, "scope", "project", "which file: project (.taskie/config.json) or user (your own)")
	return c
}

func newConfigUnsetCmd(s *Streams, g *globals) *cobra.Command {
	o := &configSetOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "unset KEY",
		Short: "Remove one setting from the project's config file (or yours, with --scope user)",
		Long: `Remove one setting from .taskie/config.json (--scope project, the default) or
from your own config file (--scope user); the value underneath (your file's or
the default) applies again. The file keeps its other settings and their order.`,
		Example: "  taskie config unset max_reviews\n  taskie config unset store --scope user",
		Args:    exactArgs(1, "a setting"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return config.Keys(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error { return o.run(args[0], nil) },
	}
	c.Flags().StringVar(&o.scope, "scope", "project", "which file: project (.taskie/config.json) or user (your own)")
	return c
}

// run sets key to value in the scope's file, or removes it when value is
// nil, and says what changed.
func (o *configSetOpts) run(key string, value json.RawMessage) error {
	root, rel, display, taskieDir, err := o.file()
	if err != nil {
		return err
	}
	defer root.Close()
	before := trustGaps(taskieDir)
	var e config.Edit
	if value == nil {
		e, err = config.Unset(root, rel, display, key)
	} else {
		e, err = config.Set(root, rel, display, key, value)
	}
	if err != nil {
		hint := "`taskie help config` lists the settings and their values"
		var se *state.SyntaxError
		if errors.As(err, &se) {
			hint = "fix the file first, or remove it; `taskie help config` describes the settings"
		}
		if k := config.KindOf(key); value != nil && (k == "a list of strings" || k == "an object of strings") {
			hint = fmt.Sprintf("%s takes %s, written as JSON, e.g. `taskie config set models '[\"opus\",\"sonnet\"]'`", key, k)
		}
		return usageErr(err, hint)
	}
	show := func(v json.RawMessage) string {
		if v == nil {
			return "(not set)"
		}
		var u string
		if key == "store" && json.Unmarshal(v, &u) == nil {
			return string(redactedJSON(u)) // never a password on the screen
		}
		return compactRaw(v)
	}
	switch {
	case !e.Changed() && value == nil:
		fmt.Fprintf(o.s.Out, "%s does not set %s; nothing changed\n", display, key)
	case !e.Changed():
		fmt.Fprintf(o.s.Out, "%s already sets %s to %s; nothing changed\n", display, key, show(value))
	default:
		fmt.Fprintf(o.s.Out, "%s: %s: %s → %s\n", display, key, show(e.Old), show(e.New))
	}
	if taskieDir == "" || !e.Changed() {
		return nil
	}
	o.effect(taskieDir, root.Path(rel), display, key, value, before)
	return nil
}

// file opens the directory of the scope's config file: the repository's
// root for the project (the path inside is checked by fsafe), the user's
// config directory (created when missing) for the user. taskieDir is the
// project's .taskie directory, "" outside a project.
func (o *configSetOpts) file() (root *fsafe.Root, rel, display, taskieDir string, err error) {
	switch o.scope {
	case "project":
		r, err := o.g.repo()
		if err != nil {
			return nil, "", "", "", err
		}
		root, err := fsafe.Open(r.Root)
		if err != nil {
			return nil, "", "", "", err
		}
		rel := filepath.Join(".taskie", config.FileName)
		return root, rel, rel, r.TaskieDir(), nil
	case "user":
		p := config.UserPath()
		if p == "" {
			return nil, "", "", "", usageErr(errors.New("no place for your config file: neither XDG_CONFIG_HOME nor a home directory is set"), "set XDG_CONFIG_HOME, or use --scope project")
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, "", "", "", err
		}
		root, err := fsafe.Open(filepath.Dir(p))
		if err != nil {
			return nil, "", "", "", err
		}
		if r, err := o.g.repo(); err == nil {
			taskieDir = r.TaskieDir()
		}
		return root, config.FileName, p, taskieDir, nil
	}
	return nil, "", "", "", usageErr(fmt.Errorf("--scope %q: not a scope", o.scope), "use --scope project (.taskie/config.json, the default) or --scope user (your own file)")
}

// effect says when the change does not decide the effective value: the
// setting waits for `taskie trust`, another file wins, or the change
// revoked the trust of the project's file.
func (o *configSetOpts) effect(taskieDir, written, display, key string, value json.RawMessage, before []string) {
	cfg, _ := config.Load(taskieDir)
	after := trustGaps(taskieDir)
	note := func(format string, args ...any) {
		fmt.Fprintf(o.s.Err, "taskie: note: "+format+"\n", args...)
	}
	switch {
	case value != nil && slices.Contains(after, key):
		note("%s in %s takes effect after you review the file and run `taskie trust`", key, display)
	case value != nil && cfg.Source[key] != written:
		note("%s from %s wins over %s: the effective value is unchanged (`taskie config %s`)", key, cfg.Source[key], display, key)
	case value == nil:
		vals := map[string]json.RawMessage{}
		b, _ := json.Marshal(cfg)
		_ = json.Unmarshal(b, &vals)
		v := vals[key]
		if v == nil {
			v = json.RawMessage("null")
		}
		waits := ""
		if slices.Contains(after, key) {
			waits = "; .taskie/config.json's value waits for `taskie trust`"
		}
		note("%s is now %s (from %s)%s", key, compactRaw(v), cfg.Source[key], waits)
	}
	var revoked []string
	for _, k := range after {
		if k != key && !slices.Contains(before, k) {
			revoked = append(revoked, k)
		}
	}
	if len(revoked) > 0 {
		note("changing %s revoked its trust: %v ignored until you review the file and run `taskie trust` again", display, revoked)
	}
}

// trustGaps lists the project's settings ignored for want of trust.
func trustGaps(taskieDir string) []string {
	if taskieDir == "" {
		return nil
	}
	cfg, _ := config.Load(taskieDir)
	return append(slices.Clone(cfg.Untrusted), cfg.Ignored...)
}

// compactRaw is v on one line.
func compactRaw(v json.RawMessage) string {
	b, err := json.Marshal(v) // a RawMessage is written compacted
	if err != nil {
		return string(v)
	}
	return string(b)
}
