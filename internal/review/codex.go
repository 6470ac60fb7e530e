package review

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/taskie-dev/taskie/internal/domain"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// codexReviewer runs `codex exec` (docs/hook.md#the-reviewer).
type codexReviewer struct{}

const codexHint = `install the Codex CLI (npm install -g @openai/codex) or set "reviewer" in .taskie/config.json`

// codexArgs builds the argv. --skip-git-repo-check: a review also runs
// outside a trusted git repository; --ephemeral: reviews stay out of the
// user's `codex resume` history; --disable hooks: the reviewer runs none of
// the user's hooks, taskie's own included; --sandbox read-only: whatever a
// config sets, the reviewer changes nothing; --ignore-rules: no execpolicy
// rules file (a repository's included) lets a command out of the sandbox;
// the project marked untrusted for this run: codex loads none of the
// repository's .codex/ (its config.toml with MCP servers, its hooks.json),
// even where the user trusts the folder; project_doc_max_bytes=0: no
// AGENTS.md of the repository becomes the reviewer's instructions (the
// user's own ~/.codex/AGENTS.md still does). docs/codex.md shows each one
// proven against the real CLI. A Claude model alias is never passed to
// codex.
func codexArgs(req Request, schemaFile, lastFile string) []string {
	argv := append([]string{}, commandOr(req.Command, "codex")...)
	argv = append(argv, "exec", "--skip-git-repo-check", "--ephemeral", "--disable", "hooks", "--sandbox", "read-only", "--ignore-rules",
		"-c", codexUntrusted(req.Root), "-c", "project_doc_max_bytes=0")
	if req.Model != "" && !IsClaudeModel(req.Model) {
		argv = append(argv, "-m", string(req.Model))
	}
	if req.Effort != "" {
		argv = append(argv, "-c", fmt.Sprintf("model_reasoning_effort=%q", req.Effort))
	}
	return append(argv, "--output-schema", schemaFile, "-o", lastFile, "-")
}

// codexUntrusted is the -c value that marks the reviewer's folder and every
// folder above it untrusted for this run only. Codex takes a folder's trust
// from the nearest entry, the project root's included, so the folder alone
// is not enough; the symlink-resolved form is listed too, as codex may look
// it up that way. A dotted key (projects."<path>".trust_level) does not
// work: codex keeps the quotes as part of the key.
func codexUntrusted(root string) string {
	var dirs []string
	seen := map[string]bool{}
	add := func(p string) {
		for ; !seen[p]; p = filepath.Dir(p) {
			seen[p] = true
			dirs = append(dirs, p)
		}
	}
	if abs, err := filepath.Abs(root); err == nil {
		add(abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			add(real)
		}
	}
	var b strings.Builder
	b.WriteString("projects={")
	for i, d := range dirs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(domain.QuoteTOML(d))
		b.WriteString(`={trust_level="untrusted"}`)
	}
	b.WriteByte('}')
	return b.String()
}

// validEffort accepts the effort names codex knows (minimal, low, medium,
// high, xhigh…): lower-case letters only, so the -c value is a plain TOML
// string.
func validEffort(e string) bool {
	for _, r := range e {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func (codexReviewer) Review(ctx context.Context, req Request) (Result, error) {
	req = normalize(req)
	prompt, err := Prompt(req)
	if err != nil {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: %v", err)
	}
	if !validEffort(req.Effort) {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: invalid reasoning effort %q", req.Effort)
	}
	if !utf8.ValidString(req.Root) {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: %q: the project path is not valid UTF-8, so codex cannot be told to ignore the repository's .codex settings; move the project to a UTF-8 path", req.Root)
	}
	tmp, err := codexTempDir()
	if err != nil {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: %v", err)
	}
	defer os.RemoveAll(tmp)
	schemaFile := filepath.Join(tmp, "schema.json")
	lastFile := filepath.Join(tmp, "last-message.json")
	if err := os.WriteFile(schemaFile, []byte(SchemaFor(req.Kind)), 0o600); err != nil {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: %v", err)
	}

	inv := invocation{name: "codex", hint: codexHint, argv: codexArgs(req, schemaFile, lastFile), stdin: prompt, dir: req.Root,
		hold: req.HoldLock, lease: req.Lease, reason: codexReason}
	out, err := run(ctx, inv, req.Timeout)
	if err != nil {
		return Result{Raw: out.raw}, err
	}
	msg := codexMessage(lastFile, out.stdout)
	if len(bytes.TrimSpace(msg)) == 0 {
		return Result{Raw: out.raw}, failf(FailOutput, out.raw, "codex reviewer: no final message: %s", codexReason(out))
	}
	res, err := ParseCodex(msg)
	res.Raw = out.raw
	if err != nil {
		return res, withRaw(err, out.raw)
	}
	res.Model = req.Model
	res.DurationMS = out.elapsed.Milliseconds()
	res.Usage = ParseCodexUsage(out.stdout, out.stderr)
	return finishAnswer(req, res, out.raw)
}

// codexMessage is the final message: the -o file, else the last verdict
// object on stdout, else whatever text there is (so the error shows it).
func codexMessage(lastFile string, stdout []byte) []byte {
	b, _ := os.ReadFile(lastFile)
	if _, ok := findObject(string(b)); ok {
		return b
	}
	if obj, ok := lastObject(stdout); ok {
		return obj
	}
	if len(bytes.TrimSpace(b)) > 0 {
		return b
	}
	return stdout
}

// codexReason is why codex failed: the message of its last error event
// when it printed JSON events (`codex exec --json`), else its last
// `ERROR:` line on stderr (it may print a warning after it), else the last
// line of output.
func codexReason(out output) string {
	for _, b := range [][]byte{out.stdout, out.stderr} {
		if m := lastCodexEventError(b); m != "" {
			return m
		}
	}
	if l := lastLineWhere(out.stderr, func(l string) bool { return strings.Contains(l, "ERROR") }); l != "" {
		return oneLine(l)
	}
	return oneLine(lastReason(out))
}

// codexEvent is the part of a `codex exec --json` event that carries an
// error: {"type":"error","message":…} or
// {"type":"turn.failed","error":{"message":…}}.
type codexEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// lastCodexEventError returns the message of the last error event in b.
func lastCodexEventError(b []byte) string {
	var msg string
	for _, l := range bytes.Split(b, []byte("\n")) {
		l = bytes.TrimSpace(l)
		var ev codexEvent
		if len(l) == 0 || l[0] != '{' || json.Unmarshal(l, &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "error" && ev.Message != "":
			msg = ev.Message
		case ev.Type == "turn.failed" && ev.Error != nil && ev.Error.Message != "":
			msg = ev.Error.Message
		}
	}
	return oneLine(msg)
}
