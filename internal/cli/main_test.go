package cli

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"taskie": func() { os.Exit(Main(os.Args[1:])) },
	})
}

// TestScripts runs every testdata/scripts/*.txtar against the real binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/scripts",
		RequireExplicitExec: false,
		Setup:               setupScript,
		Cmds:                scriptCmds(),
	})
}

// setupScript gives every script a clean environment.
func setupScript(env *testscript.Env) error {
	env.Setenv("TASKIE_HOOK_SKIP", "")
	env.Setenv("CLAUDECODE", "")
	return nil
}

func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){}
}
