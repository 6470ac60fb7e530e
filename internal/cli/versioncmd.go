package cli

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// versionInfo is what `taskie version` prints.
type versionInfo struct {
	Version  string `json:"version"` // semantic version, without a leading v
	Source   string `json:"source"`  // build (-ldflags), module (go install) or development
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

type versionOpts struct {
	s      *Streams
	asJSON bool
}

func newVersionCmd(s *Streams) *cobra.Command { return newVersionCmdWith(s, runVersion) }

func newVersionCmdWith(s *Streams, run func(*versionOpts) error) *cobra.Command {
	o := &versionOpts{s: s}
	c := &cobra.Command{
		Use:   "version",
		Short: "Print taskie's version (a semantic version), commit and platform",
		Long: `Print taskie's version: the one set when the binary was built (make build,
make install), else the Go module version (go install …@version), else
0.0.0-dev with the commit it was built from. --json adds the commit, the Go
version and the platform.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

func runVersion(o *versionOpts) error {
	v := buildVersion()
	if o.asJSON {
		return writeJSON(o.s.Out, v)
	}
	line := "taskie " + v.Version
	if v.Commit != "" && !strings.Contains(v.Version, shortRev(v.Commit)) {
		line += " (" + shortRev(v.Commit) + ")"
	}
	fmt.Fprintln(o.s.Out, line)
	return nil
}

var semverRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(\d+\.\d+\.\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
})

// buildVersion finds the version: -ldflags first (Version), then the
// module version Go stamped into the binary, then the commit.
func buildVersion() versionInfo {
	v := versionInfo{Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				v.Commit = kv.Value
			case "vcs.modified":
				v.Modified = kv.Value == "true"
			}
		}
	}
	switch {
	case Version != "":
		v.Version, v.Source = semver(Version), "build"
	case ok && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		v.Version, v.Source = semver(bi.Main.Version), "module"
	default:
		v.Version, v.Source = "0.0.0-dev", "development"
		if v.Commit != "" {
			v.Version += "+" + shortRev(v.Commit)
			if v.Modified {
				v.Version += ".dirty"
			}
		}
	}
	return v
}

// semver turns a version as builds write it into a semantic version:
// "v1.2.3" → "1.2.3"; `git describe` output without a tag ("2e7cce4-dirty")
// → "0.0.0-dev+2e7cce4-dirty".
func semver(s string) string {
	s = strings.TrimSpace(s)
	if semverRE().MatchString(s) {
		return strings.TrimPrefix(s, "v")
	}
	meta := strings.Trim(regexp.MustCompile(`[^0-9A-Za-z.-]+`).ReplaceAllString(s, "-"), "-.")
	if meta == "" || meta == "dev" {
		return "0.0.0-dev"
	}
	return "0.0.0-dev+" + meta
}

func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
