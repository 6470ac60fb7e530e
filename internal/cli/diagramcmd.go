package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/workflow"
)

func newDiagramCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "diagram",
		Short: "Print the phase machine as a Mermaid state diagram",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprint(s.Out, mermaid())
			return nil
		},
	}
}

// mermaid renders workflow.Table; ids use underscores since Mermaid state
// ids cannot contain dashes.
func mermaid() string {
	id := func(p domain.Phase) string { return strings.ReplaceAll(string(p), "-", "_") }
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for _, p := range workflow.Phases {
		fmt.Fprintf(&b, "    state \"%s\" as %s\n", p, id(p))
	}
	fmt.Fprintf(&b, "    [*] --> %s\n", id(domain.NewPlan))
	for _, m := range workflow.Table {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", id(m.From), id(m.To), m.Why)
	}
	fmt.Fprintf(&b, "    %s --> [*]\n", id(domain.Complete))
	return b.String()
}
