package plan

import (
	"fmt"
	"os"

	"github.com/taskie-dev/taskie/internal/fsafe"
)

// Validate reads the plan directory dir and checks every rule, as the
// store does from its snapshot (the tests build no snapshot); see
// ValidateListing.
func Validate(dir string, checkState func(data []byte) []string) []Violation {
	in := Listing{Dir: dir}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []Violation{{Rule: 1, File: "plan.md", Severity: SeverityError, Msg: fmt.Sprintf("cannot read the plan directory: %v", err)}}
	}
	for _, e := range entries {
		in.Entries = append(in.Entries, ListEntry{Name: e.Name(), Mode: e.Type()})
	}
	// Through the safe file layer: no link out of the directory, no FIFO,
	// each file within its size limit.
	if root, err := fsafe.Open(dir); err == nil {
		defer root.Close()
		if data, err := root.ReadFile("tasks.md"); err == nil {
			in.Tasks, in.HasTasks = data, true
		}
		if data, err := root.ReadFile("state.json"); err == nil {
			in.State, in.HasState = data, true
		}
	}
	return ValidateListing(in, checkState)
}
