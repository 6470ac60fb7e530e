package lifecycle

import "strings"

// Mermaid prints the machine as a Mermaid stateDiagram-v2, one edge per
// table row labelled with its why, and a note on the two overrides.
func Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    [*] --> " + string(Pending) + "\n")
	for _, tr := range machine().rows {
		b.WriteString("    " + string(tr.From) + " --> " + string(tr.To) + ": " + tr.Why + "\n")
	}
	b.WriteString("    " + string(Completed) + " --> [*]\n")
	b.WriteString("    " + string(Abandoned) + " --> [*]\n")
	b.WriteString("    note right of " + string(CTOIntervention) + "\n")
	b.WriteString("        Overrides outside the table:\n")
	b.WriteString("        rollback (cto or human) to an earlier working state,\n")
	b.WriteString("        skip (cto only) past the state a task is stuck in.\n")
	b.WriteString("    end note\n")
	return b.String()
}
