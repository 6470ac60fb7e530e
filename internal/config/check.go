package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/taskie-dev/taskie/internal/domain"
)

// Error is every problem found in the config files, so that one run of
// `taskie config` shows all there is to fix.
type Error struct {
	Problems []Problem
}

// Problem is one bad setting.
type Problem struct {
	File    string // the config file
	Setting string // the setting's key as written in the file
	Msg     string // what is wrong, starting with the setting
}

// String returns the problem as "file: what is wrong".
func (p Problem) String() string { return p.File + ": " + p.Msg }

// Error returns one problem per line, each starting with its file.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Values accepted by the settings that take one of a few words.
var (
	reviewers     = []string{"claude", "codex"}
	outputFormats = []string{"exit2", "json"}
	severities    = []string{string(domain.Blocker), string(domain.Major), string(domain.Minor), string(domain.Nit)}
)

// check returns what is wrong with setting k of c.
func check(k string, c *Config) []string {
	if f, ok := checkOf(k); ok {
		return f(k, c)
	}
	return nil
}

// checks say what is wrong with each setting that can be wrong.
var checks = []struct {
	key string
	fn  func(k string, c *Config) []string
}{
	{"reviewer", func(k string, c *Config) []string {
		return oneOf(k, c.Reviewer, reviewers, "use reviewer_command for another executable")
	}},
	{"reviewer_command", func(_ string, c *Config) []string {
		if len(c.ReviewerCommand) > 0 && strings.TrimSpace(c.ReviewerCommand[0]) == "" {
			return []string{"reviewer_command: the first element must name the program to run"}
		}
		return nil
	}},
	{"models", func(_ string, c *Config) []string { return checkModels(c.Models) }},
	{"reviewer_timeout", func(_ string, c *Config) []string {
		if c.ReviewerTimeout.D() >= MaxReviewerTimeout {
			return []string{fmt.Sprintf("reviewer_timeout must be below %dm (got %s): the hook itself times out at 30 minutes and Claude Code would kill it first", int(MaxReviewerTimeout.Minutes()), c.ReviewerTimeout.D())}
		}
		return nil
	}},
	{"max_reviews", func(k string, c *Config) []string { return atLeast(k, c.MaxReviews, 0) }},
	{"block_cap", func(k string, c *Config) []string { return atLeast(k, c.BlockCap, 0) }},
	{"group_size", func(k string, c *Config) []string { return atLeast(k, c.GroupSize, 1) }},
	{"ratchet_after", func(k string, c *Config) []string { return atLeast(k, c.RatchetAfter, 1) }},
	{"output_format", func(k string, c *Config) []string { return oneOf(k, c.OutputFormat, outputFormats, "") }},
	{"block_severity", func(k string, c *Config) []string { return oneOf(k, string(c.BlockSeverity), severities, "") }},
	{"budget_usd", func(k string, c *Config) []string { return notNegativeUSD(k, c.BudgetUSD) }},
	{"task_budget_usd", func(k string, c *Config) []string { return notNegativeUSD(k, c.TaskBudgetUSD) }},
	{"budget_tokens", func(k string, c *Config) []string { return atLeast64(k, c.BudgetTokens) }},
	{"task_budget_tokens", func(k string, c *Config) []string { return atLeast64(k, c.TaskBudgetTokens) }},
	{"review_budget", func(_ string, c *Config) []string {
		if c.ReviewBudget.D() >= MaxReviewerTimeout {
			return []string{fmt.Sprintf("review_budget must be below %dm (got %s): a review cannot outlast the hook's own 30-minute timeout", int(MaxReviewerTimeout.Minutes()), c.ReviewBudget.D())}
		}
		return nil
	}},
	{"lifecycle_timeouts", func(_ string, c *Config) []string { return checkLifecycle(c.LifecycleTimeouts) }},
	{"on_exhausted", func(k string, c *Config) []string { return oneOf(k, c.OnExhausted, []string{"skip", "escalate"}, "") }},
	{"store", func(_ string, c *Config) []string { return checkStore(c.Store) }},
	{"project", func(_ string, c *Config) []string { return checkProject(c.Project) }},
}

// notNegativeUSD checks a budget in dollars.
func notNegativeUSD(k string, v float64) []string {
	if v < 0 {
		return []string{fmt.Sprintf("%s must be ≥ 0 (got %g); 0 means no budget", k, v)}
	}
	return nil
}

// checkStore checks the store setting: "" (files) or a PostgreSQL URL. A
// message never repeats the URL's password.
func checkStore(v string) []string {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	scheme, _, _ := strings.Cut(v, "://")
	switch {
	case err != nil || u.Scheme == "" || !strings.Contains(v, "://"):
		return []string{fmt.Sprintf("store must be \"\" (files) or a PostgreSQL URL like \"postgres://user@host:5432/db\" (got %s)", redactStore(v, scheme))}
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		return []string{fmt.Sprintf("store: %q URLs are not supported; use a PostgreSQL URL like \"postgres://user@host:5432/db\", or \"\" for files", u.Scheme)}
	case u.Host == "" && u.Query().Get("host") == "":
		return []string{fmt.Sprintf("store %s names no host", u.Redacted())}
	}
	return nil
}

// redactStore shows a store value that does not parse without what could
// be its password.
func redactStore(v, scheme string) string {
	if strings.Contains(v, "@") {
		return fmt.Sprintf("%q followed by a part with an @", scheme+"://")
	}
	return fmt.Sprintf("%q", v)
}

