package taskie

// The architecture test: the import rules and the one file layer that
// docs/architecture.md describes, checked on the source itself so that a
// change that breaks them fails the build instead of a review.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/taskie-dev/taskie/"

// goPackage is one directory's production (non-test) Go files, parsed.
type goPackage struct {
	dir   string // slash path from the repository root, e.g. internal/store
	files map[string]*ast.File
}

func (p goPackage) imports() map[string][]string {
	out := map[string][]string{}
	for name, f := range p.files {
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			out[path] = append(out[path], name)
		}
	}
	return out
}

func loadPackages(t *testing.T) map[string]goPackage {
	t.Helper()
	pkgs := map[string]goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" && filepath.Dir(path) == "." {
			return nil
		}
		full, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p, ok := pkgs[dir]
		if !ok {
			p = goPackage{dir: dir, files: map[string]*ast.File{}}
			pkgs[dir] = p
		}
		p.files[filepath.ToSlash(path)] = full
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// deciders are the pure packages: values in, a decision out.
var deciders = []string{"internal/workflow", "internal/lifecycle", "internal/ledger", "internal/parallel", "internal/planchoice", "internal/needs", "internal/taskrec"}

// forbiddenInDeciders are the imports that would let a decider do I/O of its own.
var forbiddenInDeciders = []string{module + "internal/store", module + "internal/fsafe", module + "internal/implied", "os/exec", "net", "net/http", "net/url"}

func TestDecidersArePure(t *testing.T) {
	pkgs := loadPackages(t)
	for _, dir := range deciders {
		p, ok := pkgs[dir]
		if !ok {
			continue
		}
		for path, files := range p.imports() {
			if slices.Contains(forbiddenInDeciders, path) {
				t.Errorf("%s imports %s (%s): a decider takes values and does no I/O; gather the value in the shell and pass it in", dir, path, strings.Join(files, ", "))
			}
		}
		for name, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && sel.Sel.Name == "Now" {
						t.Errorf("%s: calls time.Now: a decider takes now as a value", name)
					}
				}
				return true
			})
		}
	}
}

// TestStoreDecidesNothing: the store writes what it is handed and imports no
// decider; the folds of the log (history) read events, not the store.
func TestStoreDecidesNothing(t *testing.T) {
	pkgs := loadPackages(t)
	check := func(dir string, banned []string, why string) {
		p, ok := pkgs[dir]
		if !ok {
			t.Fatalf("package %s not found", dir)
		}
		for path, files := range p.imports() {
			for _, b := range banned {
				if path == module+b {
					t.Errorf("%s imports %s (%s): %s", dir, b, strings.Join(files, ", "), why)
				}
			}
		}
	}
	for _, dir := range []string{"internal/store", "internal/store/postgres"} {
		check(dir, deciders, "the store writes what it is handed and decides nothing")
	}
	check("internal/history", []string{"internal/store", "internal/implied"}, "the folds read the log, not the store")
}

// floors name what each lower room may import of taskie's own packages:
// an import outside its list runs back up the floors docs/architecture.md
// draws (the vocabulary and the file layer at the bottom, the format
// layers above them, the pure deciders above those).
var floors = []struct {
	dirs    []string
	allowed []string
	why     string
}{
	{[]string{"internal/domain", "internal/jsonscan", "internal/fsafe"}, nil,
		"the vocabulary (with the JSON scanner) and the one file layer are the bottom floor: they import nothing of taskie's"},
	{[]string{"internal/state", "internal/events", "internal/plan"}, []string{"internal/domain", "internal/jsonscan", "internal/fsafe", "internal/state", "internal/events", "internal/plan"},
		"a format layer parses and renders bytes: it imports only the vocabulary, the file layer and the other format layers"},
	{deciders, append([]string{"internal/domain", "internal/jsonscan", "internal/state", "internal/events", "internal/plan"}, deciders...),
		"a decider takes values: it imports only the vocabulary, the format layers and the other deciders"},
	{folds, append(append([]string{"internal/domain", "internal/jsonscan", "internal/state", "internal/events", "internal/plan"}, deciders...), folds...),
		"a fold of the log reads events it is handed: it imports only the vocabulary, the format layers, the deciders and the other folds"},
}

