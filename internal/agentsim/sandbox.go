package agentsim

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Sandbox is a throw-away project with a fake reviewer first on PATH.
type Sandbox struct {
	Dir    string // project root
	Bin    string // holds claude and codex (the fake reviewer)
	Taskie string
	Env    []string
	// ReviewLog is the fake reviewer's invocation log (JSON lines).
	ReviewLog string
}

// NewSandbox makes a temp project, installs the fake reviewer as claude and
// codex, and writes its verdict script.
func NewSandbox(taskie, reviewer, script string) (sb *Sandbox, err error) {
	root, err := os.MkdirTemp("", "taskie-demo-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(root) // nothing is left behind by a sandbox that failed to set up
		}
	}()
	sb = &Sandbox{Dir: filepath.Join(root, "project"), Bin: filepath.Join(root, "bin")}
	if sb.Taskie, err = filepath.Abs(taskie); err != nil {
		return nil, err
	}
	for _, d := range []string{sb.Dir, sb.Bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"claude", "codex"} {
		if err := copyFile(reviewer, filepath.Join(sb.Bin, name)); err != nil {
			return nil, err
		}
	}
	scriptPath := filepath.Join(root, "verdicts")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		return nil, err
	}
	sb.ReviewLog = filepath.Join(root, "reviews.jsonl")
	sb.Env = append(cleanEnv(os.Environ()),
		"PATH="+sb.Bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_REVIEW_SCRIPT="+scriptPath, "FAKE_REVIEW_LOG="+sb.ReviewLog)
	return sb, nil
}

// cleanEnv drops what would change taskie's or the reviewer's behaviour.
func cleanEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "TASKIE_HOOK_SKIP", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "FAKE_REVIEW_SCRIPT", "FAKE_REVIEW_STATE", "FAKE_REVIEW_LOG":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Agent returns a simulated agent working on plan in this sandbox.
func (sb *Sandbox) Agent(session, plan string, out io.Writer) *Agent {
	return &Agent{Taskie: sb.Taskie, Dir: sb.Dir, Env: sb.Env, Session: session, Plan: plan, Out: out}
}

// PlanFile returns the path of a file in a plan directory.
func (sb *Sandbox) PlanFile(plan, name string) string {
	return filepath.Join(sb.Dir, ".taskie", "plans", plan, name)
}

// Remove deletes the sandbox.
func (sb *Sandbox) Remove() { os.RemoveAll(filepath.Dir(sb.Dir)) }

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
