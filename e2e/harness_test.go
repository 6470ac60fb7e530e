//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/claudeapi"
)

// rig is one project driven by the real client over several `claude -p`
// runs, each a turn of its own (a new session every time, as a user who
// runs `/taskie:continue-plan` in a fresh `claude -p` would), against one
// scripted server.
type rig struct {
	t                 *testing.T
	ctx               context.Context
	claude, root, bin string
	proj, home        string
	stopLog           string // the probe Stop hook's record ("" without probe)
	srv               *claudeapi.Server
	env               []string
	// extra are CLI arguments for every turn (e.g. --plugin-dir).
	extra []string
	// turns lists the results of the turns run so far.
	turns []turnResult
}

type turnResult struct {
	result
	name string
	took time.Duration
}

// newRig makes the directories, the user configuration (with the probe
// Stop hook when probe is set) and the server; the project is empty.
func newRig(ctx context.Context, t *testing.T, claude, root, bin string, probe bool, script claudeapi.Script) *rig {
	t.Helper()
	work := t.TempDir()
	r := &rig{t: t, ctx: ctx, claude: claude, root: root, bin: bin,
		proj: filepath.Join(work, "project"), home: filepath.Join(work, "home")}
	mkdirs(t, r.proj, r.home, filepath.Join(r.home, ".claude"))
	if probe {
		r.stopLog = filepath.Join(work, "stop-inputs.jsonl")
		seedHome(t, r.home, r.stopLog)
	}
	script.Dir = r.proj
	r.srv = claudeapi.Start(script, claudeapi.Options{Log: testLog{t}, DumpDir: dumpDir(t)})
	t.Cleanup(r.srv.Close)
	r.env = claudeEnv(t, bin, r.home, r.srv.URL())
	return r
}

func (r *rig) planDir(id string) string { return filepath.Join(r.proj, ".taskie", "plans", id) }

// turn runs one `claude -p prompt` whose agent plays steps, then answers
// the Stop hook's blocks as the script says.
func (r *rig) turn(name, prompt string, steps ...claudeapi.Reply) turnResult {
	r.t.Helper()
	r.srv.Update(func(s *claudeapi.Script) { s.FirstTurn = steps })
	args := append([]string{"-p", prompt,
		"--output-format", "json",
		"--permission-mode", "dontAsk",
		"--allowedTools", "Bash(taskie *)", "Bash(git *)", "Read", "Write",
	}, r.extra...)
	start := time.Now()
	stdout, stderr, err := runClaude(r.ctx, r.t, r.claude, r.proj, r.env, args...)
	took := time.Since(start)
	r.t.Logf("turn %q: claude -p took %s", name, took.Round(time.Millisecond))
	if err != nil {
		r.t.Fatalf("turn %q: claude -p: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout, stderr)
	}
	res := parseResult(r.t, stdout)
	if len(res.PermissionDenials) > 0 {
		r.t.Errorf("turn %q: permission denials: %s", name, res.PermissionDenials)
	}
	for _, prev := range r.turns {
		if prev.SessionID == res.SessionID {
			r.t.Errorf("turn %q ran in the session of turn %q (%s); every claude -p must be a new session", name, prev.name, res.SessionID)
		}
	}
	tr := turnResult{result: res, name: name, took: took}
	r.turns = append(r.turns, tr)
	return tr
}

// taskie runs the built taskie in the project; it returns the combined
// output and the exit code.
func (r *rig) taskie(args ...string) (string, int) {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(r.bin, "taskie"), args...)
	cmd.Dir, cmd.Env = r.proj, r.env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	r.t.Fatalf("taskie %s: %v\n%s", strings.Join(args, " "), err, out)
	return "", -1
}

// bashOutput is what the agent of session saw from its Bash call of
// command: the tool result in its next request ("" if it made no such
// call). With several such calls, the first one's.
func bashOutput(srv *claudeapi.Server, session, command string) (string, bool) {
	agent := srv.Calls(claudeapi.Agent)
	for i, rec := range agent {
		if rec.Session != session || rec.Reply != "Bash "+command {
			continue
		}
		for _, next := range agent[i+1:] {
			if next.Session == session {
				return strings.Join(next.ToolResults, "\n"), true
			}
		}
	}
	return "", false
}

// sessionCalls are the agent requests of one session.
func sessionCalls(srv *claudeapi.Server, session string) []claudeapi.Record {
	var out []claudeapi.Record
	for _, rec := range srv.Calls(claudeapi.Agent) {
		if rec.Session == session {
			out = append(out, rec)
		}
	}
	return out
}

// feedbacks are the distinct Stop hook blocks the agent of session saw.
func feedbacks(srv *claudeapi.Server, session string) []string {
	var out []string
	for _, rec := range sessionCalls(srv, session) {
		if rec.Feedback != "" && (len(out) == 0 || out[len(out)-1] != rec.Feedback) {
			out = append(out, rec.Feedback)
		}
	}
	return out
}

// noToolErrors fails on any failed tool call the server saw.
func noToolErrors(t *testing.T, srv *claudeapi.Server) {
	t.Helper()
	for _, rec := range srv.Records() {
		if len(rec.ToolErrors) > 0 {
			t.Errorf("request #%d (%s, session %.8s): tool errors: %q", rec.Seq, rec.Role, rec.Session, rec.ToolErrors)
		}
	}
}

