package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/ledger"
)

var allKeys = []string{"allowed_tools", "autopilot", "block_cap", "block_severity", "budget_time", "budget_tokens", "budget_usd", "group_size", "lease_ttl", "lifecycle_timeouts",
	"max_reviews", "models", "on_exhausted", "output_format", "project", "ratchet_after", "review_budget", "reviewer", "reviewer_command",
	"reviewer_timeout", "stall_after", "store", "task_budget_time", "task_budget_tokens", "task_budget_usd"}

// isolate points the user's config and state directories at empty temp
// directories, so that no test reads the developer's own files.
func isolate(t *testing.T) (configHome, stateHome string) {
	t.Helper()
	configHome, stateHome = t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", configHome)
	t.Setenv("XDG_STATE_HOME", stateHome)
	return configHome, stateHome
}

// withConfig writes content as config.json of a fresh .taskie directory.
func withConfig(t *testing.T, content string) (dir, path string) {
	t.Helper()
	isolate(t)
	dir = t.TempDir()
	path = Path(dir)
	write(t, path, content)
	return dir, path
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKeys(t *testing.T) {
	if diff := cmp.Diff(allKeys, Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	isolate(t)
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Reviewer:        "claude",
		Models:          []domain.Model{"opus", "sonnet"},
		ReviewerTimeout: Duration(25 * time.Minute),
		AllowedTools:    []string{"Read", "Grep", "Glob", "Bash", "Write"},
		MaxReviews:      8,
		BlockCap:        40,
		OutputFormat:    "exit2",
		GroupSize:       5,
		LeaseTTL:        Duration(30 * time.Minute),
		OnExhausted:     "skip",
		LifecycleTimeouts: map[string]string{"pending": "1h", "assigned": "15m", "planning": "30m", "validated": "15m",
			"in_progress": "4h", "testing": "30m", "quality_review": "30m", "approved": "10m", "committing": "15m",
			"cto_intervention": "1h"},
		BlockSeverity: "major",
		RatchetAfter:  4,
		StallAfter:    Duration(30 * time.Minute),
	}
	if diff := cmp.Diff(want, c, cmpopts.IgnoreFields(Config{}, "Source")); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	for _, k := range allKeys {
		if c.Source[k] != "default" {
			t.Errorf("Source[%q] = %q, want default", k, c.Source[k])
		}
	}
	if len(c.Source) != len(allKeys) {
		t.Errorf("Source has %d keys, want %d", len(c.Source), len(allKeys))
	}
	if m := c.TrustMessage(); m != "" {
		t.Errorf("TrustMessage = %q, want none", m)
	}
}

func TestFileValues(t *testing.T) {
	dir, path := withConfig(t, `{
  "reviewer": "codex",
  "models": ["gpt-a", "gpt-b", "gpt-c"],
  "reviewer_timeout": "10m",
  "lease_ttl": 90,
  "block_cap": 0,
  "autopilot": true,
  "output_format": "json",
  "lifecycle_timeouts": {"pending": "2h", "testing": "45m"},
  "block_severity": "blocker",
  "ratchet_after": 2,
  "budget_usd": 2.5,
  "review_budget": "10m",
  "reviewer_command": ["my-reviewer", "--strict"]
}`)
	trustFile(t, path)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Reviewer, want.Models = "codex", []domain.Model{"gpt-a", "gpt-b", "gpt-c"}
	want.ReviewerTimeout, want.LeaseTTL = Duration(10*time.Minute), Duration(90*time.Second)
	want.BlockCap, want.Autopilot, want.OutputFormat = 0, true, "json"
	want.LifecycleTimeouts["pending"], want.LifecycleTimeouts["testing"] = "2h", "45m"
	want.BlockSeverity, want.RatchetAfter = "blocker", 2
	want.BudgetUSD, want.ReviewBudget = 2.5, Duration(10*time.Minute)
	want.ReviewerCommand = []string{"my-reviewer", "--strict"}
	if diff := cmp.Diff(want, c, cmpopts.IgnoreFields(Config{}, "Source")); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	fromFile := map[string]bool{"reviewer": true, "models": true, "reviewer_timeout": true, "lease_ttl": true, "block_cap": true,
		"autopilot": true, "output_format": true, "lifecycle_timeouts": true, "reviewer_command": true,
		"block_severity": true, "ratchet_after": true, "budget_usd": true, "review_budget": true}
	for _, k := range allKeys {
		want := "default"
		if fromFile[k] {
			want = path
		}
		if c.Source[k] != want {
			t.Errorf("Source[%q] = %q, want %q", k, c.Source[k], want)
		}
	}
}

func TestMalformed(t *testing.T) {
	for _, content := range []string{`{"reviewer": }`, `[1]`, `nope`} {
		dir, path := withConfig(t, content)
		_, err := Load(dir)
		if err == nil || !regexp.MustCompile(`^`+regexp.QuoteMeta(path)+`:\d+:\d+: malformed JSON: `).MatchString(err.Error()) {
			t.Errorf("Load(%s) = %v, want a malformed JSON error naming %s:line:column", content, err, path)
		}
	}
}

func TestNotARegularFile(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if err := os.Mkdir(Path(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if err == nil || !strings.HasPrefix(err.Error(), Path(dir)+": not a regular file (a directory)") {
		t.Errorf("Load = %v, want %s: not a regular file (a directory)", err, Path(dir))
	}
}

// A config.json that is a symlink out of the repository is not read.
func TestConfigSymlinkOutside(t *testing.T) {
	isolate(t)
	outside := filepath.Join(t.TempDir(), "evil.json")
	if err := os.WriteFile(outside, []byte(`{"autopilot": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, Path(dir)); err != nil {
		t.Skip(err)
	}
	c, err := Load(dir)
	if err == nil || c.Autopilot {
		t.Errorf("Load = %v (autopilot %v), want a refusal of the outside file", err, c.Autopilot)
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		content, msg string
	}{
		{`{"reviewer": "gpt"}`, `reviewer must be "claude" or "codex" (got "gpt"); use reviewer_command for another executable`},
		{`{"reviewer": ""}`, `reviewer must be "claude" or "codex" (got "")`},
		{`{"reviewer": "claud"}`, `reviewer must be "claude" or "codex" (got "claud"); did you mean "claude"?`},
		{`{"reviewer": "Codex"}`, `did you mean "codex"?`},
		{`{"reviewer": 3}`, "reviewer must be a string (got 3)"},
		{`{"models": []}`, "models must list at least one model"},
		{`{"models": null}`, "models must list at least one model"},
		{`{"models": [1]}`, "models must be a list of strings (got [1])"},
		{`{"models": ["opus", ""]}`, "models[1]: an empty model name"},
		{`{"models": ["cmd:  "]}`, `models[0]: "cmd:  " names no program after "cmd:"`},
		{`{"models": ["claud:opus"]}`, `models[0]: "claud:opus" has an unknown reviewer "claud"; did you mean "claude:opus"?`},
		{`{"models": ["cdm:my-reviewer"]}`, `did you mean "cmd:my-reviewer"?`},
		{`{"reviewer_command": [""]}`, "reviewer_command: the first element must name the program to run"},
		{`{"reviewer_command": "my-reviewer"}`, "reviewer_command must be a list of strings (got \"my-reviewer\")"},
		{`{"max_reviews": -1}`, "max_reviews must be ≥ 0 (got -1)"},
		{`{"block_cap": -2}`, "block_cap must be ≥ 0 (got -2)"},
		{`{"group_size": 0}`, "group_size must be ≥ 1 (got 0)"},
		{`{"on_exhausted": "ignore"}`, `on_exhausted must be "skip" or "escalate" (got "ignore")`},
		{`{"store": "mysql://u@h/db"}`, `store: "mysql" URLs are not supported`},
		{`{"store": "localhost:5432"}`, `store must be "" (files) or a PostgreSQL URL like "postgres://user@host:5432/db" (got "localhost:5432")`},
		{`{"store": "postgres:///db"}`, "store postgres:///db names no host"},
		{`{"store": "postgres://u:pw@h:bad/db"}`, `store must be "" (files) or a PostgreSQL URL like "postgres://user@host:5432/db" (got "postgres://" followed by a part with an @)`},
		{`{"project": " x"}`, `project must be a name of at most 200 characters`},
		{`{"ratchet_after": 0}`, "ratchet_after must be ≥ 1 (got 0)"},
		{`{"budget_usd": -1}`, "budget_usd must be ≥ 0 (got -1); 0 means no budget"},
		{`{"budget_usd": "5$"}`, `budget_usd must be a number (got "5$")`},
		{`{"review_budget": "40m"}`, "review_budget must be below 29m (got 40m0s)"},
		{`{"review_budget": "0s"}`, `"0s" is not a positive duration`},
		{`{"budget_tokens": -5}`, "budget_tokens must be ≥ 0 (got -5); 0 means no budget"},
		{`{"task_budget_tokens": -1}`, "task_budget_tokens must be ≥ 0 (got -1); 0 means no budget"},
		{`{"task_budget_tokens": 1.5}`, "task_budget_tokens must be a whole number"},
		{`{"task_budget_usd": -0.5}`, "task_budget_usd must be ≥ 0 (got -0.5); 0 means no budget"},
		{`{"budget_time": "soon"}`, `budget_time`},
		{`{"task_budget_time": "0s"}`, `"0s" is not a positive duration`},
		{`{"max_reviews": "many"}`, `max_reviews must be a whole number (got "many")`},
		{`{"autopilot": "yes"}`, `autopilot must be true or false (got "yes")`},
		{`{"output_format": "xml"}`, `output_format must be "exit2" or "json" (got "xml")`},
		{`{"output_format": "jsn"}`, `did you mean "json"?`},
		{`{"block_severity": "majr"}`, `block_severity must be "blocker", "major", "minor" or "nit" (got "majr"); did you mean "major"?`},
		{`{"lifecycle_timeouts": {"pending": "soon"}}`, `lifecycle_timeouts.pending: "soon" is not a duration`},
		{`{"lifecycle_timeouts": {"pending": "-1h"}}`, `lifecycle_timeouts.pending: "-1h" is not a duration`},
		{`{"lifecycle_timeouts": {"in_progres": "6h"}}`, `lifecycle_timeouts: "in_progres" is not a lifecycle state; did you mean "in_progress"?`},
		{`{"lifecycle_timeouts": {"later": "6h"}}`, `lifecycle_timeouts: "later" is not a lifecycle state; states are approved, assigned,`},
		{`{"lifecycle_timeouts": [1]}`, `lifecycle_timeouts must be an object of strings (got [1])`},
	}
	for _, tc := range tests {
		t.Run(tc.content, func(t *testing.T) {
			dir, path := withConfig(t, tc.content)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error = %q, want %s: …%s", err, path, tc.msg)
			}
		})
	}
}

// TestRotationEntries: entries the reviewers accept are not mistaken for
// typos (a model name may hold a colon).
func TestRotationEntries(t *testing.T) {
	dir, _ := withConfig(t, `{"models": ["opus", "Claude:opus", " codex:gpt-5.5", "gpt-oss:20b", "codex", "claude-opus-4-5[1m]"]}`)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != 6 || len(c.Untrusted) != 0 {
		t.Errorf("Models = %q, Untrusted = %v", c.Models, c.Untrusted)
	}
}

func TestBadDurations(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{"reviewer_timeout", `"abc"`},
		{"reviewer_timeout", `"-5m"`},
		{"reviewer_timeout", `"0s"`},
		{"reviewer_timeout", `0`},
		{"lease_ttl", `-30`},
		{"lease_ttl", `true`},
		{"lease_ttl", `"25"`},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			dir, path := withConfig(t, `{"`+tc.key+`": `+tc.value+`}`)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), `is not a positive duration like "25m"`) {
				t.Errorf("error = %q", err)
			}
			// The temp dir's name contains the test name: look after the path.
			if !strings.Contains(strings.TrimPrefix(err.Error(), path), tc.key) {
				t.Errorf("error %q does not name the setting %s", err, tc.key)
			}
		})
	}
}

func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(Duration(90 * time.Second))
	if err != nil || string(b) != `"1m30s"` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
	var d Duration
	for in, want := range map[string]time.Duration{`"1h30m"`: 90 * time.Minute, `2.5`: 2500 * time.Millisecond, `"300ms"`: 300 * time.Millisecond} {
		if err := json.Unmarshal([]byte(in), &d); err != nil || d.D() != want {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", in, d.D(), err, want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Hour: "1h", 15 * time.Minute: "15m", 270 * time.Minute: "4h30m", 90 * time.Second: "1m30s", 3*time.Hour + time.Second: "3h0m1s"} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPath(t *testing.T) {
	if got := Path(filepath.Join("a", ".taskie")); got != filepath.Join("a", ".taskie", "config.json") {
		t.Errorf("Path = %q", got)
	}
}

func TestLedgerSettings(t *testing.T) {
	dir, _ := withConfig(t, `{"block_severity": "minor", "ratchet_after": 3, "budget_usd": 4.5, "review_budget": "5m"}`)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := ledger.Settings{BlockSeverity: domain.Minor, RatchetAfter: 3, BudgetUSD: 4.5, ReviewBudget: 5 * time.Minute}
	if diff := cmp.Diff(want, c.Ledger()); diff != "" {
		t.Errorf("Ledger (-want +got):\n%s", diff)
	}
	if got := Default().Ledger(); got.BudgetUSD != 0 || got.ReviewBudget != 0 {
		t.Errorf("default budgets = %+v, want none", got)
	}
}
