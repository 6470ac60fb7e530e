package cli

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/taskie-dev/taskie"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"taskie": func() {
			Assets = taskie.Assets
			os.Exit(Main(os.Args[1:]))
		},
	})
}

var (
	fakeOnce sync.Once
	fakeBin  string
	fakeErr  error
)

// buildFake builds the fake reviewer once and installs it as claude and codex.
func buildFake(t *testing.T) string {
	fakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "taskie-fake-*")
		if err != nil {
			fakeErr = err
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "claude"), "../testtools/fakereviewer").CombinedOutput()
		if err != nil {
			fakeErr = err
			t.Logf("%s", out)
			return
		}
		data, _ := os.ReadFile(filepath.Join(dir, "claude"))
		fakeErr = os.WriteFile(filepath.Join(dir, "codex"), data, 0o755)
		fakeBin = dir
	})
	if fakeErr != nil {
		t.Fatalf("building the fake reviewer: %v", fakeErr)
	}
	return fakeBin
}

// TestScripts runs every testdata/scripts/*.txtar against the real binary.
// The fake reviewer is first on PATH as claude and codex ($FAKEBIN); it
// takes its verdicts from $WORK/verdicts and logs each run to
// $WORK/reviews.jsonl.
func TestScripts(t *testing.T) {
	bin := buildFake(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/scripts",
		Setup: func(env *testscript.Env) error {
			env.Setenv("TASKIE_HOOK_SKIP", "")
			env.Setenv("CLAUDECODE", "")
			env.Setenv("FAKEBIN", bin)
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("FAKE_REVIEW_SCRIPT", filepath.Join(env.WorkDir, "verdicts"))
			env.Setenv("FAKE_REVIEW_LOG", filepath.Join(env.WorkDir, "reviews.jsonl"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"hookin": cmdHookin,
		},
	})
}

// cmdHookin writes hookin.json, the Stop hook input an agent would send:
//
//	hookin [-active] [-session ID] [-cwd DIR] [-transcript FILE]
//
// cwd defaults to the script's current directory.
func cmdHookin(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! hookin")
	}
	fs := flag.NewFlagSet("hookin", flag.ContinueOnError)
	active := fs.Bool("active", false, "stop_hook_active")
	session := fs.String("session", "s1", "session_id")
	cwd := fs.String("cwd", "", "cwd")
	transcript := fs.String("transcript", "", "transcript_path")
	if err := fs.Parse(args); err != nil {
		ts.Fatalf("hookin: %v", err)
	}
	if *cwd == "" {
		*cwd = ts.MkAbs(".")
	} else {
		*cwd = ts.MkAbs(*cwd)
	}
	in := map[string]any{"session_id": *session, "cwd": *cwd, "stop_hook_active": *active, "hook_event_name": "Stop"}
	if *transcript != "" {
		in["transcript_path"] = ts.MkAbs(*transcript)
	}
	data, _ := json.Marshal(in)
	ts.Check(os.WriteFile(ts.MkAbs("hookin.json"), data, 0o644))
}