// checkProject checks the project setting: a name without white space at
// its ends or control characters, as stored in the database.
func checkProject(v string) []string {
	bad := strings.TrimSpace(v) != v || len(v) > 200 ||
		strings.IndexFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0
	if bad {
		return []string{fmt.Sprintf("project must be a name of at most 200 characters without control characters or spaces at its ends (got %q), e.g. \"github.com/org/repo\"", v)}
	}
	return nil
}

// oneOf checks that v is one of the words; else it suggests the nearest.
func oneOf(k, v string, words []string, otherwise string) []string {
	for _, w := range words {
		if v == w {
			return nil
		}
	}
	msg := fmt.Sprintf("%s must be %s (got %q)", k, orList(words), v)
	if s := suggest(v, words); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else if otherwise != "" {
		msg += "; " + otherwise
	}
	return []string{msg}
}

// orList writes words as `"a" or "b"`, or `"a", "b" or "c"`.
func orList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func atLeast(k string, v, least int) []string {
	if v < least {
		return []string{fmt.Sprintf("%s must be ≥ %d (got %d)", k, least, v)}
	}
	return nil
}

// atLeast64 checks a token budget: ≥ 0, where 0 means none.
func atLeast64(k string, v int64) []string {
	if v < 0 {
		return []string{fmt.Sprintf("%s must be ≥ 0 (got %d); 0 means no budget", k, v)}
	}
	return nil
}

// checkModels checks a rotation: entries are models ("opus"), models with
// their reviewer ("codex:gpt-5.5") or commands ("cmd:my-reviewer --strict").
func checkModels(models []domain.Model) []string {
	if len(models) == 0 {
		return []string{"models must list at least one model"}
	}
	var out []string
	for i, entry := range models {
		m := string(entry)
		at := fmt.Sprintf("models[%d]", i)
		if strings.TrimSpace(m) == "" {
			out = append(out, at+": an empty model name")
			continue
		}
		if IsCommand(m) {
			if len(CommandArgv(m)) == 0 {
				out = append(out, fmt.Sprintf("%s: %q names no program after %q", at, m, CommandPrefix))
			}
			continue
		}
		prefix, rest, ok := strings.Cut(strings.TrimSpace(m), ":")
		if !ok || slices.Contains(reviewers, strings.ToLower(prefix)) {
			continue
		}
		// "x:y" may be a model's own name; only a near miss of a prefix is
		// taken for a typo.
		if s := suggest(prefix, []string{"claude", "codex", strings.TrimSuffix(CommandPrefix, ":")}); s != "" {
			out = append(out, fmt.Sprintf("%s: %q has an unknown reviewer %q; did you mean %q?", at, m, prefix, s+":"+rest))
		}
	}
	return out
}

// checkLifecycle checks lifecycle_timeouts: known states, positive durations.
func checkLifecycle(m map[string]string) []string {
	var states []string
	for st := range domain.DefaultLifecycleTimeouts() {
		states = append(states, st)
	}
	sort.Strings(states)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, st := range keys {
		if _, ok := domain.DefaultLifecycleTimeouts()[st]; !ok {
			msg := fmt.Sprintf("lifecycle_timeouts: %q is not a lifecycle state", st)
			if s := suggest(st, states); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else {
				msg += "; states are " + strings.Join(states, ", ")
			}
			out = append(out, msg)
		}
		if d, err := time.ParseDuration(m[st]); err != nil || d <= 0 {
			out = append(out, fmt.Sprintf("lifecycle_timeouts.%s: %q is not a duration", st, m[st]))
		}
	}
	return out
}

// unknownKey describes a key that is no setting.
func unknownKey(k string) string {
	if s := suggest(k, Keys()); s != "" {
		return fmt.Sprintf("%q: unknown setting; did you mean %q?", k, s)
	}
	return fmt.Sprintf("%q: unknown setting; settings are %s", k, strings.Join(Keys(), ", "))
}

// typeProblem describes a value of the wrong JSON type for setting k.
func typeProblem(k string, v json.RawMessage, err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return fmt.Sprintf("%s: %v", k, err)
	}
	return fmt.Sprintf("%s must be %s (got %s)", k, kind(k), compact(v))
}

// kind describes the JSON value setting k takes.
func kind(k string) string {
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != k {
			continue
		}
		switch ft := t.Field(i).Type; {
		case ft.Kind() == reflect.Bool:
			return "true or false"
		case ft == reflect.TypeFor[Duration]():
			return "another kind of value"
		case ft.Kind() == reflect.Int, ft.Kind() == reflect.Int64:
			return "a whole number"
		case ft.Kind() == reflect.Float64:
			return "a number"
		case ft.Kind() == reflect.String:
			return "a string"
		case ft.Kind() == reflect.Slice:
			return "a list of strings"
		case ft.Kind() == reflect.Map:
			return "an object of strings"
		}
	}
	return "another kind of value"
}

// compact shortens a JSON value for a message.
func compact(v json.RawMessage) string {
	s := strings.Join(strings.Fields(string(v)), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// suggest returns the candidate nearest to s when it is near enough to be
// a likely typo, else "".
func suggest(s string, candidates []string) string { return domain.Nearest(s, candidates) }

// checkOf finds the entry of key in checks: a table the linker lays out, so
// nothing is built at start.
func checkOf(key string) (func(k string, c *Config) []string, bool) {
	for _, e := range checks {
		if e.key == key {
			return e.fn, true
		}
	}
	return nil, false
}
