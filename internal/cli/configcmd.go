package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
	"github.com/taskie-dev/taskie/internal/store"
)

// configOpts are the options of `taskie config`.
type configOpts struct {
	s      *Streams
	g      *globals
	key    string // one setting, or "" for all
	asJSON bool
}

func newConfigCmd(s *Streams, g *globals) *cobra.Command { return newConfigCmdWith(s, g, runConfig) }

func newConfigCmdWith(s *Streams, g *globals, run func(*configOpts) error) *cobra.Command {
	o := &configOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "config [setting]",
		Short: "Show the effective settings and where each one comes from",
		Long: `Show every setting (or one) with its effective value and its source: the
repository's .taskie/config.json, your own config file, or "default". An
invalid file is reported with every problem at once, each naming its setting.
` + "`taskie help config`" + ` describes the settings.`,
		Example: "  taskie config\n  taskie config models\n  taskie config --json\n  taskie config set max_reviews 5",
		Args:    maxArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return config.Keys(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			o.key = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	c.AddCommand(newConfigSetCmd(s, g), newConfigUnsetCmd(s, g))
	return c
}

// configEntry is one setting in `taskie config --json`.
type configEntry struct {
	Value  json.RawMessage `json:"value"`
	Source string          `json:"source"`
	// Ignored is the repository's value that waits for `taskie trust`.
	Ignored *ignoredEntry `json:"ignored,omitempty"`
}

// ignoredEntry is a repository's setting left out until the user trusts
// the file.
type ignoredEntry struct {
	Value  json.RawMessage `json:"value"`
	Source string          `json:"source"`
	Until  string          `json:"until"`
}

func runConfig(o *configOpts) error {
	r, err := o.g.repo()
	if err != nil {
		return err
	}
	cfg, err := config.Load(r.TaskieDir())
	if err != nil {
		return usageErr(err, "fix "+filepath.Join(r.TaskieDir(), config.FileName)+"; `taskie help config` lists the settings")
	}
	for _, m := range []string{cfg.TrustMessage(), cfg.IgnoredMessage()} {
		if m != "" {
			fmt.Fprintf(o.s.Err, "taskie: warning: %s\n", m)
		}
	}
	vals := map[string]json.RawMessage{}
	b, _ := json.Marshal(cfg)
	_ = json.Unmarshal(b, &vals)
	keys := config.Keys()
	sort.Strings(keys)
	if o.key != "" {
		if _, ok := vals[o.key]; !ok && !contains(keys, o.key) {
			return usageErr(fmt.Errorf("unknown setting %q%s", o.key, didYouMean(o.key, keys)), "`taskie config` lists the settings; `taskie help config` describes them")
		}
		keys = []string{o.key}
	}
	out := configEntries(cfg, keys, vals)
	if len(cfg.Untrusted)+len(cfg.Ignored) > 0 {
		markIgnored(cfg, config.Path(r.TaskieDir()), out)
	}
	if e, ok := out["store"]; ok {
		out["store"] = storeEntry(e, cfg.Store)
		if e.Ignored != nil {
			var u string
			_ = json.Unmarshal(e.Ignored.Value, &u)
			out["store"].Ignored.Value = redactedJSON(u)
		}
	}
	if o.asJSON {
		if o.key != "" {
			return writeJSON(o.s.Out, out[o.key])
		}
		return writeJSON(o.s.Out, out)
	}
	printConfig(o.s, keys, out)
	return nil
}

// configEntries are the settings' values in effect and where each comes from.
func configEntries(cfg config.Config, keys []string, vals map[string]json.RawMessage) map[string]configEntry {
	out := map[string]configEntry{}
	for _, k := range keys {
		v := vals[k]
		if v == nil {
			v = json.RawMessage("null")
		}
		out[k] = configEntry{Value: v, Source: cfg.Source[k]}
	}
	return out
}

// markIgnored shows what the repository's file sets and why it is not in
// effect, rather than a bare "(not set)".
func markIgnored(cfg config.Config, repoFile string, out map[string]configEntry) {
	raw, _ := config.FileValues(repoFile)
	for _, k := range append(slices.Clone(cfg.Untrusted), cfg.Ignored...) {
		if e, ok := out[k]; ok && raw[k] != nil {
			e.Ignored = &ignoredEntry{Value: raw[k], Source: repoFile, Until: "taskie trust"}
			out[k] = e
		}
	}
}

// printConfig prints one line a setting, and one for what is ignored.
func printConfig(s *Streams, keys []string, out map[string]configEntry) {
	c := s.out()
	for _, k := range keys {
		v := string(out[k].Value)
		if v == "null" {
			v = "(not set)"
		}
		fmt.Fprintf(s.Out, "%-20s %-40s %s\n", k, v, c.Dim(out[k].Source))
		if ig := out[k].Ignored; ig != nil {
			fmt.Fprintf(s.Out, "%-20s %-40s %s\n", "", compactRaw(ig.Value), c.Dim(ig.Source+" (ignored until `taskie trust`)"))
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// storeEntry is the store setting as shown: TASKIE_DATABASE_URL when set
// (it wins over every file), and never a password.
func storeEntry(e configEntry, setting string) configEntry {
	u, source := store.CoordSettings{Store: setting}.URL()
	if u == "" {
		return e
	}
	if source == store.DatabaseURLEnv {
		e.Source = store.DatabaseURLEnv
	}
	e.Value = redactedJSON(u)
	return e
}

// redactedJSON is a store URL as a JSON string, without its password.
func redactedJSON(u string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a URL's & stays &
	_ = enc.Encode(store.RedactURL(u))
	return bytes.TrimSpace(b.Bytes())
}
