package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func codex(inv invocation) int {
	if len(inv.args) == 0 || inv.args[0] != "exec" {
		fmt.Fprintln(os.Stderr, "fake codex: only `codex exec` is supported")
		return 2
	}
	if bad := unknownExecArg(inv.args[1:]); bad != "" {
		fmt.Fprintf(os.Stderr, "error: unexpected argument '%s' found\n\nUsage: codex exec [OPTIONS] [PROMPT] [COMMAND]\n\nFor more information, try '--help'.\n", bad)
		return 2
	}
	if msg := checkSchema(flagValue(inv.args, "--output-schema")); msg != "" {
		fmt.Fprintln(os.Stderr, "ERROR:", msg)
		return 1
	}
	model := flagValue(inv.args, "-m", "--model")
	cwd, _ := os.Getwd()
	// Progress goes to stderr, the final message to stdout, like codex exec.
	fmt.Fprintf(os.Stderr, "OpenAI Codex (fake)\n--------\nworkdir: %s\nmodel: %s\nsandbox: read-only\n--------\nthinking\n", cwd, model)

	var msg string
	switch inv.step {
	case "CRASH":
		fmt.Fprintln(os.Stderr, "fake codex: crashed on purpose")
		return 3
	case "ERROR":
		fmt.Fprintln(os.Stderr, "ERROR: unexpected status 400 Bad Request: fake turn failure")
		return 1
	case "NOMESSAGE":
		// A turn that failed before any agent message: codex still writes
		// the -o file, empty, and warns about it after the error.
		fmt.Fprintln(os.Stderr, "ERROR: stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses)")
		if out := flagValue(inv.args, "-o", "--output-last-message"); out != "" {
			os.WriteFile(out, nil, 0o644)
			fmt.Fprintln(os.Stderr, "Warning: no last agent message; wrote empty content to", out)
		}
		return 1
	case "SLEEP":
		return sleepForever()
	case "GARBAGE":
		msg = "not json at all"
	case "CTO-RETRY", "CTO-ROLLBACK", "CTO-SKIP", "CTO-ESCALATE":
		b, _ := json.Marshal(ctoAnswer(inv, ctoText))
		msg = string(b)
	default:
		v, writeFile := verdictOf(inv.step)
		text := reviewText(inv, v)
		if writeFile {
			writeReview(inv, text)
		}
		b, _ := json.Marshal(answerOf(inv, v, text))
		msg = string(b)
		if inv.step == "RESULT-STR" {
			msg = "Here is my verdict:\n```json\n" + msg + "\n```"
		}
	}
	u := tokens()
	if os.Getenv("FAKE_REVIEW_TOKENS") == "" {
		u = usage{Input: 1234}
	}
	fmt.Fprintf(os.Stderr, "tokens used: %d\n", u.Input+u.Output+u.CacheRead+u.CacheCreation)
	if out := flagValue(inv.args, "-o", "--output-last-message"); out != "" {
		if err := os.WriteFile(out, []byte(msg+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "ERROR:", err)
			return 1
		}
	}
	fmt.Println(msg)
	return 0
}

// checkSchema rejects what the Responses API rejects in strict mode: every
// object, nested ones included, closed with additionalProperties false and
// all its properties required.
func checkSchema(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("failed to read output schema file %s: %v", path, err)
	}
	var s schemaNode
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Sprintf("output schema file %s is not valid JSON: %v", path, err)
	}
	if s.Type != "object" {
		return "invalid_json_schema: the root must be an object"
	}
	return s.strict("root")
}

// schemaNode is the part of a JSON Schema strict mode looks at.
type schemaNode struct {
	Type                 string                `json:"type"`
	Properties           map[string]schemaNode `json:"properties"`
	Required             []string              `json:"required"`
	AdditionalProperties *bool                 `json:"additionalProperties"`
	Items                *schemaNode           `json:"items"`
}

func (s schemaNode) strict(at string) string {
	if s.Items != nil {
		if msg := s.Items.strict(at + ".items"); msg != "" {
			return msg
		}
	}
	if s.Type != "object" {
		return ""
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		return fmt.Sprintf("invalid_json_schema: In context=(%s), 'additionalProperties' is required to be supplied and to be false", at)
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	for p, sub := range s.Properties {
		if !req[p] {
			return fmt.Sprintf("invalid_json_schema: In context=(%s), 'required' must include every property; missing %q", at, p)
		}
		if msg := sub.strict(at + "." + p); msg != "" {
			return msg
		}
	}
	return ""
}

// execValueFlags and execBoolFlags are the options of `codex exec`
// (@openai/codex 0.169.0).
var (
	execValueFlags = map[string]bool{
		"-c": true, "--config": true, "--enable": true, "--disable": true, "-i": true, "--image": true,
		"-m": true, "--model": true, "--local-provider": true, "-s": true, "--sandbox": true,
		"-p": true, "--profile": true, "-C": true, "--cd": true, "--add-dir": true,
		"--output-schema": true, "--color": true, "-o": true, "--output-last-message": true,
	}
	execBoolFlags = map[string]bool{
		"--oss": true, "--full-auto": true, "--dangerously-bypass-approvals-and-sandbox": true,
		"--skip-git-repo-check": true, "--ephemeral": true, "--json": true, "--ignore-rules": true,
		"--ignore-user-config": true, "--strict-config": true,
	}
)

// unknownExecArg returns the first argument `codex exec` would reject: an
// unknown option, an option missing its value, or a second prompt.
func unknownExecArg(args []string) string {
	prompts := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "-" || !strings.HasPrefix(a, "-"):
			if prompts++; prompts > 1 {
				return a
			}
		case execBoolFlags[a]:
		case execValueFlags[name] && hasValue && strings.HasPrefix(a, "--"):
		case execValueFlags[a] && i+1 < len(args):
			i++
		default:
			return a
		}
	}
	return ""
}
