//go:build linux || darwin

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// initBudget is what each of taskie's own packages may allocate while the
// process starts (package-level variables and init functions), in
// allocations. Every process pays it, the Stop hook included, before it
// does anything: build tables, regular expressions and templates at first
// use instead (a function behind a sync.Once allocates nothing at start; a
// sync.OnceValue variable, 2 allocations). A package not listed may
// allocate nothing.
// Lower a figure when it falls; raise one only with a reason.
var initBudget = map[string]int{
	"internal/cli":            8,  // three patterns behind sync.OnceValue, the claims status cache
	"internal/store/postgres": 1,  // registers the postgres:// store; its SQL is built at first use
	"internal/lifecycle":      20, // the transition tables' maps
	"internal/review":         14, // the reviewers' and prompts' maps; three sync.OnceValue (two schemas, the codex token line)
	"internal/ledger":         8,
	"internal/parallel":       4, // the priority words map
	"internal/install":        6,
	"internal/plan":           6,
	"internal/needs":          4,
	"internal/hook":           4,
	"internal/domain":         2,
	"internal/config":         2,
	"internal/store":          2,
	"internal/continuity":     2,
}

const module = "github.com/taskie-dev/taskie/"

var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

type initCost struct {
	pkg           string
	ms            float64
	bytes, allocs int
}

// TestStartupInitBudget runs the built binary the way the Stop hook and
// `--version` run it, with the runtime's init trace on, and fails when one
// of taskie's packages does more work at start than initBudget allows.
// It asserts allocations, never time (the machine may be loaded); the
// time, the other modules' share and the page faults are logged.
func TestStartupInitBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "taskie")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	outside := t.TempDir() // no .taskie: the stop has nothing to do
	floor := filepath.Join(t.TempDir(), "depsfloor")
	build = exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", floor, "../../bench/depsfloor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build depsfloor: %v\n%s", err, out)
	}

	// main prints --version without building any command: the same
	// version as `taskie version --json`.
	var v struct{ Version string }
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil || json.Unmarshal(out, &v) != nil || v.Version == "" {
		t.Fatalf("taskie version --json: %v: %s", err, out)
	}
	for _, flag := range []string{"--version", "-v"} {
		if out, err := exec.Command(bin, flag).Output(); err != nil || string(out) != "taskie "+v.Version+"\n" {
			t.Errorf("taskie %s = %q, %v; want %q", flag, out, err, "taskie "+v.Version+"\n")
		}
	}
	// The floor bench/run times taskie against initialises every package
	// taskie initialises but taskie's own: what taskie costs above it is
	// taskie's.
	t.Run("the floor initialises the others' packages", func(t *testing.T) {
		mine, _ := traceInit(t, bin, outside, "", "--version")
		floorCosts, floorFaults := traceInit(t, floor, outside, "")
		var want, got []string
		for _, c := range mine {
			if !strings.HasPrefix(c.pkg, module) {
				want = append(want, c.pkg)
			}
		}
		for _, c := range floorCosts {
			got = append(got, c.pkg)
		}
		sort.Strings(want)
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("packages initialised by taskie --version but not taskie's own (-) and by bench/depsfloor (+):\n%s", diff)
		}
		t.Logf("the floor: %d packages initialised, %d minor page faults", len(got), floorFaults)
	})
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"version", []string{"--version"}, ""},
		{"hook stop outside a project", []string{"hook", "stop"}, `{"session_id":"s1","cwd":` + quote(outside) + `,"stop_hook_active":false,"hook_event_name":"Stop"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			costs, faults := traceInit(t, bin, outside, tc.stdin, tc.args...)
			var ours, theirs initCost
			var lines []string
			for _, c := range costs {
				name, mine := strings.CutPrefix(c.pkg, module)
				if !mine {
					theirs.ms += c.ms
					theirs.bytes += c.bytes
					theirs.allocs += c.allocs
					if c.allocs > 0 {
						lines = append(lines, fmt.Sprintf("  %-55s %6d B %4d allocs", c.pkg, c.bytes, c.allocs))
					}
					continue
				}
				ours.ms += c.ms
				ours.bytes += c.bytes
				ours.allocs += c.allocs
				if c.allocs > initBudget[name] {
					t.Errorf("%s allocates %d times (%d bytes) at start, budget %d: build what it needs at first use (behind a sync.Once), not in a package-level variable or init",
						name, c.allocs, c.bytes, initBudget[name])
				}
			}
			sort.Strings(lines)
			t.Logf("%d packages initialised, %d minor page faults; taskie's: %.3f ms, %d B, %d allocs; other modules and the standard library: %.3f ms, %d B, %d allocs:\n%s",
				len(costs), faults, ours.ms, ours.bytes, ours.allocs, theirs.ms, theirs.bytes, theirs.allocs, strings.Join(lines, "\n"))
		})
	}
}

// traceInit runs bin with GODEBUG=inittrace=1 and returns the cost of
// every package's initialisation and the process's minor page faults.
func traceInit(t *testing.T, bin, dir, stdin string, args ...string) ([]initCost, int64) {
	t.Helper()
	name := filepath.Base(bin) + " " + strings.Join(args, " ")
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "TASKIE_HOOK_SKIP=", "CLAUDECODE=")
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, stderr.String())
	}
	var costs []initCost
	for _, l := range strings.Split(stderr.String(), "\n") {
		m := initLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		c := initCost{pkg: m[1]}
		c.ms, _ = strconv.ParseFloat(m[2], 64)
		c.bytes, _ = strconv.Atoi(m[3])
		c.allocs, _ = strconv.Atoi(m[4])
		costs = append(costs, c)
	}
	if len(costs) == 0 {
		t.Fatalf("%s printed no init trace:\n%s", name, stderr.String())
	}
	var faults int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		faults = ru.Minflt
	}
	return costs, faults
}

// TestImportsAreTaskies: bench/depsfloor, the floor bench/hookbench times
// taskie against, imports exactly the packages that taskie's own packages
// (as built for Linux) import from outside the module, so that it
// initialises the same packages at start as taskie, and no more. It lives
// here, not beside the floor, so that a change to any of taskie's packages
// runs it again (this test binary links them all).
func TestImportsAreTaskies(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ours := func(path string) bool { return strings.HasPrefix(path+"/", module) }
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

	file, err := parser.ParseFile(token.NewFileSet(), "../../bench/depsfloor/main.go", nil, parser.ImportsOnly)
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
		t.Errorf("bench/depsfloor/main.go imports other packages than taskie's code (-want +got):\n%s\nthe imports to paste there (io and os without the _):\n%s", diff, list.String())
	}
}
