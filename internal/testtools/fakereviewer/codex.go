package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func codex(inv invocation) int {
	if len(inv.args) == 0 || inv.args[0] != "exec" {
		fmt.Fprintln(os.Stderr, "fake codex: only `codex exec` is supported")
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
	case "SLEEP":
		return sleepForever()
	case "GARBAGE":
		msg = "not json at all"
	default:
		v, writeFile := verdictOf(inv.step)
		text := reviewText(inv, v)
		if writeFile {
			writeReview(inv, text)
		}
		b, _ := json.Marshal(verdict{Verdict: v, Review: text})
		msg = string(b)
		if inv.step == "RESULT-STR" {
			msg = "Here is my verdict:\n```json\n" + msg + "\n```"
		}
	}
	fmt.Fprintln(os.Stderr, "tokens used: 1234")
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
// object closed with additionalProperties false and all properties required.
func checkSchema(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("failed to read output schema file %s: %v", path, err)
	}
	var s struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Sprintf("output schema file %s is not valid JSON: %v", path, err)
	}
	if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
		return "invalid_json_schema: 'additionalProperties' is required to be supplied and to be false"
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	for p := range s.Properties {
		if !req[p] {
			return fmt.Sprintf("invalid_json_schema: 'required' must include every property; missing %q", p)
		}
	}
	return ""
}
