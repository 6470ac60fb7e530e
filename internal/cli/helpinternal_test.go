package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/plan"
)

// internalName matches what only a reader of the source knows: a path
// inside internal/ or a Go identifier qualified by its package
// (`lifecycle.Fold`, `store.FileCoord`).
var internalName = regexp.MustCompile(`internal/|\b[a-z]+\.[A-Z][A-Za-z]+\b`)

// TestHelpNamesNoInternals runs every command with --help: its text speaks
// of what the user types and sees, never of the packages behind it.
func TestHelpNamesNoInternals(t *testing.T) {
	s, _, _ := testStreams("")
	var paths [][]string
	walk(newRootCmd(s), func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		paths = append(paths, strings.Fields(c.CommandPath())[1:])
	})
	if len(paths) < 40 {
		t.Fatalf("only %d commands found", len(paths))
	}
	for _, p := range paths {
		t.Run(strings.Join(append([]string{"taskie"}, p...), " "), func(t *testing.T) {
			out := runTaskie(t, append(p, "--help")...)
			for n, line := range strings.Split(out, "\n") {
				if m := internalName.FindString(line); m != "" {
					t.Errorf("line %d names %q: %s", n+1, m, strings.TrimSpace(line))
				}
			}
		})
	}
}

// ruleCount matches a count of rules ("the nine rules", "10 plan-format
// rules").
var ruleCount = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|[0-9]+) ([a-z-]+ )?rules\b`)

// TestRuleCountRight: a doc or a help text that counts the validation rules
// counts as many as `taskie help validation` lists.
func TestRuleCountRight(t *testing.T) {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen"}
	want := map[string]bool{strconv.Itoa(len(plan.Rules)): true}
	if len(plan.Rules) < len(words) {
		want[words[len(plan.Rules)]] = true
	}
	check := func(where, text string) {
		for _, m := range ruleCount.FindAllStringSubmatch(text, -1) {
			if !want[strings.ToLower(m[1])] {
				t.Errorf("%s says %q; taskie has %d validation rules (or drop the number)", where, m[0], len(plan.Rules))
			}
		}
	}
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		check(filepath.Base(file), string(data))
	}
	s, _, _ := testStreams("")
	walk(newRootCmd(s), func(c *cobra.Command) {
		check("`"+c.CommandPath()+" --help`", c.Short+"\n"+c.Long+"\n"+c.Example)
	})
}

// userDocExempt are the pages written for maintainers: the architecture,
// the table of defects and the tests (named by package) that prove them, and
// the benchmarks' figures and where the time goes.
var userDocExempt = map[string]bool{"architecture.md": true, "reliability.md": true, "performance.md": true}

// TestUserDocsNameNoInternals: the user pages (docs/*.md, printed by
// `taskie help <topic>`) speak of what the user types and sees; the
// packages and functions behind it are in docs/architecture.md.
func TestUserDocsNameNoInternals(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		if userDocExempt[name] {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			if diagramMark.MatchString(strings.TrimSpace(line)) {
				continue
			}
			if m := internalName.FindString(line); m != "" {
				t.Errorf("%s:%d names %q (move it to docs/architecture.md): %s", name, n+1, m, strings.TrimSpace(line))
			}
		}
	}
}
