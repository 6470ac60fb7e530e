package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/lifecycle"
	"github.com/taskie-dev/taskie/internal/workflow"
)

// diagramOpts are the options of `taskie diagram`.
type diagramOpts struct {
	s         *Streams
	lifecycle bool
}

func newDiagramCmd(s *Streams) *cobra.Command { return newDiagramCmdWith(s, runDiagram) }

func newDiagramCmdWith(s *Streams, run func(*diagramOpts) error) *cobra.Command {
	o := &diagramOpts{s: s}
	c := &cobra.Command{
		Use:   "diagram [--lifecycle]",
		Short: "Print the phase machine (or the task lifecycle machine) as a Mermaid state diagram",
		Long: `Print the plan's phase machine as a Mermaid stateDiagram-v2, one edge per
legal move. With --lifecycle, print the task lifecycle machine instead
(taskie help lifecycle): every legal move with why it exists, and the two overrides.`,
		Example: "  taskie diagram\n  taskie diagram --lifecycle",
		Args:    exactArgs(0, "no arguments"),
		RunE:    func(*cobra.Command, []string) error { return run(o) },
	}
	c.Flags().BoolVar(&o.lifecycle, "lifecycle", false, "print the task lifecycle machine")
	return c
}

func runDiagram(o *diagramOpts) error {
	if o.lifecycle {
		fmt.Fprint(o.s.Out, lifecycle.Mermaid())
		return nil
	}
	fmt.Fprint(o.s.Out, mermaid())
	return nil
}

// mermaid renders workflow.Table; ids use underscores since Mermaid state
// ids cannot contain dashes.
func mermaid() string {
	id := func(p domain.Phase) string { return strings.ReplaceAll(string(p), "-", "_") }
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for _, p := range domain.Phases {
		fmt.Fprintf(&b, "    state \"%s\" as %s\n", p, id(p))
	}
	fmt.Fprintf(&b, "    [*] --> %s\n", id(domain.NewPlan))
	for _, m := range workflow.Table {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", id(m.From), id(m.To), m.Why)
	}
	fmt.Fprintf(&b, "    %s --> [*]\n", id(domain.Complete))
	return b.String()
}
