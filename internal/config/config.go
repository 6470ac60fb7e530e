// Package config reads .taskie/config.json (SPEC §14): every setting is
// optional, has a default, and remembers where its effective value came from.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/state"
)

// FileName is the config file under .taskie/.
const FileName = "config.json"

// Config is the effective configuration.
type Config struct {
	Reviewer          string            `json:"reviewer"`
	ReviewerCommand   []string          `json:"reviewer_command,omitempty"`
	Models            []string          `json:"models"`
	ReviewerTimeout   Duration          `json:"reviewer_timeout"`
	AllowedTools      []string          `json:"allowed_tools"`
	MaxReviews        int               `json:"max_reviews"`
	BlockCap          int               `json:"block_cap"`
	Autopilot         bool              `json:"autopilot"`
	OutputFormat      string            `json:"output_format"`
	LifecycleTimeouts map[string]string `json:"lifecycle_timeouts,omitempty"`
	GroupSize         int               `json:"group_size"`
	LeaseTTL          Duration          `json:"lease_ttl"`

	// Source maps each JSON key to where its value came from.
	Source map[string]string `json:"-"`
}

// MaxReviewerTimeout is the first reviewer_timeout refused. Claude Code
// kills the Stop hook after 30 minutes; the reviewer must be killed, and its
// failure recorded, well before that.
const MaxReviewerTimeout = 29 * time.Minute

// Default returns the built-in settings.
func Default() Config {
	return Config{
		Reviewer:        "claude",
		Models:          []string{"opus", "sonnet"},
		ReviewerTimeout: Duration(25 * time.Minute),
		AllowedTools:    []string{"Read", "Grep", "Glob", "Bash", "Write"},
		MaxReviews:      8,
		BlockCap:        40,
		OutputFormat:    "exit2",
		GroupSize:       5,
		LeaseTTL:        Duration(30 * time.Minute),
	}
}

// Duration is a time.Duration written as "25m" in JSON.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes "25m0s"-style text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON accepts "25m" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil || v <= 0 {
			return fmt.Errorf("%q is not a positive duration like \"25m\"", s)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil || secs <= 0 {
		return fmt.Errorf("%s is not a positive duration like \"25m\"", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// Path returns the config file of a .taskie directory.
func Path(taskieDir string) string { return filepath.Join(taskieDir, FileName) }

// Load reads taskieDir/config.json over the defaults. A missing file is fine.
func Load(taskieDir string) (Config, error) {
	c := Default()
	c.Source = map[string]string{}
	for _, k := range Keys() {
		c.Source[k] = "default"
	}
	p := Path(taskieDir)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	raw, err := state.DecodeObject(p, data)
	if err != nil {
		return c, err
	}
	for k := range raw {
		if !known(k) {
			return c, fmt.Errorf("%s: unknown setting %q; settings are %s", p, k, strings.Join(Keys(), ", "))
		}
		c.Source[k] = p
	}
	// One key at a time, so an error names the setting it is about.
	for _, k := range Keys() {
		v, ok := raw[k]
		if !ok {
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		if err := json.Unmarshal(one, &c); err != nil {
			return c, fmt.Errorf("%s: %s: %v", p, k, err)
		}
	}
	return c, c.check(p)
}

func (c *Config) check(p string) error {
	var errs []string
	if c.Reviewer != "claude" && c.Reviewer != "codex" {
		errs = append(errs, fmt.Sprintf("reviewer must be \"claude\" or \"codex\" (got %q); use reviewer_command for another executable", c.Reviewer))
	}
	if c.ReviewerTimeout.D() >= MaxReviewerTimeout {
		errs = append(errs, fmt.Sprintf("reviewer_timeout must be below %dm (got %s): the hook itself times out at 30 minutes and Claude Code would kill it first", int(MaxReviewerTimeout.Minutes()), c.ReviewerTimeout.D()))
	}
	if len(c.Models) == 0 {
		errs = append(errs, "models must list at least one model")
	}
	if c.MaxReviews < 0 || c.BlockCap < 0 || c.GroupSize < 1 {
		errs = append(errs, "max_reviews and block_cap must be ≥ 0, group_size ≥ 1")
	}
	if c.OutputFormat != "exit2" && c.OutputFormat != "json" {
		errs = append(errs, fmt.Sprintf("output_format must be \"exit2\" or \"json\" (got %q)", c.OutputFormat))
	}
	for st, v := range c.LifecycleTimeouts {
		if _, err := time.ParseDuration(v); err != nil {
			errs = append(errs, fmt.Sprintf("lifecycle_timeouts.%s: %q is not a duration", st, v))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s", p, strings.Join(errs, "; "))
	}
	return nil
}

// Keys lists the settings in a stable order.
func Keys() []string {
	var ks []string
	b, _ := json.Marshal(Default())
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for k := range m {
		ks = append(ks, k)
	}
	ks = append(ks, "reviewer_command", "lifecycle_timeouts")
	sort.Strings(ks)
	return ks
}

func known(k string) bool {
	for _, x := range Keys() {
		if x == k {
			return true
		}
	}
	return false
}
