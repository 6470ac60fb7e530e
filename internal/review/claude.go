package review

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskie-dev/taskie/internal/config"
)

// claudeReviewer runs `claude -p` (docs/hook.md#the-reviewer).
type claudeReviewer struct{}

const claudeHint = `install Claude Code (https://docs.anthropic.com/en/docs/claude-code) or set "reviewer" in .taskie/config.json`

// claudeArgs builds the argv. dontAsk, not --dangerously-skip-permissions:
// the CLI refuses the latter when running as root. The reviewer runs boxed
// (docs/hook.md, "The reviewer's box"): only the tools of reviewerTools, no
// MCP server (--strict-mcp-config without --mcp-config), the user's own
// settings only (not the repository's .claude/settings.json, which could
// enable its .mcp.json servers or widen permissions), hooks off.
func claudeArgs(req Request, bash bool) []string {
	argv := append([]string{}, commandOr(req.Command, "claude")...)
	argv = append(argv, "-p")
	if req.Model != "" {
		argv = append(argv, "--model", string(req.Model))
	}
	argv = append(argv,
		"--output-format", "json",
		"--json-schema", SchemaFor(req.Kind),
		"--permission-mode", "dontAsk",
		"--allowedTools", strings.Join(reviewerTools(req.Tools, req.ReviewFile, bash), ","),
		"--strict-mcp-config",
		"--setting-sources", "user",
		"--settings", `{"disableAllHooks":true}`,
	)
	if !bash {
		// Not even offered: dontAsk would deny it, but the model would try.
		argv = append(argv, "--disallowedTools", "Bash")
	}
	return argv
}

// reviewerTools is the reviewer's allow list: the configured tools (by
// default Read, Grep, Glob, Bash, Write), where a bare Write, Edit or
// MultiEdit becomes the right to edit the review file alone (an Edit rule
// covers every tool that writes a file; "//" starts an absolute path), and
// Bash goes unless the repository is trusted (bash).
func reviewerTools(tools []string, reviewFile string, bash bool) []string {
	out := make([]string, 0, len(tools))
	add := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, t := range tools {
		name, _, _ := strings.Cut(strings.TrimSpace(t), "(")
		switch {
		case name == "Bash":
			if bash {
				add(t)
			}
		case t == "Write" || t == "Edit" || t == "MultiEdit":
			if reviewFile != "" {
				add("Edit(/" + filepath.ToSlash(reviewFile) + ")")
			}
		default:
			add(t)
		}
	}
	return out
}

// reviewerBox decides whether the reviewer may use Bash in a repository;
// tests replace it.
var reviewerBox = config.ReviewerBox

func (claudeReviewer) Review(ctx context.Context, req Request) (Result, error) {
	req = normalize(req)
	prompt, err := Prompt(req)
	if err != nil {
		return Result{}, failf(FailExit, nil, "claude reviewer: not started: %v", err)
	}
	inv := invocation{name: "claude", hint: claudeHint, argv: claudeArgs(req, reviewerBox(req.Root).Bash), stdin: prompt, dir: req.Root,
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
	return finishAnswer(req, res, out.raw)
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
