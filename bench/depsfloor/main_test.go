package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/taskie-dev/taskie"

// TestImportsAreTaskies: the floor imports exactly the packages that
// taskie's own packages import from outside the module, so that it
// initialises the same packages at start as taskie, and no more.
func TestImportsAreTaskies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/cmd/taskie").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if !ours(f[0]) {
			continue
		}
		for _, imp := range f[1:] {
			if !ours(imp) && !slices.Contains(want, imp) {
				want = append(want, imp)
			}
		}
	}
	slices.Sort(want)

	file, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		got = append(got, p)
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		var list strings.Builder
		for _, p := range want {
			list.WriteString("\t_ \"" + p + "\"\n")
		}
		t.Errorf("bench/depsfloor/main.go imports other packages than taskie's code (-want +got):\n%s\nthe imports to paste (io and os without the _):\n%s", diff, list.String())
	}
}

func ours(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }
