package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every row of docs/reliability.md names tests that exist and that `make
// test` runs: testscripts, Go tests and fuzz targets (their seeds run as
// tests) — never a benchmark, which `make test` does not run, nor a whole
// package, which proves nothing in particular.
func TestReliabilityDocNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	idx := loadIndex(t, root)
	var rows, names int
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[3]) == "proved by" {
			continue
		}
		rows++
		n, problems := checkProof(cells[3], idx)
		names += n
		for _, p := range problems {
			t.Errorf("docs/reliability.md, row %q: %s", strings.TrimSpace(cells[1]), p)
		}
	}
	if rows < 20 {
		t.Errorf("only %d rows read from docs/reliability.md", rows)
	}
	t.Logf("%d rows, %d tests named", rows, names)
}

// index is what exists: the test and fuzz functions of each package
// directory (slash-separated, relative to the module root) and the
// testscripts.
type index struct {
	funcs   map[string][]string // package dir → Test*/Fuzz* names
	scripts map[string]bool
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	funcName   = regexp.MustCompile(`^(Test|Fuzz|Benchmark)\w*\*?$`)
	scriptName = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// checkProof checks one "proved by" cell: each backticked name is a
// testscript, a test or fuzz function (Name* for a family), or a package
// directory that qualifies the function names after it, up to the next
// package (they must be tests of that package). It returns how many tests the cell names and
// what is wrong with it.
func checkProof(cell string, idx index) (int, []string) {
	var problems []string
	names := 0
	pkg, pkgUsed := "", true
	endPackage := func() {
		if !pkgUsed {
			problems = append(problems, "`"+pkg+"` names a package, not a test: name its test functions")
		}
	}
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		name := m[1]
		switch {
		case strings.HasPrefix(name, "internal/") || strings.HasPrefix(name, "cmd/") || name == "e2e":
			endPackage()
			pkg, pkgUsed = name, false
			if _, ok := idx.funcs[name]; !ok {
				problems = append(problems, "`"+name+"`: no such package with tests")
			}
		case strings.HasPrefix(name, "Benchmark"):
			pkgUsed = true
			problems = append(problems, "`"+name+"` is a benchmark, which `make test` does not run: name a test")
		case funcName.MatchString(name):
			names++
			pkgUsed = true
			if p := findFunc(idx, pkg, name); p != "" {
				problems = append(problems, p)
			}
		case scriptName.MatchString(name):
			names++
			if !idx.scripts[name] {
				problems = append(problems, "`"+name+"`: no such testscript (internal/cli/testdata/scripts/"+name+".txtar)")
			}
		default:
			problems = append(problems, "`"+name+"` is neither a test, a testscript nor a package")
		}
	}
	endPackage()
	if names == 0 {
		problems = append(problems, "names no test")
	}
	return names, problems
}

// findFunc looks name (Name* for a prefix) up in package pkg, or anywhere
// when pkg is empty; it returns the problem, or "".
func findFunc(idx index, pkg, name string) string {
	prefix, wild := strings.CutSuffix(name, "*")
	match := func(f string) bool { return f == prefix || wild && strings.HasPrefix(f, prefix) }
	if pkg != "" {
		if slices.ContainsFunc(idx.funcs[pkg], match) {
			return ""
		}
		return "`" + name + "`: no such test in " + pkg
	}
	for _, fs := range idx.funcs {
		if slices.ContainsFunc(fs, match) {
			return ""
		}
	}
	return "`" + name + "`: no such test function"
}

// loadIndex reads the module's test files and testscripts.
func loadIndex(t *testing.T, root string) index {
	t.Helper()
	re := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	idx := index{funcs: map[string][]string{}, scripts: map[string]bool{}}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			idx.funcs[pkg] = append(idx.funcs[pkg], m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Testscripts, and those that need PostgreSQL (pgscripts).
	scripts, err := filepath.Glob(filepath.Join(root, "internal", "cli", "testdata", "*scripts", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		idx.scripts[strings.TrimSuffix(filepath.Base(s), ".txtar")] = true
	}
	return idx
}

func TestCheckProof(t *testing.T) {
	idx := index{
		funcs: map[string][]string{
			"internal/store":     {"TestCrashRedo", "TestSpecialFilesNeverHang"},
			"internal/hook":      {"TestReadInputTooLarge", "FuzzHookInput"},
			"internal/crashtest": {"TestCrashKill"},
		},
		scripts: map[string]bool{"hook_input_errors": true},
	}
	for _, tc := range []struct {
		name  string
		cell  string
		names int
		want  []string // a substring of each problem, in order
	}{
		{name: "a testscript and qualified tests", cell: "`hook_input_errors`, `internal/hook` `TestReadInputTooLarge`, `FuzzHookInput`", names: 3},
		{name: "an unqualified test found anywhere", cell: "`TestCrashKill`, `internal/store` `TestCrashRedo`", names: 2},
		{name: "a package qualifies every test after it", cell: "`internal/store` `TestCrashRedo`, `TestCrashKill`", names: 2,
			want: []string{"`TestCrashKill`: no such test in internal/store"}},
		{name: "a family by prefix", cell: "`internal/store` `TestSpecial*`", names: 1},
		{name: "a benchmark", cell: "`TestCrashKill`, `BenchmarkChooseTranscript`", names: 1,
			want: []string{"`BenchmarkChooseTranscript` is a benchmark, which `make test` does not run"}},
		{name: "a whole package", cell: "`hook_input_errors`, `internal/store` tests", names: 1,
			want: []string{"`internal/store` names a package, not a test"}},
		{name: "a package followed by another package", cell: "`internal/store` tests, `internal/hook` `FuzzHookInput`", names: 1,
			want: []string{"`internal/store` names a package, not a test"}},
		{name: "a test of another package", cell: "`internal/hook` `TestCrashRedo`", names: 1,
			want: []string{"`TestCrashRedo`: no such test in internal/hook"}},
		{name: "a test that does not exist", cell: "`TestNothing`", names: 1, want: []string{"`TestNothing`: no such test function"}},
		{name: "a testscript that does not exist", cell: "`no_script`", names: 1, want: []string{"`no_script`: no such testscript"}},
		{name: "a package that does not exist", cell: "`internal/nope` `TestCrashRedo`", names: 1,
			want: []string{"`internal/nope`: no such package with tests", "`TestCrashRedo`: no such test in internal/nope"}},
		{name: "something else", cell: "`make test`", names: 0,
			want: []string{"`make test` is neither a test, a testscript nor a package", "names no test"}},
		{name: "nothing", cell: " the store conformance suite ", names: 0, want: []string{"names no test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, problems := checkProof(tc.cell, idx)
			if names != tc.names {
				t.Errorf("checkProof(%q) counted %d tests, want %d", tc.cell, names, tc.names)
			}
			if len(problems) != len(tc.want) {
				t.Fatalf("checkProof(%q) = %q, want %d problems like %q", tc.cell, problems, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(problems[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, problems[i], w)
				}
			}
		})
	}
}
