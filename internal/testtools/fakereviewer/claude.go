package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// claudeResult mirrors `claude -p --output-format json`.
type claudeResult struct {
	Type             string  `json:"type"`
	Subtype          string  `json:"subtype"`
	IsError          bool    `json:"is_error"`
	DurationMS       int64   `json:"duration_ms"`
	NumTurns         int     `json:"num_turns"`
	Result           any     `json:"result"`
	SessionID        string  `json:"session_id"`
	TotalCostUSD     float64 `json:"total_cost_usd"`
	Usage            usage   `json:"usage"`
	StructuredOutput any     `json:"structured_output,omitempty"`
}

// usage mirrors claude's token counts.
type usage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
}

// tokens reads FAKE_REVIEW_TOKENS, "input[,output[,cache_read[,cache_creation]]]";
// unset: 1200 input and 300 output tokens.
func tokens() usage {
	v := os.Getenv("FAKE_REVIEW_TOKENS")
	if v == "" {
		return usage{Input: 1200, Output: 300}
	}
	var n [4]int64
	for i, f := range strings.SplitN(v, ",", 4) {
		n[i], _ = strconv.ParseInt(strings.TrimSpace(f), 10, 64)
	}
	return usage{n[0], n[1], n[2], n[3]}
}

type verdict struct {
	Verdict string `json:"verdict"`
	Review  string `json:"review"`
}

// answerOf is the structured answer of a step: the findings only when the
// script gave some (an empty list included).
func answerOf(inv invocation, v, text string) any {
	if inv.findings == nil {
		return &verdict{Verdict: v, Review: text}
	}
	return &struct {
		Verdict  string    `json:"verdict"`
		Review   string    `json:"review"`
		Findings []finding `json:"findings"`
	}{v, text, inv.findings}
}

func claude(inv invocation) int {
	// The checks the real CLI makes before doing any work.
	if isSet("CLAUDECODE") {
		fmt.Fprintln(os.Stderr, "Error: Claude Code cannot be launched inside another Claude Code session.")
		return 1
	}
	if (hasArg(inv.args, "--dangerously-skip-permissions") || flagValue(inv.args, "--permission-mode") == "bypassPermissions") &&
		os.Geteuid() == 0 && os.Getenv("IS_SANDBOX") != "1" {
		fmt.Fprintln(os.Stderr, "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons")
		return 1
	}
	schema := flagValue(inv.args, "--json-schema")
	if schema != "" && !json.Valid([]byte(schema)) {
		fmt.Fprintln(os.Stderr, "Error: --json-schema is not valid JSON")
		return 1
	}

	res := claudeResult{
		Type: "result", Subtype: "success", DurationMS: 1234, NumTurns: 3,
		Result:       "Review written.",
		SessionID:    fmt.Sprintf("fake-%d", inv.run),
		TotalCostUSD: 0.0123,
		Usage:        tokens(),
	}
	if c, err := strconv.ParseFloat(os.Getenv("FAKE_REVIEW_COST"), 64); err == nil {
		res.TotalCostUSD = c
	}
	switch inv.step {
	case "CRASH":
		fmt.Println("partial output")
		fmt.Fprintln(os.Stderr, "fake claude: crashed on purpose")
		return 3
	case "GARBAGE":
		fmt.Println("not json at all")
		return 0
	case "ERROR":
		res.Subtype, res.IsError, res.Result = "error_max_turns", true, ""
		printJSON(res)
		return 0
	case "NOTLOGGEDIN":
		// What claude 2.1.x prints with --output-format json when it has no
		// credentials: a "success" subtype, is_error, and exit code 1.
		res.IsError, res.Result, res.DurationMS, res.NumTurns, res.TotalCostUSD, res.Usage = true, "Not logged in · Please run /login", 48, 1, 0, usage{}
		printJSON(res)
		return 1
	case "SLEEP":
		return sleepForever()
	}

	var out any
	if isCTOStep(inv.step) {
		out = ctoAnswer(inv, ctoText)
	} else {
		v, writeFile := verdictOf(inv.step)
		text := reviewText(inv, v)
		if writeFile {
			writeReview(inv, text)
		}
		out = answerOf(inv, v, text)
	}
	switch {
	case inv.step == "RESULT-OBJ":
		res.Result = out
	case inv.step == "RESULT-STR":
		b, _ := json.MarshalIndent(out, "", "  ")
		res.Result = "Here is my verdict:\n```json\n" + string(b) + "\n```\n"
	case schema != "":
		res.StructuredOutput = out
	}
	// Without --output-format json the real CLI prints only the result text.
	if flagValue(inv.args, "--output-format") != "json" {
		if s, ok := res.Result.(string); ok {
			fmt.Println(strings.TrimSpace(s))
		}
		return 0
	}
	printJSON(res)
	return 0
}
