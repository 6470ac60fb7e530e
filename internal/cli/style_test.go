package cli

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/plan"
)

// Flag parsing is tested apart from running: each command is built with a
// run function that only records the options it was given.

// parse runs cmd on args with a recording run function and returns the
// error of the parse (nil when the run function was reached).
func parse(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(flagError)
	_, err := cmd.ExecuteC()
	return err
}

func TestDoneFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want doneOpts
		err  bool
	}{
		{name: "phase", args: []string{"post-code-review"}, want: doneOpts{phase: "post-code-review"}},
		{name: "task and auto", args: []string{"next-task", "--task", "3", "--auto"}, want: doneOpts{phase: "next-task", task: "3", auto: true}},
		{name: "json", args: []string{"complete", "--json"}, want: doneOpts{phase: "complete", asJSON: true}},
		{name: "no phase", args: nil, err: true},
		{name: "two phases", args: []string{"a", "b"}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *doneOpts
			err := parse(t, newDoneCmdWith(nil, nil, func(o *doneOpts) error { got = o; return nil }), tc.args...)
			if tc.err {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != ExitUsage {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *got, cmp.AllowUnexported(doneOpts{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviewFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want reviewOpts
	}{
		{name: "defaults", want: reviewOpts{}},
		{name: "code of a task", args: []string{"--kind", "code", "--task", "2"}, want: reviewOpts{kind: "code", task: "2"}},
		{name: "json", args: []string{"--kind=all-code", "--json"}, want: reviewOpts{kind: "all-code", asJSON: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *reviewOpts
			if err := parse(t, newReviewCmdWith(nil, nil, func(o *reviewOpts) error { got = o; return nil }), tc.args...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *got, cmp.AllowUnexported(reviewOpts{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanUseFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want planUseOpts
		err  string
	}{
		{name: "show", want: planUseOpts{}},
		{name: "set", args: []string{"login"}, want: planUseOpts{id: "login"}},
		{name: "clear", args: []string{"--clear"}, want: planUseOpts{clear: true}},
		{name: "clear and id", args: []string{"login", "--clear"}, err: "--clear takes no plan id"},
		{name: "unknown flag", args: []string{"--clean"}, err: "unknown flag: --clean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *planUseOpts
			err := parse(t, newPlanUseCmdWith(nil, nil, func(o *planUseOpts) error { got = o; return nil }), tc.args...)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *got, cmp.AllowUnexported(planUseOpts{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInstallFlags(t *testing.T) {
	var got *installOpts
	run := func(o *installOpts) error { got = o; return nil }
	if err := parse(t, newInstallCmdWith(nil, nil, false, run), "codex", "--scope", "project", "--no-trust"); err != nil {
		t.Fatal(err)
	}
	want := installOpts{agent: "codex", scope: "project", noTrust: true}
	if diff := cmp.Diff(want, *got, cmp.AllowUnexported(installOpts{})); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if err := parse(t, newInstallCmdWith(nil, nil, true, run), "claude", "--no-trust"); err == nil {
		t.Error("uninstall accepted --no-trust")
	}
}

// The run functions work on options built by hand, with test streams.
func TestRunPlanUseAndList(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"api", "login"} {
		if err := os.MkdirAll(filepath.Join(dir, ".taskie", "plans", id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".taskie", "plans", id, "plan.md"), []byte("# Plan\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, out, errOut := testStreams("")
	g := &globals{dir: dir, s: s}
	if err := runPlanUse(&planUseOpts{s: s, g: g, id: "api"}); err != nil {
		t.Fatal(err)
	}
	if got, err := readDefault(mustRepo(t, g)); err != nil || got != "api" {
		t.Errorf("default = %q, %v; want api", got, err)
	}
	out.Reset()
	if err := runPlanList(&planListOpts{s: s, g: g}); err != nil {
		t.Fatal(err)
	}
	want := "id\tdefault\tstate\tproblem\tphase\tnext_phase\tmode\ttasks\treview\tpaused\towner\tchanged\n" +
		"api\ttrue\tmissing\t-\t-\t-\tstandalone\t0/0\t-\tfalse\t-\tT\n" +
		"login\tfalse\tmissing\t-\t-\t-\tstandalone\t0/0\t-\tfalse\t-\tT\n"
	got := regexp.MustCompile(`\t\d{4}-\d\d-\d\dT[0-9:]+Z\n`).ReplaceAllString(out.String(), "\tT\n") // the changed time
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan list (-want +got):\n%s\nstderr: %s", diff, errOut)
	}
}

func mustRepo(t *testing.T, g *globals) *plan.Repo {
	t.Helper()
	r, err := g.repo()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExitCodes: the typed exit codes, end to end.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"version"}, ExitOK},
		{[]string{"-C", dir, "init"}, ExitOK},
		{[]string{"-C", dir, "plan", "new", "p"}, ExitOK},
		{[]string{"-C", dir, "validate"}, ExitOK},
		{[]string{"-C", dir, "plan", "nwe", "x"}, ExitUsage},
		{[]string{"-C", dir, "done", "post-code-reveiw"}, ExitUsage},
		{[]string{"-C", dir, "status", "--jsno"}, ExitUsage},
	} {
		s, _, errOut := testStreams("")
		if got := Run(tc.args, *s); got != tc.want {
			t.Errorf("taskie %v: exit %d, want %d (%s)", tc.args, got, tc.want, errOut)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".taskie", "plans", "p", "state.json"), []byte("{\n\"phase\": \"new-plan\"\n\"tdd\": false}"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, _ := testStreams("")
	if got := Run([]string{"-C", dir, "validate"}, *s); got != ExitProblems {
		t.Errorf("validate on a malformed state.json: exit %d, want %d", got, ExitProblems)
	}
}
