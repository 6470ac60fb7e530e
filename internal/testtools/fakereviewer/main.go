// Command fakereviewer stands in for the claude and codex CLIs in tests.
// Install it on PATH as "claude" or "codex"; it picks its mode from its
// name and prints what the real CLI prints.
//
// Environment:
//
//	FAKE_REVIEW_SCRIPT  file with one step per line (default: PASS)
//	FAKE_REVIEW_STATE   counter file (default: FAKE_REVIEW_SCRIPT + ".n")
//	FAKE_REVIEW_LOG     append one JSON line per run
//	FAKE_REVIEW_DELAY   wait this long (a Go duration) before answering
//	FAKE_REVIEW_COST    claude's total_cost_usd (default 0.0123)
//	FAKE_REVIEW_TOKENS  the tokens reported, "input[,output[,cache_read[,cache_creation]]]"
//	                    (default: claude 1200 input and 300 output; codex
//	                    "tokens used: 1234"; codex prints the sum)
//
// Steps: PASS, FAIL (write the review file named in the prompt),
// PASS-NOFILE, FAIL-NOFILE (review text only), EMPTY (no file, no text),
// BLANK (a blank review file, blank text), PASS-BLANKFILE (an empty review
// file, real text), PASS-NOTEXT (a review file, empty text), CRASH (exit 3),
// GARBAGE (non-JSON output), ERROR (claude: is_error result; codex: exit 1),
// NOTLOGGEDIN (claude: the is_error answer and exit 1 of a CLI that is not
// logged in), NOMESSAGE (codex: a failed turn, an empty -o file, exit 1),
// SLEEP (sleep an hour, with a child `sleep 3600`), RESULT-OBJ, RESULT-STR
// (claude: verdict in .result as an object / a fenced JSON string; codex:
// plain / fenced final message). When the script runs out, the last step
// repeats. CTO-RETRY, CTO-ROLLBACK, CTO-SKIP and CTO-ESCALATE answer a
// CTO review's decision (see cto.go).
//
// Findings (docs/ledger.md): a step followed by a JSON array answers with those
// findings, e.g.
//
//	FAIL [{"severity":"major","title":"error ignored","file":"b.go","line":20}]
//	PASS [{"id":"F1","status":"fixed"}]
//	PASS []
//
// Missing fields take the schema's "none" values (id "", file "", line 0,
// status "open", severity "major"), so the answer carries every field, as
// a strict-mode schema makes the real CLIs do. A step without an array
// answers without "findings", like a reviewer that does not track them.
// The ids of the findings on record listed in the prompt are logged
// (prompt_ids).
//
// As codex, it rejects an option `codex exec` does not know, as the real
// CLI's argument parser does.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ctoText is the text after a CTO step's keyword (its guidance).
var ctoText string

func main() {
	os.Exit(run())
}

// logRecord is one FAKE_REVIEW_LOG line.
type logRecord struct {
	Name             string   `json:"name"`
	Args             []string `json:"args"`
	Model            string   `json:"model"`
	Effort           string   `json:"effort,omitempty"`
	PID              int      `json:"pid"`
	EnvClaudeCode    bool     `json:"env_CLAUDECODE"`
	EnvEntrypoint    bool     `json:"env_CLAUDE_CODE_ENTRYPOINT"`
	EnvTaskieHookSkp string   `json:"env_TASKIE_HOOK_SKIP"`
	StdinLen         int      `json:"stdin_len"`
	ReviewFile       string   `json:"review_file"`
	Step             string   `json:"step"`
	Run              int      `json:"run"`
	Cwd              string   `json:"cwd"`
	ChildPID         int      `json:"child_pid,omitempty"`
	PromptIDs        []string `json:"prompt_ids,omitempty"`
	// PromptFiles are the review and post-review files the prompt names
	// (base names, in order): what a CTO review is given to read.
	PromptFiles []string `json:"prompt_files,omitempty"`
}

// invocation is what one run of the fake knows.
type invocation struct {
	name       string
	args       []string
	step       string
	findings   []finding // nil: answer without "findings"
	run        int       // 1-based
	reviewFile string
}

func run() int {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	args := os.Args[1:]
	// Like the real CLIs, read the prompt to EOF: a client that leaves
	// stdin open hangs here.
	prompt, _ := io.ReadAll(os.Stdin)
	n, step, extra, err := nextStep()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakereviewer:", err)
		return 2
	}
	var fs []finding
	if isCTOStep(step) {
		ctoText = extra
	} else if fs, err = parseFindings(extra); err != nil {
		fmt.Fprintf(os.Stderr, "fakereviewer: step %d: %v\n", n, err)
		return 2
	}
	inv := invocation{name: name, args: args, step: step, findings: fs, run: n, reviewFile: findReviewFile(string(prompt))}
	return answer(inv, prompt)
}

// answer logs the run and answers as the CLI it stands for.
func answer(inv invocation, prompt []byte) int {
	name, args, step, n := inv.name, inv.args, inv.step, inv.run

	rec := logRecord{
		Name:             name,
		Args:             args,
		Model:            flagValue(args, "--model", "-m"),
		Effort:           configValue(args, "model_reasoning_effort"),
		PID:              os.Getpid(),
		EnvClaudeCode:    isSet("CLAUDECODE"),
		EnvEntrypoint:    isSet("CLAUDE_CODE_ENTRYPOINT"),
		EnvTaskieHookSkp: os.Getenv("TASKIE_HOOK_SKIP"),
		StdinLen:         len(prompt),
		ReviewFile:       inv.reviewFile,
		Step:             step,
		Run:              n,
		PromptIDs:        promptIDs(string(prompt)),
		PromptFiles:      promptFiles(string(prompt)),
	}
	rec.Cwd, _ = os.Getwd()
	if step == "SLEEP" {
		rec.ChildPID = startChild()
	}
	writeLog(rec)
	// FAKE_REVIEW_DELAY makes a review take time, for races with other commands.
	if d, err := time.ParseDuration(os.Getenv("FAKE_REVIEW_DELAY")); err == nil {
		time.Sleep(d)
	}

	switch name {
	case "claude":
		return claude(inv)
	case "codex":
		return codex(inv)
	}
	fmt.Fprintf(os.Stderr, "fakereviewer: unknown name %q (want claude or codex)\n", name)
	return 2
}

