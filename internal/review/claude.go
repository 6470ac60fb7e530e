package review

import (
	"bytes"
	"context"
	"fmt"
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
		argv = append(argv, "--model", string(req.Model))
	}
	return append(argv,
		"--output-format", "json",
		"--json-schema", Schema(),
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
	inv := invocation{name: "claude", hint: claudeHint, argv: claudeArgs(req), stdin: prompt, dir: req.Root,
		hold: req.HoldLock, lease: req.Lease, reason: claudeReason}
	out, err := run(ctx, inv, req.Timeout)
	if err != nil {
		return Result{Raw: out.raw}, err
	}
	if len(bytes.TrimSpace(out.stdout)) == 0 {
		return Result{Raw: out.raw}, failf(FailOutput, out.raw, "claude reviewer: no answer on stdout: %s", lastReason(out))
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

// claudeReason is why a claude that exited non-zero failed: the .result
// text of an is_error answer (`Not logged in · Please run /login` comes
// that way, with exit code 1), else the last stderr line, else the error
// subtype, else the last stdout line.
func claudeReason(out output) string {
	co, err := decodeClaude(out.stdout)
	failed := err == nil && claudeFailed(co)
	if failed {
		if s := oneLine(resultText(co.Result)); s != "" {
			return s
		}
	}
	if l := lastLine(out.stderr); l != "" {
		return l
	}
	if failed {
		return fmt.Sprintf("reported an error (subtype %q)", co.Subtype)
	}
	return lastReason(out)
}
