package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/taskie-dev/taskie/internal/domain"
	"github.com/taskie-dev/taskie/internal/events"
	"github.com/taskie-dev/taskie/internal/history"
	"github.com/taskie-dev/taskie/internal/project"
)

func newHistoryCmd(s *Streams, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "history [task]",
		Short: "List a plan's events in order, or those of one task",
		Long: `List the events of a plan's events.jsonl in order, one per line:
time (RFC 3339), event, task, from → to, and the reason and details.
Columns are aligned on a terminal and tab-separated otherwise.
An unreadable line (a torn write) is skipped with a warning.`,
		Example: "  taskie history\n  taskie history 3 --json",
		Args:    maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := g.openPlan("")
			if err != nil {
				return err
			}
			var task domain.TaskID // 0: every task
			if len(args) == 1 {
				if task, err = p.TaskID(args[0]); err != nil {
					return usageErr(err, "")
				}
			}
			var w eventWriter
			switch {
			case asJSON:
				w = &jsonArray{}
			case s.TTY:
				w = &tableWriter{}
			default:
				w = &tsvWriter{}
			}
			return streamEvents(s, p, task, w)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of the events")
	return c
}

// eventWriter prints a stream of events in one format.
type eventWriter interface {
	start(out io.Writer)
	write(e events.Event) error
	end() error
}

// streamEvents reads the plan's events (of one task when task is not 0)
// and hands them to w as they are read; torn lines are warnings.
func streamEvents(s *Streams, p *project.Plan, task domain.TaskID, w eventWriter) error {
	out := bufio.NewWriter(s.Out)
	w.start(out)
	var werr error
	err := p.Store.Scan(p.ID, func(e events.Event) {
		if werr == nil && (task == 0 || e.Task == task.String()) {
			werr = w.write(e)
		}
	}, func(msg string) { fmt.Fprintf(s.Err, "taskie: warning: %s\n", msg) })
	if err == nil {
		err = werr
	}
	if err == nil {
		err = w.end()
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err == nil && !p.Exists(events.FileName) {
		fmt.Fprintf(s.Err, "plan %s has no %s yet\n", p.ID, events.FileName)
	}
	return err
}

// tsvWriter prints history rows tab-separated (for pipes).
type tsvWriter struct{ w io.Writer }

func (t *tsvWriter) start(out io.Writer) { t.w = out }
func (t *tsvWriter) end() error          { return nil }
func (t *tsvWriter) write(e events.Event) error {
	_, err := fmt.Fprintln(t.w, strings.Join(history.HistoryRow(e).Cells(), "\t"))
	return err
}

// tableWriter aligns history rows (for a terminal).
type tableWriter struct{ tw *tabwriter.Writer }

func (t *tableWriter) start(out io.Writer) { t.tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0) }
func (t *tableWriter) end() error          { return t.tw.Flush() }
func (t *tableWriter) write(e events.Event) error {
	_, err := fmt.Fprintln(t.tw, strings.Join(history.HistoryRow(e).Cells(), "\t"))
	return err
}

// jsonArray prints values as one indented JSON array, streamed.
type jsonArray struct {
	w   io.Writer
	n   int
	val func(events.Event) any // nil: the event itself
}

func (j *jsonArray) start(out io.Writer) { j.w = out }
func (j *jsonArray) write(e events.Event) error {
	var v any = e
	if j.val != nil {
		v = j.val(e)
	}
	b, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return err
	}
	sep := ",\n  "
	if j.n == 0 {
		sep = "[\n  "
	}
	j.n++
	_, err = fmt.Fprintf(j.w, "%s%s", sep, b)
	return err
}

func (j *jsonArray) end() error {
	if j.n == 0 {
		_, err := io.WriteString(j.w, "[]\n")
		return err
	}
	_, err := io.WriteString(j.w, "\n]\n")
	return err
}