// nextStep returns the 1-based run number, its step and the text after the
// step's keyword, and advances the counter.
func nextStep() (int, string, string, error) {
	script := os.Getenv("FAKE_REVIEW_SCRIPT")
	if script == "" {
		return 1, "PASS", "", nil
	}
	data, err := os.ReadFile(script)
	if err != nil {
		return 0, "", "", err
	}
	var steps []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			steps = append(steps, l)
		}
	}
	if len(steps) == 0 {
		return 0, "", "", fmt.Errorf("%s: no steps", script)
	}
	state := os.Getenv("FAKE_REVIEW_STATE")
	if state == "" {
		state = script + ".n"
	}
	i := 0
	if b, err := os.ReadFile(state); err == nil {
		i, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if err := os.WriteFile(state, []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
		return 0, "", "", err
	}
	step, extra, _ := strings.Cut(steps[min(i, len(steps)-1)], " ")
	return i + 1, strings.ToUpper(step), strings.TrimSpace(extra), nil
}

var (
	quotedReview = regexp.MustCompile("`([^`\n]*-review-[0-9]+\\.md)`")
	bareReview   = regexp.MustCompile(`\S*-review-[0-9]+\.md`)
)

// promptFiles lists the base names of the review files the prompt names.
func promptFiles(prompt string) []string {
	var out []string
	for _, m := range quotedReview.FindAllStringSubmatch(prompt, -1) {
		out = append(out, filepath.Base(m[1]))
	}
	return out
}

// findReviewFile returns the first review file path named in the prompt.
func findReviewFile(prompt string) string {
	if m := quotedReview.FindStringSubmatch(prompt); m != nil {
		return m[1]
	}
	return bareReview.FindString(prompt)
}

func flagValue(args []string, names ...string) string {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok {
				return v
			}
		}
	}
	return ""
}

// configValue returns the value of key set with `-c key=value`, unquoted.
func configValue(args []string, key string) string {
	v := ""
	for i, a := range args {
		if (a == "-c" || a == "--config") && i+1 < len(args) {
			if val, ok := strings.CutPrefix(args[i+1], key+"="); ok {
				v = strings.Trim(val, `"'`)
			}
		}
	}
	return v
}

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

func isSet(key string) bool {
	_, ok := os.LookupEnv(key)
	return ok
}

func writeLog(rec logRecord) {
	path := os.Getenv("FAKE_REVIEW_LOG")
	if path == "" {
		return
	}
	b, _ := json.Marshal(rec)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakereviewer:", err)
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

// startChild starts `sleep 3600` sharing our output, like a tool a real
// reviewer left running; tests check it dies with the process group.
func startChild() int {
	path, err := exec.LookPath("sleep")
	if err != nil {
		return 0
	}
	c := exec.Command(path, "3600")
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if c.Start() != nil {
		return 0
	}
	return c.Process.Pid
}

// verdictOf returns the verdict and whether the step writes the file.
func verdictOf(step string) (verdict string, writeFile bool) {
	switch step {
	case "FAIL":
		return "FAIL", true
	case "FAIL-NOFILE":
		return "FAIL", false
	case "PASS-NOFILE", "EMPTY":
		return "PASS", false
	}
	// BLANK, PASS-BLANKFILE and PASS-NOTEXT write a file: see writeReview.
	return "PASS", true
}

// reviewText is the review the fake "wrote".
func reviewText(inv invocation, verdict string) string {
	switch inv.step {
	case "EMPTY", "PASS-NOTEXT":
		return ""
	case "BLANK":
		return " \n\t\n"
	}
	finding := "No findings."
	switch {
	case len(inv.findings) > 0:
		finding = findingsText(inv.findings)
	case verdict == "FAIL":
		finding = "1. [major] fake finding: the fake reviewer was told to fail."
	}
	return fmt.Sprintf("# Fake review (%s, run %d, step %s)\n\n## Summary\nFake review.\n\n## Findings\n%s\n\n## Verdict\n%s\n",
		inv.name, inv.run, inv.step, finding, verdict)
}

// writeReview writes the review file without overwriting, as the prompt
// asks.
func writeReview(inv invocation, text string) {
	if inv.reviewFile == "" {
		fmt.Fprintln(os.Stderr, "fakereviewer: no review file path in the prompt")
		return
	}
	f, err := os.OpenFile(inv.reviewFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakereviewer:", err)
		return
	}
	defer f.Close()
	switch inv.step {
	case "BLANK":
		f.WriteString("\n  \n")
	case "PASS-BLANKFILE":
		// Created and left empty, as by a reviewer that failed mid-write.
	case "PASS-NOTEXT":
		f.WriteString(reviewText(invocation{name: inv.name, run: inv.run, step: "PASS"}, "PASS"))
	default:
		f.WriteString(text)
	}
}

func sleepForever() int {
	time.Sleep(time.Hour)
	return 0
}

func printJSON(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}
