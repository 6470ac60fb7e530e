package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every test that docs/reliability.md names as proof exists: a testscript,
// a Go test, fuzz target or benchmark, or a package directory.
func TestReliabilityDocNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := testFuncs(t, root)
	var rows, names int
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[3]) == "proved by" {
			continue
		}
		rows++
		proof := cells[3]
		found := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(proof, -1)
		if len(found) == 0 {
			t.Errorf("row %q names no test", strings.TrimSpace(cells[1]))
		}
		for _, m := range found {
			names++
			checkName(t, root, funcs, m[1])
		}
	}
	if rows < 20 {
		t.Errorf("only %d rows read from docs/reliability.md", rows)
	}
	t.Logf("%d rows, %d tests named", rows, names)
}

func checkName(t *testing.T, root string, funcs map[string]bool, name string) {
	t.Helper()
	switch {
	case strings.HasPrefix(name, "internal/"):
		if st, err := os.Stat(filepath.Join(root, name)); err != nil || !st.IsDir() {
			t.Errorf("%s: no such package", name)
		}
	case regexp.MustCompile(`^(Test|Fuzz|Benchmark)\w*\*?$`).MatchString(name):
		prefix, wild := strings.CutSuffix(name, "*")
		ok := funcs[prefix]
		for f := range funcs {
			if wild && strings.HasPrefix(f, prefix) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: no such test function", name)
		}
	case regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(name):
		if _, err := os.Stat(filepath.Join(root, "internal", "cli", "testdata", "scripts", name+".txtar")); err != nil {
			t.Errorf("%s: no such testscript", name)
		}
	}
}

// testFuncs lists the test, fuzz and benchmark functions of the module.
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w+)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllStringSubmatch(string(data), -1) {
				out[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
