// Package config reads taskie's settings (docs/configuration.md): the built-in defaults,
// then the user's own file ($XDG_CONFIG_HOME/taskie/config.json), then the
// repository's .taskie/config.json. Every setting is optional and remembers
// the file its effective value came from. Settings that run a program are
// taken from the repository's file only when the user trusts it (docs/configuration.md#trust).
package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

// FileName is the config file under .taskie/ and under the user's
// taskie config directory.
const FileName = "config.json"

// Config is the effective configuration.
type Config struct {
	Reviewer          string            `json:"reviewer"`
	ReviewerCommand   []string          `json:"reviewer_command,omitempty"`
	Models            []domain.Model    `json:"models"`
	ReviewerTimeout   Duration          `json:"reviewer_timeout"`
	AllowedTools      []string          `json:"allowed_tools"`
	MaxReviews        int               `json:"max_reviews"`
	BlockCap          int               `json:"block_cap"`
	Autopilot         bool              `json:"autopilot"`
	OutputFormat      string            `json:"output_format"`
	LifecycleTimeouts map[string]string `json:"lifecycle_timeouts,omitempty"`
	GroupSize         int               `json:"group_size"`
	LeaseTTL          Duration          `json:"lease_ttl"`
	OnExhausted       string            `json:"on_exhausted"` // a task past its retries: skip or escalate (docs/parallel.md)
	BlockSeverity     domain.Severity   `json:"block_severity"`
	RatchetAfter      int               `json:"ratchet_after"`
	// BudgetUSD caps what a plan's reviews may cost (docs/ledger.md); 0 = no cap.
	BudgetUSD float64 `json:"budget_usd"`
	// ReviewBudget caps one review's duration: the reviewer's timeout is
	// the shorter of it and reviewer_timeout, and a review that used it up
	// stops further reviews; 0 = no cap.
	ReviewBudget Duration `json:"review_budget"`
	// BudgetTokens and BudgetTime cap the tokens and the total run time of
	// a plan's reviews; the task_ ones cap those of one task's reviews
	// (docs/ledger.md); 0 = no cap.
	BudgetTokens     int64    `json:"budget_tokens"`
	BudgetTime       Duration `json:"budget_time"`
	TaskBudgetUSD    float64  `json:"task_budget_usd"`
	TaskBudgetTokens int64    `json:"task_budget_tokens"`
	TaskBudgetTime   Duration `json:"task_budget_time"`
	// StallAfter is how long a review loop may make no progress while its
	// session is gone before it is listed as needing you (docs/needs-you.md).
	StallAfter Duration `json:"stall_after"`
	// Store is where claims, leases and coordination events live
	// (docs/fleet.md): "" for files, or a PostgreSQL URL ("postgres://…") shared by
	// every clone; TASKIE_DATABASE_URL wins over it.
	Store string `json:"store"`
	// Project names the repository across its clones in a shared store;
	// "" is its origin remote's URL, normalised.
	Project string `json:"project"`

	// Source maps each JSON key to where its value came from: "default" or
	// a file's path.
	Source map[string]string `json:"-"`

	// Untrusted names the settings of UntrustedFile that run a program and
	// were ignored because the user has not trusted that file (docs/configuration.md#trust);
	// their effective values come from the user's file or the defaults.
	// When it is not empty no reviewer may run: see TrustMessage.
	Untrusted []string `json:"-"`
	// Ignored names the repository's store, project and allowed_tools
	// when the user has not trusted the file: they are left out (the user's
	// values or the defaults apply) but reviews still run.
	Ignored []string `json:"-"`
	// Changed lists the program files inside the repository, pinned by
	// `taskie trust`, whose content changed since (relative paths).
	Changed []string `json:"-"`
	// UntrustedFile is the absolute path of the repository file that
	// Untrusted and Ignored are about.
	UntrustedFile string `json:"-"`
}

// MaxReviewerTimeout is the first reviewer_timeout refused. Claude Code
// kills the Stop hook after 30 minutes; the reviewer must be killed, and its
// failure recorded, well before that.
const MaxReviewerTimeout = domain.MaxReviewerTimeout

// Default returns the built-in settings, all taken from package domain.
func Default() Config {
	lifecycle := map[string]string{}
	for st, d := range domain.DefaultLifecycleTimeouts() {
		lifecycle[st] = shortDuration(d)
	}
	return Config{
		Reviewer:          domain.DefaultReviewer,
		Models:            domain.DefaultModels(),
		ReviewerTimeout:   Duration(domain.DefaultReviewerTimeout),
		AllowedTools:      domain.DefaultAllowedTools(),
		MaxReviews:        domain.DefaultMaxReviews,
		BlockCap:          domain.DefaultBlockCap,
		OutputFormat:      domain.DefaultOutputFormat,
		LifecycleTimeouts: lifecycle,
		GroupSize:         domain.DefaultGroupSize,
		LeaseTTL:          Duration(domain.DefaultLeaseTTL),
		OnExhausted:       "skip", // parallel.Skip
		BlockSeverity:     domain.DefaultBlockSeverity,
		RatchetAfter:      domain.DefaultRatchetAfter,
		StallAfter:        Duration(domain.DefaultStallAfter),
	}
}

// shortDuration writes d as a user would: "1h", "15m", "4h30m".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
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

// Keys lists the settings in a stable order.
func Keys() []string {
	var ks []string
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			ks = append(ks, name)
		}
	}
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

// Ledger returns the review ledger's settings (docs/ledger.md).
func (c Config) Ledger() ledger.Settings {
	return ledger.Settings{BlockSeverity: c.BlockSeverity, RatchetAfter: c.RatchetAfter,
		BudgetUSD: c.BudgetUSD, ReviewBudget: c.ReviewBudget.D(), BudgetTokens: c.BudgetTokens, BudgetTime: c.BudgetTime.D(),
		TaskBudgetUSD: c.TaskBudgetUSD, TaskBudgetTokens: c.TaskBudgetTokens, TaskBudgetTime: c.TaskBudgetTime.D()}
}