// folds are the folds of the event log, side by side in internal/history.
var folds = []string{"internal/history", "internal/history/ledgerlog"}

func TestFloors(t *testing.T) {
	pkgs := loadPackages(t)
	for _, f := range floors {
		for _, dir := range f.dirs {
			p, ok := pkgs[dir]
			if !ok {
				continue
			}
			for path, files := range p.imports() {
				rel, ok := strings.CutPrefix(path, module)
				if !ok || rel == dir || slices.Contains(f.allowed, rel) {
					continue
				}
				t.Errorf("%s imports %s (%s): %s", dir, rel, strings.Join(files, ", "), f.why)
			}
		}
	}
}

// fileCalls are the os functions that read, create, replace or remove a
// file by name. On a path inside the repository they must go through
// internal/fsafe, which never follows a link out, opens only regular files
// without blocking, bounds sizes and creates temp files exclusively.
var fileCalls = []string{"ReadFile", "WriteFile", "Create", "Open", "OpenFile", "Rename", "Remove", "RemoveAll", "Mkdir", "MkdirAll", "MkdirTemp", "CreateTemp"}

// fileCallsAllowed are the files that may call them, each with the reason
// the paths it touches are not the repository's.
var fileCallsAllowed = map[string]string{
	"bench/":                            "benchmark programs, working in their own temp directories",
	"e2e/":                              "the scripted API servers of the real-client tests",
	"demo/":                             "`make demo` writes its sample project",
	"internal/fsafe/":                   "the safe file layer itself",
	"internal/testtools/":               "test programs (the fake reviewer, the test summary) writing their own temp files",
	"internal/benchfix/":                "benchmark fixtures, written into the benchmark's temp directory",
	"internal/store/postgres/pgtest/":   "the test PostgreSQL server's temp data directory",
	"internal/agentsim/":                "the demo's simulated agent writes the sample project as an agent would",
	"internal/planchoice/tail_unix.go":  "the agent's transcript: a path the client names outside the repository, opened non-blocking and read as a bounded tail",
	"internal/planchoice/tail_other.go": "the agent's transcript (see tail_unix.go)",
	"internal/hook/sessionstart.go":     "CLAUDE_ENV_FILE: the client's own file, named by the client",
	"internal/review/codextmp.go":       "the codex reviewer's private temp directory under $TMPDIR",
	"internal/review/codex.go":          "files in the codex reviewer's private temp directory",
	"internal/review/proc_linux.go":     "/proc, to recognise a reviewer's process group",
	"internal/trust/trust.go":           "the user's own trust store in $XDG_STATE_HOME (random exclusive temp file, rename)",
	"internal/events/eventstest/":       "test support: reads a plan's log in the tests' temp directories",
	"internal/config/box.go":            "the user's own ~/.claude.json, read for Claude Code's folder trust",
	"internal/cli/configsetcmd.go":      "creates the user's own config directory ($XDG_CONFIG_HOME/taskie) for `config set --scope user`",
	"internal/cli/taskcmd.go":           "`task output --file`: a file the user names on the command line",
}

func allowedFileCall(path string) bool {
	for prefix := range fileCallsAllowed {
		if path == prefix || strings.HasSuffix(prefix, "/") && strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// TestOneFileLayer: no package but the file layer reads or writes a file by
// name with os, except the few listed in fileCallsAllowed.
func TestOneFileLayer(t *testing.T) {
	pkgs := loadPackages(t)
	for _, p := range pkgs {
		for name, f := range p.files {
			if allowedFileCall(name) {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" && slices.Contains(fileCalls, sel.Sel.Name) {
					t.Errorf("%s: os.%s: read and write repository files through internal/fsafe (or list this file in fileCallsAllowed with its reason)", name, sel.Sel.Name)
				}
				return true
			})
		}
	}
	for prefix := range fileCallsAllowed {
		if _, err := os.Stat(strings.TrimSuffix(prefix, "/")); err != nil {
			t.Errorf("fileCallsAllowed names %s, which does not exist: remove it", prefix)
		}
	}
}
