package hook

import (
	"encoding/json"
	"fmt"
	"io"
)

// Output formats for a block (docs/hook.md#output-contract).
const (
	FormatExit2 = "exit2" // exit 2, reason on stderr: works for plugin hooks on every Claude Code version
	FormatJSON  = "json"  // {"decision":"block","reason":…} on stdout, exit 0
)

// Result is what one hook call answers.
type Result struct {
	Block   bool
	Reason  string // block reason, shown to the agent
	Message string // systemMessage shown to the user on allow
	// needsMemory marks a block whose repetition is bounded only by the
	// session memory (validation, reminders): if that memory cannot be
	// saved, the block becomes a message rather than a possible loop.
	needsMemory bool
}

// Allow lets the agent stop, optionally with a message for the user.
func Allow(msg string) Result { return Result{Message: msg} }

// Write encodes r and returns the exit code. Nothing but the decision ever
// goes to stdout.
func (r Result) Write(stdout, stderr io.Writer, format string) int {
	if r.Block {
		if format == FormatJSON {
			writeObj(stdout, map[string]string{"decision": "block", "reason": r.Reason})
			return 0
		}
		fmt.Fprintln(stderr, r.Reason)
		return 2
	}
	if r.Message != "" {
		writeObj(stdout, map[string]string{"systemMessage": r.Message})
	}
	return 0
}

func writeObj(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s\n", b)
}
