package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/continuity"
	"github.com/taskie-dev/taskie/internal/domain"
)

// contextOpts are the options of `taskie context`.
type contextOpts struct {
	s            *Streams
	g            *globals
	task         string
	asJSON, size bool
}

// contextView is `taskie context --json`: the data, and the size of the
// text it renders to.
type contextView struct {
	*continuity.Brief
	Bytes  int               `json:"bytes"`
	Budget int               `json:"budget"`
	Parts  []continuity.Part `json:"parts"`
}

func newContextCmd(s *Streams, g *globals) *cobra.Command { return newContextCmdWith(s, g, runContext) }

func newContextCmdWith(s *Streams, g *globals, run func(*contextOpts) error) *cobra.Command {
	o := &contextOpts{s: s, g: g}
	c := &cobra.Command{
		Use:   "context [task]",
		Short: "Print the smallest context a fresh session needs (under 2 KB)",
		Long: `Print what a fresh session needs to resume: the plan's phase and next phase,
the task's title and requirements, its unchecked acceptance criteria, its chain
inputs (the chain outputs of the tasks it depends on), the last two Progress Log
entries, and the exact next step as ` + "`taskie continue`" + ` says it. Long parts are
clipped with a link to the file; rarely needed documents are named by path.
The task defaults to current_task, else the task in progress, else the next
pending one. Nothing is written.`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.task = firstArg(args)
			return run(o)
		},
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON (the data, unclipped, with the text's size)")
	c.Flags().BoolVar(&o.size, "size", false, "print the size of each part of the context instead of the text")
	return c
}

func runContext(o *contextOpts) error {
	s, arg := o.s, o.task
	p, err := o.g.openPlan("")
	if err != nil {
		return err
	}
	var task domain.TaskID // 0: the plan's current task
	if arg != "" {
		if task, err = p.TaskID(arg); err != nil {
			return usageErr(err, "")
		}
	}
	b, err := continuity.Context(p, task)
	if err != nil {
		return stateErr(p, err)
	}
	parts := b.Parts(continuity.Budget)
	total := 0
	for _, pt := range parts {
		total += pt.Size
	}
	switch {
	case o.asJSON:
		return writeJSON(s.Out, contextView{Brief: b, Bytes: total, Budget: continuity.Budget, Parts: parts})
	case o.size:
		printSizes(s.Out, parts, total)
	default:
		for _, pt := range parts {
			fmt.Fprint(s.Out, pt.Text)
		}
	}
	return nil
}

// printSizes is the size report: bytes per part, before and after
// clipping, and the total against the budget.
func printSizes(w io.Writer, parts []continuity.Part, total int) {
	fmt.Fprintf(w, "%-13s %6s %6s\n", "part", "bytes", "full")
	full := 0
	for _, pt := range parts {
		note := ""
		if pt.Clipped() {
			note = "  clipped"
		}
		fmt.Fprintf(w, "%-13s %6d %6d%s\n", pt.Name, pt.Size, pt.Full, note)
		full += pt.Full
	}
	fmt.Fprintf(w, "%-13s %6d %6d  budget %d\n", "total", total, full, continuity.Budget)
}
