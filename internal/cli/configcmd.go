package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/config"
)

func newConfigCmd(s *Streams, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "config",
		Short: "Show the effective settings and where each one comes from",
		Long: `Show every setting of .taskie/config.json with its effective value and its
source (the file, or "default"). See docs/configuration.md.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			r, err := g.repo()
			if err != nil {
				return err
			}
			cfg, err := config.Load(r.TaskieDir())
			if err != nil {
				return usageErr(err, "fix "+filepath.Join(r.TaskieDir(), config.FileName)+"; docs/configuration.md lists the settings")
			}
			vals := map[string]json.RawMessage{}
			b, _ := json.Marshal(cfg)
			_ = json.Unmarshal(b, &vals)
			keys := config.Keys()
			sort.Strings(keys)
			if asJSON {
				type entry struct {
					Value  json.RawMessage `json:"value"`
					Source string          `json:"source"`
				}
				out := map[string]entry{}
				for _, k := range keys {
					v := vals[k]
					if v == nil {
						v = json.RawMessage("null")
					}
					out[k] = entry{v, cfg.Source[k]}
				}
				return writeJSON(s.Out, out)
			}
			for _, k := range keys {
				v := string(vals[k])
				if v == "" {
					v = "null"
				}
				fmt.Fprintf(s.Out, "%-20s %-40s %s\n", k, v, cfg.Source[k])
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
