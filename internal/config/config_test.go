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
)

var allKeys = []string{"allowed_tools", "autopilot", "block_cap", "group_size", "lease_ttl", "lifecycle_timeouts",
	"max_reviews", "models", "output_format", "reviewer", "reviewer_command", "reviewer_timeout"}

// withConfig writes content as config.json of a fresh .taskie directory.
func withConfig(t *testing.T, content string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = Path(dir)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

func TestKeys(t *testing.T) {
	if diff := cmp.Diff(allKeys, Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
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
  "reviewer_command": ["my-reviewer", "--strict"]
}`)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Reviewer, want.Models = "codex", []string{"gpt-a", "gpt-b", "gpt-c"}
	want.ReviewerTimeout, want.LeaseTTL = Duration(10*time.Minute), Duration(90*time.Second)
	want.BlockCap, want.Autopilot, want.OutputFormat = 0, true, "json"
	want.LifecycleTimeouts = map[string]string{"pending": "2h", "testing": "45m"}
	want.ReviewerCommand = []string{"my-reviewer", "--strict"}
	if diff := cmp.Diff(want, c, cmpopts.IgnoreFields(Config{}, "Source")); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	fromFile := map[string]bool{"reviewer": true, "models": true, "reviewer_timeout": true, "lease_ttl": true, "block_cap": true,
		"autopilot": true, "output_format": true, "lifecycle_timeouts": true, "reviewer_command": true}
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

func TestUnknownKey(t *testing.T) {
	dir, path := withConfig(t, `{"reviewer": "claude", "max_review": 3}`)
	_, err := Load(dir)
	if err == nil {
		t.Fatal("unknown key accepted")
	}
	want := path + `: unknown setting "max_review"; settings are ` + strings.Join(allKeys, ", ")
	if err.Error() != want {
		t.Errorf("error = %q\nwant      %q", err, want)
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

func TestBadValues(t *testing.T) {
	tests := []struct {
		content, msg string
	}{
		{`{"reviewer": "gpt"}`, `reviewer must be "claude" or "codex" (got "gpt"); use reviewer_command for another executable`},
		{`{"reviewer": ""}`, `reviewer must be "claude" or "codex" (got "")`},
		{`{"reviewer": 3}`, "cannot unmarshal number"},
		{`{"models": []}`, "models must list at least one model"},
		{`{"models": null}`, "models must list at least one model"},
		{`{"max_reviews": -1}`, "max_reviews and block_cap must be ≥ 0, group_size ≥ 1"},
		{`{"block_cap": -2}`, "max_reviews and block_cap must be ≥ 0, group_size ≥ 1"},
		{`{"group_size": 0}`, "max_reviews and block_cap must be ≥ 0, group_size ≥ 1"},
		{`{"max_reviews": "many"}`, "max_reviews"},
		{`{"output_format": "xml"}`, `output_format must be "exit2" or "json" (got "xml")`},
		{`{"lifecycle_timeouts": {"pending": "soon"}}`, `lifecycle_timeouts.pending: "soon" is not a duration`},
		{`{"reviewer": "gpt", "output_format": "xml"}`, `reviewer must be "claude" or "codex" (got "gpt"); use reviewer_command for another executable; output_format must be "exit2" or "json" (got "xml")`},
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

func TestPath(t *testing.T) {
	if got := Path(filepath.Join("a", ".taskie")); got != filepath.Join("a", ".taskie", "config.json") {
		t.Errorf("Path = %q", got)
	}
}