// decision is one line of taskie's hook log about a Stop.
type decision struct {
	Msg      string `json:"msg"`
	Plan     string `json:"plan"`
	Session  string `json:"session"`
	Active   bool   `json:"active"`
	Decision string `json:"decision"`
	Why      string `json:"why"`
}

// stopDecisions reads taskie's log of a plan's Stop hook decisions.
func stopDecisions(t *testing.T, path string) []decision {
	t.Helper()
	var out []decision
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		var d decision
		if json.Unmarshal([]byte(line), &d) == nil && d.Msg == "stop" {
			out = append(out, d)
		}
	}
	return out
}

// of keeps the decisions of one session.
func of(ds []decision, session string) []decision {
	var out []decision
	for _, d := range ds {
		if d.Session == session {
			out = append(out, d)
		}
	}
	return out
}

// summary is "block (why), allow (why), …".
func summary(ds []decision) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.Decision+" ("+d.Why+")")
	}
	return strings.Join(parts, ", ")
}

// event is one line of a plan's events.jsonl.
type event struct {
	TS     string         `json:"ts"`
	Event  string         `json:"event"`
	To     string         `json:"to"`
	Task   string         `json:"task"`
	Actor  string         `json:"actor"`
	Reason string         `json:"reason"`
	Meta   map[string]any `json:"meta"`
	Set    map[string]any `json:"set"`
}

func planEvents(t *testing.T, path string) []event {
	t.Helper()
	var out []event
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("%s: not JSON: %v: %s", path, err, line)
			continue
		}
		out = append(out, e)
	}
	return out
}

// planState is the part of state.json the tests read.
type planState struct {
	Phase            string  `json:"phase"`
	NextPhase        *string `json:"next_phase"`
	PhaseIteration   *int    `json:"phase_iteration"`
	ConsecutiveClean int     `json:"consecutive_clean"`
	CurrentTask      any     `json:"current_task"`
	SessionID        string  `json:"session_id"`
}

func (s planState) next() string {
	if s.NextPhase == nil {
		return ""
	}
	return *s.NextPhase
}

func readState(t *testing.T, planDir string) planState {
	t.Helper()
	var s planState
	readJSON(t, filepath.Join(planDir, "state.json"), &s)
	return s
}

// wantFiles fails for every named file of dir that is missing, and for
// every unwanted one that exists.
func wantFiles(t *testing.T, dir string, want, unwanted []string) {
	t.Helper()
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	for _, f := range unwanted {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("unexpected %s", f)
		}
	}
}

// matchStops checks that taskie logged a decision for every Stop hook
// call the probe recorded, in order, for the same session and with the
// same stop_hook_active: no stop went by with the hook silent.
func matchStops(t *testing.T, stopLog string, ds []decision) {
	t.Helper()
	inputs := stopInputs(t, stopLog)
	if len(inputs) != len(ds) {
		t.Errorf("the client ran the Stop hook %d times, taskie logged %d decisions (%s)", len(inputs), len(ds), summary(ds))
	}
	for i := 0; i < len(inputs) && i < len(ds); i++ {
		if in, d := inputs[i], ds[i]; in.SessionID != d.Session || in.StopHookActive != d.Active {
			t.Errorf("stop %d: the client sent session %s, stop_hook_active %v; taskie logged session %s, active %v",
				i+1, in.SessionID, in.StopHookActive, d.Session, d.Active)
		}
	}
}

// stopSystemMessages are the systemMessages of the session's allowed
// stops, as the client recorded them in the session's transcript
// (attachments of type hook_system_message): `claude -p` prints none.
func (r *rig) stopSystemMessages(tr turnResult) []string {
	r.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(r.home, ".claude", "projects", "*", tr.SessionID+".jsonl"))
	if len(paths) != 1 {
		r.t.Errorf("turn %q: transcript of session %s not found: %q", tr.name, tr.SessionID, paths)
		return nil
	}
	var msgs []string
	for _, line := range strings.Split(readFile(r.t, paths[0]), "\n") {
		var rec struct {
			Attachment struct {
				Type      string `json:"type"`
				Content   any    `json:"content"`
				HookEvent string `json:"hookEvent"`
			} `json:"attachment"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Attachment.Type == "hook_system_message" && rec.Attachment.HookEvent == "Stop" {
			msgs = append(msgs, fmt.Sprint(rec.Attachment.Content))
		}
	}
	return msgs
}

// wantAwaitingCommit: task 1 passed its code review in a git repository
// and waits for its commit (docs/lifecycle.md): committing in state.json,
// in-progress in tasks.md until the commit is seen.
func wantAwaitingCommit(t *testing.T, planDir string) {
	t.Helper()
	if tasks := readFile(t, filepath.Join(planDir, "tasks.md")); !regexp.MustCompile(`(?m)^\|\s*1\s*\|\s*in-progress\s*\|`).MatchString(tasks) {
		t.Errorf("tasks.md: row 1 is not in-progress (awaiting its commit):\n%s", tasks)
	}
	if st := readFile(t, filepath.Join(planDir, "state.json")); !regexp.MustCompile(`"1":\s*\{\s*"state":\s*"committing"`).MatchString(st) {
		t.Errorf("state.json: task 1 is not in committing:\n%s", st)
	}
}
