package review

import (
	"context"
	"strings"
)

// claudeReviewer runs `claude -p` (SPEC §6).
type claudeReviewer struct{}

const claudeHint = `install Claude Code (https://docs.anthropic.com/en/docs/claude-code) or set "reviewer" in .taskie/config.json`

// claudeArgs builds the argv. dontAsk, not --dangerously-skip-permissions:
// the CLI refuses the latter when running as root.
func claudeArgs(req Request) []string {
	argv := append([]string{}, commandOr(req.Command, "claude")...)
	argv = append(argv, "-p")
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	return append(argv,
		"--output-format", "json",
		"--json-schema", Schema,
		"--permission-mode", "dontAsk",
		"--allowedTools", strings.Join(req.Tools, ","),
		"--settings", `{"disableAllHooks":true}`,
	)
}

func (claudeReviewer) Review(ctx context.Context, req Request) (Result, error) {
	req = normalize(req)
	prompt, err := Prompt(req)
	if err != nil {
		return Result{}, failf(FailExit, nil, "claude reviewer: not started: %v", err)
	}
	inv := invocation{name: "claude", hint: claudeHint, argv: claudeArgs(req), stdin: prompt, dir: req.Root}
	out, err := run(ctx, inv, req.Timeout)
	if err != nil {
		return Result{Raw: out.raw}, err
	}
	res, err := ParseClaude(out.stdout)
	res.Raw = out.raw
	if err != nil {
		return res, withRaw(err, out.raw)
	}
	res.Model = req.Model
	if res.DurationMS == 0 {
		res.DurationMS = out.elapsed.Milliseconds()
	}
	return finish(req, res)
}

func commandOr(cmd []string, def string) []string {
	if len(cmd) == 0 {
		return []string{def}
	}
	return cmd
}
