//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskie-dev/taskie/e2e/claudeapi"
)

// TestRealClientReviewerBox runs taskie's claude reviewer (`taskie review`)
// with the real CLI in a repository that plants an MCP server (.mcp.json,
// approved by its own .claude/settings.json) and hooks in
// .claude/settings.json, each of which touches a marker file when it
// starts. Boxed (--strict-mcp-config, --setting-sources user, hooks off),
// none may start; the reviewer still writes its review file through its
// one write permission. A control run of plain `claude -p` in the same
// repository shows that the plants do start without the box, so the test
// can see them.
func TestRealClientReviewerBox(t *testing.T) {
	t.Parallel()
	claude := requireClaude(t)
	root := repoRoot(t)
	bin := queue(t, root, 8*time.Second)
	ctx, cancel := deadline(t)
	defer cancel()

	work := t.TempDir()
	proj := filepath.Join(work, "project")
	home := filepath.Join(work, "home")
	mkdirs(t, proj, filepath.Join(home, ".claude"))
	newProject(t, bin, proj)
	mcpMarker := filepath.Join(work, "mcp-started")
	hookMarker := filepath.Join(work, "hook-ran")
	plant(t, proj, mcpMarker, hookMarker)

	srv := claudeapi.Start(claudeapi.Script{Dir: proj, Verdicts: []string{"PASS"},
		FirstTurn: []claudeapi.Reply{claudeapi.Text("Nothing to do.")}},
		claudeapi.Options{Log: testLog{t}, DumpDir: dumpDir(t)})
	defer srv.Close()
	env := append(claudeEnv(t, bin, home, srv.URL()), "MCP_TIMEOUT=3000", "XDG_STATE_HOME="+filepath.Join(work, "state"))

	// The plan waits for its tasks review; `taskie review` runs it now.
	out, err := runTaskie(ctx, t, bin, proj, env, "pause")
	if err != nil {
		t.Fatalf("taskie pause: %v\n%s", err, out)
	}
	start := time.Now()
	out, err = runTaskie(ctx, t, bin, proj, env, "review", "--kind", "tasks")
	t.Logf("taskie review took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("taskie review: %v\n%s", err, out)
	}
	if _, err := os.Stat(mcpMarker); err == nil {
		t.Error("the repository's .mcp.json server started inside the reviewer")
	}
	if _, err := os.Stat(hookMarker); err == nil {
		t.Error("a hook of the repository's .claude/settings.json ran inside the reviewer")
	}
	reviews := srv.Calls(claudeapi.Reviewer)
	if len(reviews) == 0 {
		t.Fatalf("the reviewer never asked the model; taskie said:\n%s", out)
	}
	for _, rec := range reviews {
		for _, tool := range rec.Tools {
			if strings.HasPrefix(tool, "mcp__") || tool == "Bash" {
				t.Errorf("the reviewer was offered %s", tool)
			}
		}
	}
	review := filepath.Join(proj, ".taskie", "plans", "p", "tasks-review-1.md")
	if _, err := os.Stat(review); err != nil {
		t.Errorf("no review file: %v", err)
	}
	noToolErrors(t, srv) // the reviewer's Write of its review file was allowed

	// Control: the same repository, the plain CLI.
	stdout, stderr, err := runClaude(ctx, t, claude, proj, env, "-p", "Say hello.", "--output-format", "json")
	if err != nil {
		t.Fatalf("control claude -p: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for what, marker := range map[string]string{"the .mcp.json server": mcpMarker, "the settings hook": hookMarker} {
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("control: %s did not start in a plain `claude -p` either, so this test cannot tell the box from a plant that does nothing", what)
		}
	}
}

// plant writes the repository's attack: an MCP server and hooks that touch
// the markers when they start.
func plant(t *testing.T, proj, mcpMarker, hookMarker string) {
	t.Helper()
	mcp := map[string]any{"mcpServers": map[string]any{"planted": map[string]any{
		"command": "sh", "args": []string{"-c", "touch '" + mcpMarker + "'; exec sleep 20"},
	}}}
	touch := []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "touch '" + hookMarker + "'"}}}}
	settings := map[string]any{
		"enableAllProjectMcpServers": true,
		"hooks":                      map[string]any{"SessionStart": touch, "UserPromptSubmit": touch, "PreToolUse": touch, "Stop": touch},
	}
	b, _ := json.Marshal(mcp)
	writeFile(t, filepath.Join(proj, ".mcp.json"), string(b))
	mkdirs(t, filepath.Join(proj, ".claude"))
	b, _ = json.Marshal(settings)
	writeFile(t, filepath.Join(proj, ".claude", "settings.json"), string(b))
}

// runTaskie runs the built taskie in dir with env, bounded by ctx, and ends
// every process it left (the reviewer's included).
func runTaskie(ctx context.Context, t *testing.T, bin, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	m := markerOf(t, env)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "taskie"), args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	killMarked(t, m)
	return string(out), err
}
