package review

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
)

// codexReviewer runs `codex exec` (SPEC §6).
type codexReviewer struct{}

const codexHint = `install the Codex CLI (npm install -g @openai/codex) or set "reviewer" in .taskie/config.json`

func codexArgs(req Request, schemaFile, lastFile string) []string {
	argv := append([]string{}, commandOr(req.Command, "codex")...)
	argv = append(argv, "exec")
	if req.Model != "" {
		argv = append(argv, "-m", req.Model)
	}
	return append(argv, "--output-schema", schemaFile, "-o", lastFile, "-")
}

func (codexReviewer) Review(ctx context.Context, req Request) (Result, error) {
	req = normalize(req)
	prompt, err := Prompt(req)
	if err != nil {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: %v", err)
	}
	tmp, err := os.MkdirTemp("", "taskie-codex-")
	if err != nil {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: %v", err)
	}
	defer os.RemoveAll(tmp)
	schemaFile := filepath.Join(tmp, "schema.json")
	lastFile := filepath.Join(tmp, "last-message.json")
	if err := os.WriteFile(schemaFile, []byte(CodexSchema), 0o600); err != nil {
		return Result{}, failf(FailExit, nil, "codex reviewer: not started: %v", err)
	}

	inv := invocation{name: "codex", hint: codexHint, argv: codexArgs(req, schemaFile, lastFile), stdin: prompt, dir: req.Root}
	out, err := run(ctx, inv, req.Timeout)
	if err != nil {
		return Result{Raw: out.raw}, err
	}
	res, err := ParseCodex(codexMessage(lastFile, out.stdout))
	res.Raw = out.raw
	if err != nil {
		return res, withRaw(err, out.raw)
	}
	res.Model = req.Model
	res.DurationMS = out.elapsed.Milliseconds()
	return finish(req, res)
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
